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

func TestRootNotFound(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := os.Stat(filepath.Join(filepath.Dir(t.TempDir()), "go.mod")); err == nil {
		t.Skip("a go.mod above the temporary directory")
	}
	_, err := Root()
	require.ErrorIs(t, err, ErrNotFound)
}
