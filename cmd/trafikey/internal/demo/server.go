package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/executor"
	"github.com/trafikey/trafikey/internal/repo"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// ModuleFile is the file name the demo looks for when no module is given.
const ModuleFile = "trafikey.so"

// FindModule returns the module to load when none is given: trafikey.so
// next to the running binary, else build/trafikey.so in the repository that
// holds the working directory (where scripts/demo.sh builds it). It returns
// "" when there is neither.
func FindModule() string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), ModuleFile)
		if isFile(p) {
			return p
		}
	}
	root, err := repo.Root()
	if err != nil {
		return ""
	}
	if p := filepath.Join(root, "build", ModuleFile); isFile(p) {
		return p
	}
	return ""
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// StartServer starts a local valkey-server on a free loopback port, with
// module loaded when it is not empty. When the module was found rather than
// asked for (required false) and the server will not start with it, it
// says so on warn and starts one without it.
func StartServer(ctx context.Context, module string, required bool, warn io.Writer) (*valkeyserver.Server, error) {
	if module == "" {
		return valkeyserver.Start(ctx, valkeyserver.Options{})
	}
	s, err := valkeyserver.Start(ctx, valkeyserver.Options{Module: module})
	if err == nil || required {
		return s, err
	}
	fmt.Fprintf(warn, "demo: valkey-server did not start with %s; using the Lua executor\n%v\n", module, err)
	return valkeyserver.Start(ctx, valkeyserver.Options{})
}

// ChooseExecutor returns the executor named by name: "lua", "native", or
// "auto" (native when the server's module answers EMQ.VERSION and registers
// every job-core verb, else Lua). The second result explains a fallback.
func ChooseExecutor(ctx context.Context, client valkey.Client, name string) (trafikey.Executor, string, error) {
	switch name {
	case "lua":
		return trafikey.ExecutorLua, "", nil
	case "native", "auto":
		missing := executor.Missing(ctx, client)
		if missing == "" {
			return trafikey.ExecutorNative, "", nil
		}
		if name == "native" {
			return "", "", errors.New("demo: the native executor needs the trafikey module: " + missing)
		}
		return trafikey.ExecutorLua, missing, nil
	}
	return "", "", fmt.Errorf("demo: executor %q is not lua, native or auto", name)
}
