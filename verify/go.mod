module github.com/trafikey/trafikey/verify

go 1.25.0

require (
	github.com/trafikey/trafikey v0.0.0
	github.com/valkey-io/valkey-go v1.0.79
	pgregory.net/rapid v1.3.0
)

require (
	github.com/stretchr/testify v1.12.1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

// Nothing is published yet: the module builds against the checkout it
// lives in.
replace github.com/trafikey/trafikey => ..
