package repo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRoot(t *testing.T) {
	root, err := Root()
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "go.mod"))
	require.FileExists(t, filepath.Join(root, "internal", "repo", "repo.go"), "the root is this repository's")
}

func TestRootFromNestedModule(t *testing.T) {
	root, err := Root()
	require.NoError(t, err)
	// A test of the CLI's module runs in cmd/trafikey, which has a go.mod of
	// its own: the root is still the repository's.
	t.Chdir(filepath.Join(root, "cmd", "trafikey"))
	got, err := Root()
	require.NoError(t, err)
	require.Equal(t, root, got)
}

func TestRootNotFound(t *testing.T) {
	// A go.mod of another module is passed by.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o644))
	t.Chdir(dir)
	if isRoot(filepath.Join(filepath.Dir(dir), "go.mod")) || isRoot("/go.mod") {
		t.Fatalf("a go.mod of %s above the temporary directory %s", Module, dir)
	}
	_, err := Root()
	require.ErrorIs(t, err, ErrNotFound)
}
