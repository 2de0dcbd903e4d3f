// Package repo finds the trafikey repository a command or test runs in.
package repo

import (
	"errors"
	"os"
	"path/filepath"
)

// ErrNotFound is Root's error when no directory above the working one holds
// a go.mod.
var ErrNotFound = errors.New("no go.mod above the working directory; run from the repository")

// Root walks up from the working directory to the nearest directory that
// holds a go.mod, and returns it.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNotFound
		}
		dir = parent
	}
}
