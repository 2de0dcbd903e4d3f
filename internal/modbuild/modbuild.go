// Package modbuild builds the trafikey module (module/, a c-shared object)
// for the servers that tests, test helpers and the benchmark start.
package modbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Package is the import path of the module's source.
const Package = "github.com/trafikey/trafikey/module"

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

// Cached returns the path of Package built as Build builds it, from a cache
// shared by every process of the user: the go command links a c-shared
// object again on each build (only compiles are cached), which costs
// seconds on an idle machine and close to a minute when every test binary
// of a run links at once. An entry is keyed by the content of every source
// file of Package and of its dependencies outside the standard library and
// by the toolchain and cgo settings, so a change to any of them builds a new
// one. A file lock makes the processes that miss the same key build it
// once: the others wait for it.
func Cached(ctx context.Context, workDir string) (string, error) {
	key, err := Key(ctx, workDir)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cacheRoot(), key)
	path := filepath.Join(dir, "trafikey.so")
	if use(path) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(ctx, dir+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if use(path) { // built while this process waited for the lock
		return path, nil
	}
	prune(cacheRoot(), key)
	return Build(ctx, workDir, dir)
}

// staleAfter is how long an entry no process has used stays in the cache.
const staleAfter = 7 * 24 * time.Hour

// cacheRoot is the cache's directory: trafikey/module under the user's
// cache directory, or under the temporary directory when there is none.
func cacheRoot() string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "trafikey", "module")
}

// use reports whether the built module at path exists, and marks it used
// now, which keeps prune from removing it.
func use(path string) bool {
	if _, err := os.Stat(path); err != nil {
		return false
	}
	now := time.Now()
	_ = os.Chtimes(path, now, now)
	return true
}

// prune removes the entries of root other than key's that no process has
// used for staleAfter, with their lock files; it runs before a build, so
// the cache keeps about one entry per source tree built in that time.
func prune(root, key string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == key {
			continue
		}
		dir := filepath.Join(root, e.Name())
		fi, err := os.Stat(filepath.Join(dir, "trafikey.so"))
		if err == nil && time.Since(fi.ModTime()) < staleAfter {
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			// no module (yet): a build under way, or one that failed
			if fi, err := os.Stat(dir); err != nil || time.Since(fi.ModTime()) < staleAfter {
				continue
			}
		}
		_ = os.RemoveAll(dir)
		_ = os.Remove(dir + ".lock")
	}
}

// listFormat prints, for each package Package is built from outside the
// standard library, its import path, directory and source files, one per
// line, and a line of "." between packages.
const listFormat = `{{if not .Standard}}{{.ImportPath}}
{{.Dir}}
{{range .GoFiles}}{{.}}
{{end}}{{range .CgoFiles}}{{.}}
{{end}}{{range .CFiles}}{{.}}
{{end}}{{range .CXXFiles}}{{.}}
{{end}}{{range .HFiles}}{{.}}
{{end}}{{range .SFiles}}{{.}}
{{end}}{{range .SysoFiles}}{{.}}
{{end}}{{range .EmbedFiles}}{{.}}
{{end}}.
{{end}}`

// envVars are the go command's settings a build's output depends on beyond
// the sources.
var envVars = []string{"GOVERSION", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "GOEXPERIMENT", "GOFLAGS",
	"CC", "CXX", "CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS"}

// Key is the cache key of Package as the go command run in workDir
// resolves it: a hash of the go command's settings (envVars) and of every
// source file of Package and of its dependencies outside the standard
// library, each with its package and name.
func Key(ctx context.Context, workDir string) (string, error) {
	h := sha256.New()
	env, err := goCmd(ctx, workDir, append([]string{"env"}, envVars...)...)
	if err != nil {
		return "", err
	}
	h.Write(env)
	list, err := goCmd(ctx, workDir, "list", "-deps", "-f", listFormat, Package)
	if err != nil {
		return "", err
	}
	h.Write(list)
	for _, pkg := range strings.Split(string(list), "\n.\n") {
		lines := strings.Split(strings.TrimSpace(pkg), "\n")
		if len(lines) < 2 {
			continue
		}
		for _, name := range lines[2:] {
			if err := hashFile(h, filepath.Join(lines[1], name)); err != nil {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// hashFile writes the file's path, length and content to w.
func hashFile(w io.Writer, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s %d\n", path, len(b))
	_, err = w.Write(b)
	return err
}

// goCmd runs the go command in dir with cgo on, as Build does, and returns
// its standard output.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
