package trafikeytest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// modulePackage is the import path of the native executor's source.
const modulePackage = "github.com/trafikey/trafikey/module"

var (
	buildOnce   sync.Once
	builtModule string
	buildErr    error
)

// BuildModule builds the trafikey module from the trafikey version the
// calling module requires (with `go build -buildmode=c-shared`, which needs
// cgo and a C compiler) and returns the path of the built file, for
// WithModule. It builds once per process; the Go build cache makes later
// processes fast.
func BuildModule(ctx context.Context) (string, error) {
	buildOnce.Do(func() { builtModule, buildErr = build(ctx) })
	return builtModule, buildErr
}

func build(ctx context.Context) (string, error) {
	// The source directory names the version: one output per version, so
	// processes of different checkouts never share a file.
	dir, err := goOutput(ctx, "list", "-f", "{{.Dir}}", modulePackage)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(dir))
	outDir := filepath.Join(os.TempDir(), "trafikeytest-module-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", err
	}
	// Each process builds into a file of its own and renames it into place,
	// so a module a running server has loaded is never rewritten.
	tmp, err := os.CreateTemp(outDir, "build-*.so")
	if err != nil {
		return "", err
	}
	tmp.Close()
	if _, err := goOutput(ctx, "build", "-buildmode=c-shared", "-o", tmp.Name(), modulePackage); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	os.Remove(trimExt(tmp.Name()) + ".h")
	// valkey-server refuses to load a module without the execute bit.
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(outDir, "trafikey.so")
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", err
	}
	return out, nil
}

func goOutput(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("trafikeytest: go %v: %w\n%s", args, err, stderr.Bytes())
	}
	return string(bytes.TrimSpace(out)), nil
}

func trimExt(p string) string { return p[:len(p)-len(filepath.Ext(p))] }
