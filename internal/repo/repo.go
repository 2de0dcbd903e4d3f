// Package repo finds the trafikey repository a command or test runs in.
package repo

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
)

// Module is the module path of the repository's root go.mod. The CLI, the
// benchmark and the adapters are modules of their own in subdirectories, so
// the nearest go.mod is not always the root's.
const Module = "github.com/trafikey/trafikey"

// ErrNotFound is Root's error when no directory above the working one holds
// the root go.mod.
var ErrNotFound = errors.New("no go.mod of " + Module + " above the working directory; run from the repository")

// Root walks up from the working directory to the nearest directory whose
// go.mod declares Module, and returns it.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNotFound
		}
		dir = parent
	}
}

// isRoot reports whether the go.mod at path declares Module.
func isRoot(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := bytes.Fields(sc.Bytes()); len(f) == 2 && string(f[0]) == "module" {
			return string(f[1]) == Module
		}
	}
	return false
}
