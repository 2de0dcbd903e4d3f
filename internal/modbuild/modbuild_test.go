package modbuild

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Processes that miss the same key build it once: a second lock waits for
// the first to be released.
func TestLockExcludes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("lock is a no-op without flock(2)")
	}
	path := filepath.Join(t.TempDir(), "k.lock")
	unlock, err := lock(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := lock(ctx, path); err == nil {
		t.Fatal("a second lock was taken while the first was held")
	}
	unlock()
	unlock2, err := lock(t.Context(), path)
	if err != nil {
		t.Fatalf("the lock after its release: %v", err)
	}
	unlock2()
}

// prune keeps the entry being built and those used lately, and removes the
// others with their lock files.
func TestPrune(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-2 * staleAfter)
	entry := func(name string, used time.Time) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		so := filepath.Join(dir, "trafikey.so")
		for _, p := range []string{so, dir + ".lock"} {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(so, used, used); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	current, fresh, stale := entry("current", old), entry("fresh", time.Now()), entry("stale", old)
	prune(root, "current")
	for _, keep := range []string{current, fresh, fresh + ".lock"} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s: %v", keep, err)
		}
	}
	for _, gone := range []string{stale, stale + ".lock"} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
}

// Cached builds the module once for concurrent callers and returns the same
// loadable file to each; the key does not change between calls on the same
// sources.
func TestCached(t *testing.T) {
	ctx := t.Context()
	var wg sync.WaitGroup
	paths := make([]string, 3)
	errs := make([]error, 3)
	for i := range paths {
		wg.Go(func() { paths[i], errs[i] = Cached(ctx, "") })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	key, err := Key(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cacheRoot(), key, "trafikey.so")
	for i, p := range paths {
		if p != want {
			t.Errorf("caller %d: %s, want %s", i, p, want)
		}
	}
	fi, err := os.Stat(want)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		t.Errorf("%s is not executable (%v): valkey-server refuses it", want, fi.Mode())
	}
}
