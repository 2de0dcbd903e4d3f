package main

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// serverVersion is the major and minor version of the Valkey server s runs.
func serverVersion(t *testing.T, s *valkeyserver.Server) (major, minor int) {
	t.Helper()
	v := infoField(t, s, "server", "valkey_version")
	parts := strings.Split(v, ".")
	var err error
	if major, err = strconv.Atoi(parts[0]); err == nil && len(parts) > 1 {
		minor, err = strconv.Atoi(parts[1])
	}
	if err != nil || len(parts) < 2 {
		t.Fatalf("valkey_version %q", v)
	}
	return major, minor
}

// The module declares the options of shim.h that the server knows, and no
// other: HANDLE_IO_ERRORS, HANDLE_REPL_ASYNC_LOAD and
// NO_IMPLICIT_SIGNAL_MODIFIED everywhere, SKIP_COMMAND_VALIDATION from 8.1
// (8.0 has no such option), HANDLE_ATOMIC_SLOT_MIGRATION from 9.0 (before,
// no atomic slot migration). INFO modules shows what the server holds of
// them; no version renders skip-command-validation, which only the load
// log line shows (its behaviour, the replicated writes, is what the
// replica and AOF tests hold on every version).
func TestModuleOptions(t *testing.T) {
	s := startModule(t, valkeyserver.Options{})
	major, minor := serverVersion(t, s)
	bits := 1<<0 | 1<<1 | 1<<2
	rendered := []string{"handle-io-errors", "handle-repl-async-load", "no-implicit-signal-modified"}
	if major > 8 || major == 8 && minor >= 1 {
		bits |= 1 << 4
	}
	if major >= 9 {
		bits |= 1 << 5
		rendered = append(rendered, "handle-atomic-slot-migration")
	}
	m := regexp.MustCompile(`key-writes \w+, embed-max \d+, scripts-hold-args \w+, options (0x[0-9a-f]+)`).FindStringSubmatch(s.LogTail(200))
	if m == nil {
		t.Fatal("no load log line with the options")
	}
	if got, _ := strconv.ParseInt(m[1], 0, 32); int(got) != bits {
		t.Errorf("declared options %s on %d.%d, want %#x", m[1], major, minor, bits)
	}
	info, err := s.Info(ctxT(t), "modules")
	if err != nil {
		t.Fatal(err)
	}
	var opts []string
	for line := range strings.SplitSeq(info, "\n") {
		if !strings.HasPrefix(line, "module:name=trafikey,") {
			continue
		}
		_, o, ok := strings.Cut(strings.TrimSpace(line), "options=[")
		if !ok {
			t.Fatalf("INFO modules: %q", line)
		}
		opts = strings.Split(strings.TrimSuffix(o, "]"), "|")
	}
	slices.Sort(opts)
	slices.Sort(rendered)
	if !slices.Equal(opts, rendered) {
		t.Errorf("INFO modules options %q on %d.%d, want %q", opts, major, minor, rendered)
	}
}
