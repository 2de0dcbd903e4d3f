// Package modbuild builds the trafikey module (module/, a c-shared object)
// for the servers that tests, test helpers and the benchmark start.
package modbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Package is the import path of the module's source.
const Package = "github.com/trafikey/trafikey/module"

// Dir is the output directory under the temporary directory for key (a
// checkout or a source directory): one place per key, so repeated runs do
// not pile up copies.
func Dir(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(os.TempDir(), "trafikey-module-"+hex.EncodeToString(sum[:6]))
}

// Build builds Package, as the go command run in workDir resolves it ("" is
// the working directory), into outDir/trafikey.so and returns that path.
// It builds into a directory of its own and renames the result into place,
// which leaves a module that a running server has loaded untouched.
func Build(ctx context.Context, workDir, outDir string) (string, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(outDir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	built := filepath.Join(tmp, "trafikey.so")
	cmd := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-o", built, Package)
	cmd.Dir = workDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	// valkey-server refuses to load a module without the execute bit.
	if err := os.Chmod(built, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(outDir, "trafikey.so")
	if err := os.Rename(built, path); err != nil {
		return "", err
	}
	return path, nil
}
