package trafikeytest

import (
	"context"
	"fmt"
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
// WithModule. It builds once per process, into a cache under the user's
// cache directory keyed by the module's sources: later processes, and
// processes running at the same time, load the same file.
func BuildModule(ctx context.Context) (string, error) {
	buildOnce.Do(func() { builtModule, buildErr = build(ctx) })
	return builtModule, buildErr
}

func build(ctx context.Context) (string, error) {
	path, err := modbuild.Cached(ctx, "")
	if err != nil {
		return "", fmt.Errorf("trafikeytest: %w", err)
	}
	return path, nil
}
