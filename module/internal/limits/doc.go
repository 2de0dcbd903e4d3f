// Package limits keeps the module's functions small: its test fails when a
// function of module/ (its packages included, tests excluded) is longer than
// MaxLines lines or has a cyclomatic complexity over MaxComplexity, counted
// as gocyclo counts it. It has no code but these bounds.
package limits

// The bounds: a function is at most a page, and at most this many paths.
const (
	MaxLines      = 80
	MaxComplexity = 25
)
