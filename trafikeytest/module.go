package trafikeytest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"sync"

	"github.com/trafikey/trafikey/internal/modbuild"
)

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
	cmd := exec.CommandContext(ctx, "go", "list", "-f", "{{.Dir}}", modbuild.Package)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("trafikeytest: go list %s: %w\n%s", modbuild.Package, err, stderr.Bytes())
	}
	dir := string(bytes.TrimSpace(out))
	path, err := modbuild.Build(ctx, "", modbuild.Dir(dir))
	if err != nil {
		return "", fmt.Errorf("trafikeytest: %w", err)
	}
	return path, nil
}
