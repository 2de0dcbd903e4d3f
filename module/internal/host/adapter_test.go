package host

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The adapter rule: only call.c sends commands to the server (RM_Call, with
// the read format "vEW" or the write format "v!E", and the key API that
// answers some reads and writes in their place, a write replicated as its
// effect with RM_Replicate), only call.go reaches it, only the TRA
// family replicates verbatim (its host half and its handler, module/tra.go;
// no EMQ handler; the TRA bit write in call.c calls the verbatim hook), and
// this package is the only cgo code of the module.
// The test reads every Go, C and header file of the module.
func TestAdapterIsTheOnlyCallPath(t *testing.T) {
	rules := []struct {
		what    string
		re      *regexp.Regexp
		allowed []string // paths relative to module/, "" for nowhere
	}{
		{"the write format", regexp.MustCompile(`v!E`), []string{"internal/host/call.c", "internal/host/call.go"}},
		{"the read format", regexp.MustCompile(`"vEW"`), []string{"internal/host/call.c", "internal/host/call.go"}},
		{"the RM_Call function", regexp.MustCompile(`(Redis|Valkey)Module_Call\b|\bGET\(Call\)|\bCall\(ctx`), []string{"internal/host/call.c"}},
		{"the C call adapter", regexp.MustCompile(`\bemq_exec\b`), []string{"internal/host/call.c", "internal/host/call.go"}},
		{"the key API", regexp.MustCompile(`\b(OpenKey|CloseKey|KeyType|KeyExists|ValueLength|HashGet|ZsetScore|StringDMA|HashSet|ZsetAdd|ListPush|DeleteKey)\b`), []string{"internal/host/call.c"}},
		{"verbatim replication", regexp.MustCompile(`ReplicateVerbatim|WriteVerbatim`), []string{"internal/host/verbatim.c", "internal/host/verbatim.go", "tra.go"}},
		// a write through the key API replicates itself as its effect
		{"effects replication", regexp.MustCompile(`\bReplicate\b`), []string{"internal/host/call.c"}},
		// the TRA bit write replicates the command verbatim from call.c
		{"the verbatim call", regexp.MustCompile(`\bemq_replicate_verbatim\b`), []string{"internal/host/verbatim.c", "internal/host/verbatim.go", "internal/host/shim.h", "internal/host/call.c"}},
		{"the bit call", regexp.MustCompile(`\bemq_bit\b`), []string{"internal/host/call.c", "internal/host/call.go", "internal/host/shim.h"}},
		// only debug commands read by any name, or call as another module
		{"the debug calls", regexp.MustCompile(`\bDebug(Read|Nested)\(`), []string{"internal/host/read.go", "debug.go"}},
		{"the nested format", regexp.MustCompile(`FORMAT_NESTED`), []string{"internal/host/call.c"}},
		{"cgo", regexp.MustCompile(`(?m)^import "C"`), []string{"internal/host/"}},
		// blocking a client and waking it belong to the trampoline
		{"the blocking API", regexp.MustCompile(`\b(BlockClientOnKeys\w*|SignalKeyAsReady|GetBlockedClientPrivateData)\b`), []string{"internal/host/shim.c"}},
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		ext := filepath.Ext(path)
		if (ext != ".go" && ext != ".c" && ext != ".h") || rel == "internal/host/adapter_test.go" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, r := range rules {
			if !r.re.Match(src) {
				continue
			}
			seen[r.what] = true
			ok := false
			for _, a := range r.allowed {
				ok = ok || rel == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a))
			}
			if !ok {
				t.Errorf("%s appears in module/%s; it belongs to the call adapter only", r.what, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules[:5] {
		if !seen[r.what] {
			t.Errorf("%s not found at all: the rule no longer matches the adapter", r.what)
		}
	}
}
