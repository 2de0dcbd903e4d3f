package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// These tests load the module into real servers. The EMQ.DEBUG.* commands
// (registered with "debug-commands yes") reach the host layer from outside:
// EMQ.DEBUG.CALL runs one host read and echoes its reply, EMQ.DEBUG.NEST runs
// a command as another module's command would (writes allowed, the path a
// pause does not hold), EMQ.DEBUG.KEYS is a keyed write command (guard, derived-key ACL, a write batch), EMQ.DEBUG.PANIC
// panics, EMQ.DEBUG.RUNTIME shows the Go runtime's settings.

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// skipInShort skips t under -short: it runs for seconds (what says how),
// and the full run covers it.
func skipInShort(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: %s takes seconds; the full run (go test ./module, as scripts/test.sh and scripts/test-matrix.sh run it) covers it", what)
	}
}

func startModule(t *testing.T, o valkeyserver.Options) *valkeyserver.Server {
	t.Helper()
	o.Module = valkeytest.ModulePath(t)
	return valkeytest.Start(t, o)
}

func startDebug(t *testing.T, o valkeyserver.Options) *valkeyserver.Server {
	t.Helper()
	o.ModuleArgs = append([]string{"debug-commands", "yes"}, o.ModuleArgs...)
	return startModule(t, o)
}

// refused runs a command that must answer an error reply and returns its text.
func refused(t *testing.T, s *valkeyserver.Server, args ...string) string {
	t.Helper()
	v, err := s.Do(ctxT(t), args...)
	var re valkeyserver.ReplyError
	if !errors.As(err, &re) {
		t.Fatalf("%q: got %#v, %v; want an error reply", args, v, err)
	}
	return string(re)
}

func wantRefused(t *testing.T, s *valkeyserver.Server, want string, args ...string) {
	t.Helper()
	if got := refused(t, s, args...); got != want {
		t.Fatalf("%q: %q, want %q", args, got, want)
	}
}

func TestVersion(t *testing.T) {
	s := startModule(t, valkeyserver.Options{})
	if v := valkeytest.Do(t, s, "EMQ.VERSION"); v != int64(protocol.Wire) {
		t.Fatalf("EMQ.VERSION = %#v, want %d", v, protocol.Wire)
	}
	if got := refused(t, s, "EMQ.VERSION", "x"); !strings.HasPrefix(got, "ERR wrong number of arguments") {
		t.Fatalf("EMQ.VERSION x: %q", got)
	}
	info := valkeytest.Do(t, s, "COMMAND", "INFO", "EMQ.VERSION").([]any)[0].([]any)
	flags := info[2].([]any)
	if info[1] != int64(1) || !slices.Contains(flags, any("readonly")) || !slices.Contains(flags, any("fast")) {
		t.Fatalf("COMMAND INFO EMQ.VERSION: %#v", info)
	}
	// Debug commands exist only when asked for.
	for _, c := range []string{"EMQ.DEBUG.PANIC", "EMQ.DEBUG.CALL", "EMQ.DEBUG.CALLSTR", "EMQ.DEBUG.NEST", "EMQ.DEBUG.KEYS", "EMQ.DEBUG.RUNTIME"} {
		if got := refused(t, s, c); !strings.HasPrefix(got, "ERR unknown command") {
			t.Errorf("%s without debug-commands: %q", c, got)
		}
	}
	if log := s.Log(); !strings.Contains(log, "<trafikey> wire 2,") {
		t.Errorf("no load line in the log:\n%s", log)
	}
}

// The declared keys are visible to COMMAND GETKEYS and COMMAND INFO (ACL and
// cluster routing use the same answers); a malformed numkeys shows no keys.
func TestDeclaredKeys(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{})
	got := valkeytest.Do(t, s, "COMMAND", "GETKEYS", "EMQ.DEBUG.KEYS", "2", "k1", "k2", "extra")
	if !slices.Equal(got.([]any), []any{"k1", "k2"}) {
		t.Fatalf("GETKEYS: %#v", got)
	}
	flagged := valkeytest.Do(t, s, "COMMAND", "GETKEYSANDFLAGS", "EMQ.DEBUG.KEYS", "1", "k1")
	if f := flagged.([]any)[0].([]any)[1].([]any); !slices.Equal(f, []any{"RW", "access", "update"}) {
		t.Fatalf("GETKEYSANDFLAGS flags: %#v", f)
	}
	for _, nk := range []string{"03", "+2", "-1", "3", "2x", " 2", ""} {
		got := refused(t, s, "COMMAND", "GETKEYS", "EMQ.DEBUG.KEYS", nk, "k1", "k2")
		if !strings.Contains(got, "Invalid arguments") {
			t.Errorf("GETKEYS numkeys %q: %q, want no keys", nk, got)
		}
	}
	info := valkeytest.Do(t, s, "COMMAND", "INFO", "EMQ.DEBUG.KEYS").([]any)[0].([]any)
	for _, f := range []string{"write", "denyoom", "movablekeys"} {
		if !slices.Contains(info[2].([]any), any(f)) {
			t.Errorf("EMQ.DEBUG.KEYS flags %v lack %s", info[2], f)
		}
	}
	spec := flat(info[8])
	for _, w := range []string{"RW", "access", "update", "index", "keynum", "keynumidx 0", "firstkey 1", "keystep 1"} {
		if !strings.Contains(spec, w) {
			t.Errorf("key-spec %q lacks %q", spec, w)
		}
	}
}

// flat renders a reply as words, for loose matching.
func flat(v any) string {
	switch x := v.(type) {
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, flat(e))
		}
		return strings.Join(parts, " ")
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return x
	}
	return ""
}

func TestPanicBecomesAnErrorReply(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{})
	for range 3 {
		wantRefused(t, s, protocol.ErrInternal, "EMQ.DEBUG.PANIC")
	}
	if v := valkeytest.Do(t, s, "PING"); v != "PONG" {
		t.Fatalf("PING after a panic: %#v", v)
	}
	if !strings.Contains(s.Log(), "EMQ.DEBUG.PANIC: panic: EMQ.DEBUG.PANIC (at main.debugPanic") {
		t.Fatalf("the panic is not in the log:\n%s", s.LogTail(10))
	}
	// A panic in a nested command is the nested call's error reply.
	wantRefused(t, s, protocol.ErrInternal, "EMQ.DEBUG.CALL", "EMQ.DEBUG.PANIC")
	valkeytest.Do(t, s, "PING")
}

// Values go through the host untouched: every byte value, NULs, invalid
// UTF-8, empty, and 1 MB.
func TestBinaryRoundTrip(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{})
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i * 7 % 256)
	}
	for name, value := range map[string]string{
		"all-bytes": string(big),
		"nul":       "a\x00b\x00",
		"utf8-bad":  "\xff\xfe\xc3\x28",
		"empty":     "",
	} {
		valkeytest.Do(t, s, "SET", "bin:"+name, value)
		got := valkeytest.Do(t, s, "EMQ.DEBUG.CALL", "GET", "bin:"+name)
		if got != value {
			t.Errorf("%s: GET through the module returned %d bytes, want %d (equal: %v)", name, len(got.(string)), len(value), got == value)
		}
	}
	// An argument with every byte value reaches the server intact too.
	if got := valkeytest.Do(t, s, "EMQ.DEBUG.CALL", "ECHO", string(big)); got != string(big) {
		t.Fatal("ECHO through the module changed the value")
	}
	if v := valkeytest.Do(t, s, "EMQ.DEBUG.CALL", "GET", "missing"); v != nil {
		t.Fatalf("GET of a missing key: %#v, want null", v)
	}
	if v := valkeytest.Do(t, s, "EMQ.DEBUG.CALL", "STRLEN", "bin:all-bytes"); v != int64(len(big)) {
		t.Fatalf("STRLEN: %#v", v)
	}
}

// Replies are classified from their RESP2 type: an error passes through as
// its text, arrays up to four deep are echoed, deeper ones are refused.
func TestHostReplies(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{})
	valkeytest.Do(t, s, "SET", "str", "v")
	wantRefused(t, s, protocol.ErrWrongType, "EMQ.DEBUG.CALL", "HGET", "str", "f")
	wantRefused(t, s, "ERR unknown command 'NOSUCH', with args beginning with: ", "EMQ.DEBUG.CALL", "NOSUCH")
	four := valkeytest.Do(t, s, "EMQ.DEBUG.CALL", "EVAL", "return {1, {'a', {2, {'b'}}}}", "0")
	if flat(four) != "1 a 2 b" || len(four.([]any)[1].([]any)[1].([]any)[1].([]any)) != 1 {
		t.Fatalf("four deep: %#v", four)
	}
	wantRefused(t, s, protocol.ErrHostReply, "EMQ.DEBUG.CALL", "EVAL", "return {1, {2, {3, {4, {5}}}}}", "0")
	wantRefused(t, s, protocol.ErrHostReply, "EMQ.DEBUG.CALL", "COMMAND", "INFO", "GET")
	mixed := valkeytest.Do(t, s, "EMQ.DEBUG.CALL", "EVAL", "return {1, redis.error_reply('EMQSTATE nested'), false}", "0").([]any)
	if len(mixed) != 3 || mixed[0] != int64(1) || mixed[1] != valkeyserver.ReplyError("EMQSTATE nested") || mixed[2] != nil {
		t.Fatalf("array with an error and a null: %#v", mixed)
	}
	// A top-level error text with a '%' is sent as it is.
	wantRefused(t, s, "EMQSTALE 100% %s %d", "EMQ.DEBUG.CALL", "EVAL", "return redis.error_reply('EMQSTALE 100% %s %d')", "0")
}

// A module command called from a module command, or from a script, runs one
// level deeper with its own scratch; the outer command's replies survive.
func TestNestedCalls(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{})
	if v := valkeytest.Do(t, s, "EMQ.DEBUG.CALL", "EMQ.DEBUG.CALL", "EMQ.VERSION"); v != int64(protocol.Wire) {
		t.Fatalf("two levels: %#v", v)
	}
	if v := valkeytest.Do(t, s, "EMQ.DEBUG.CALL", "EVAL", "return {7, redis.call('EMQ.DEBUG.CALL', 'EMQ.VERSION'), redis.call('EMQ.VERSION')}", "0"); flat(v) != "7 2 2" {
		t.Fatalf("module, script, module: %#v", v)
	}
	script := "local a = redis.call('EMQ.DEBUG.CALL', 'ECHO', 'x'); return {a, redis.call('EMQ.DEBUG.CALL', 'EMQ.DEBUG.CALL', 'EMQ.VERSION')}"
	if v := valkeytest.Do(t, s, "EVAL", script, "0"); flat(v) != "x 2" {
		t.Fatalf("script, module, module: %#v", v)
	}
	// A script inside a script trips a server assertion: the host refuses it.
	for _, inner := range []string{"'EVAL', 'return 1', '0'", "'fcall', 'f', '0'"} {
		got := refused(t, s, "EVAL", "return redis.call('EMQ.DEBUG.CALL', "+inner+")", "0")
		if !strings.HasPrefix(got, protocol.ErrHostReply+" script: ") {
			t.Fatalf("a script inside a script: %q", got)
		}
	}
	valkeytest.Do(t, s, "PING")
	args := []string{}
	for range 20 {
		args = append(args, "EMQ.DEBUG.CALL")
	}
	args = append(args, "EMQ.VERSION")
	wantRefused(t, s, protocol.ErrInternal, args...)
	valkeytest.Do(t, s, "PING")
}

// Writes pass the guard and reach the AOF and a replica as their effects:
// HINCRBY in MULTI/EXEC, never the EMQ command. The replica has no module.
func TestWritesAsEffects(t *testing.T) {
	p := startDebug(t, valkeyserver.Options{AOF: true})
	r := valkeytest.Start(t, valkeyserver.Options{ReplicaOf: p.Addr()})
	if err := r.WaitReplicaSync(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if v := valkeytest.Do(t, p, "EMQ.DEBUG.KEYS", "2", "emq:{a}:x", "emq:{a}:y", "emq:{a}:z"); flat(v) != "1 1 1" {
		t.Fatalf("EMQ.DEBUG.KEYS: %#v", v)
	}
	valkeytest.Do(t, p, "EMQ.DEBUG.KEYS", "1", "emq:{a}:x")
	ctx := ctxT(t)
	for {
		if v, _ := r.Do(ctx, "HGET", "emq:{a}:x", "n"); v == "2" {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the replica did not receive the writes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if v := valkeytest.Do(t, r, "HGET", "emq:{a}:z", "n"); v != "1" {
		t.Fatalf("replica emq:{a}:z = %#v", v)
	}
	aof := readAOF(t, p)
	if strings.Contains(strings.ToUpper(aof), "EMQ.") {
		t.Fatalf("the AOF holds an EMQ command:\n%s", aof)
	}
	for _, w := range []string{"HINCRBY", "MULTI", "EXEC"} {
		if !strings.Contains(aof, w) {
			t.Errorf("the AOF lacks %s:\n%s", w, aof)
		}
	}
}

// readAOF returns the incremental AOF files of s, concatenated.
func readAOF(t *testing.T, s *valkeyserver.Server) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(s.Dir(), "appendonlydir", "*.incr.aof"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// Declared keys are checked by the server from the key-spec, derived keys by
// CheckKeys before anything is written; inside a script the caller's user is
// invisible to the module, so derived keys are refused there.
func TestACL(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{Users: []string{"alice on >pw ~emq:{a}:* +@all"}})
	alice := func(args ...string) (any, error) {
		c, err := valkeyserver.Dial(ctxT(t), s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Do(ctxT(t), "AUTH", "alice", "pw"); err != nil {
			t.Fatal(err)
		}
		return c.Do(ctxT(t), args...)
	}
	if v, err := alice("EMQ.DEBUG.KEYS", "1", "emq:{a}:k", "emq:{a}:derived"); err != nil || flat(v) != "1 1" {
		t.Fatalf("allowed keys: %#v %v", v, err)
	}
	if _, err := alice("EMQ.DEBUG.KEYS", "1", "emq:{b}:k"); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Fatalf("declared key outside the ACL: %v", err)
	}
	if _, err := alice("EMQ.DEBUG.KEYS", "1", "emq:{a}:k", "emq:{b}:derived"); err == nil || err.Error() != protocol.ErrNoPerm {
		t.Fatalf("derived key outside the ACL: %v", err)
	}
	if v := valkeytest.Do(t, s, "HGET", "emq:{a}:k", "n"); v != "1" {
		t.Fatalf("a refused call wrote: emq:{a}:k n = %#v", v)
	}
	if v := valkeytest.Do(t, s, "EXISTS", "emq:{b}:derived"); v != int64(0) {
		t.Fatal("a refused call wrote the denied key")
	}
	if v, err := alice("EVAL", "return redis.call('EMQ.DEBUG.KEYS', 1, 'emq:{a}:k')", "0"); err != nil || flat(v) != "2" {
		t.Fatalf("from a script, declared keys only: %#v %v", v, err)
	}
	if _, err := alice("EVAL", "return redis.call('EMQ.DEBUG.KEYS', 1, 'emq:{a}:k', 'emq:{a}:derived')", "0"); err == nil || !strings.HasPrefix(err.Error(), protocol.ErrNoPerm) {
		t.Fatalf("from a script, a derived key: %v", err)
	}
	// The default user may touch anything; a module's own call is the server.
	if v := valkeytest.Do(t, s, "EMQ.DEBUG.KEYS", "1", "emq:{b}:k", "emq:{c}:derived"); flat(v) != "1 1" {
		t.Fatalf("default user: %#v", v)
	}
	if v := valkeytest.Do(t, s, "EMQ.DEBUG.NEST", "EMQ.DEBUG.KEYS", "1", "emq:{b}:k", "emq:{c}:derived"); flat(v) != "2 2" {
		t.Fatalf("module caller: %#v", v)
	}
}

// A read cannot write: the read format carries RM_Call's no-writes flag, so
// the server refuses a write command placed in a read (only a debug command
// can name one), a module's write verb included, and nothing is written.
func TestReadsCannotWrite(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{AOF: true})
	valkeytest.Do(t, s, "SET", "kept", "v")
	for _, args := range [][]string{
		{"SET", "written", "v"},
		{"DEL", "kept"},
		{"HINCRBY", "written", "n", "1"},
		{"EMQ.DEBUG.KEYS", "1", "emq:{a}:written"},
		verbArgs(protocol.Install, "w"),
	} {
		got := refused(t, s, append([]string{"EMQ.DEBUG.CALL"}, args...)...)
		if !strings.Contains(got, "write is not allowed") {
			t.Errorf("%q in a read: %q, want the no-writes refusal", args, got)
		}
	}
	if v := valkeytest.Do(t, s, "EXISTS", "written", "emq:{a}:written"); v != int64(0) {
		t.Fatalf("a read wrote: %#v", v)
	}
	if v := valkeytest.Do(t, s, "KEYS", "emq:{w}*"); len(v.([]any)) != 0 {
		t.Fatalf("a read installed a queue: %#v", v)
	}
	if v := valkeytest.Do(t, s, "GET", "kept"); v != "v" {
		t.Fatalf("a read deleted: %#v", v)
	}
	// the same write as another module's call runs (the debug nested path)
	if v := valkeytest.Do(t, s, "EMQ.DEBUG.NEST", "SET", "written", "v"); v != "OK" {
		t.Fatalf("nested SET: %#v", v)
	}
}

// CLIENT PAUSE WRITE holds EMQ.DEBUG.KEYS (flagged write) before it runs; a
// path the pause does not hold (a nested call) meets the guard, which refuses
// with nothing written.
func TestPause(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{AOF: true})
	valkeytest.Do(t, s, "CLIENT", "PAUSE", "20000", "WRITE")
	done := heldByPause(t, s, "EMQ.DEBUG.KEYS", "1", "emq:{a}:held")
	wantRefused(t, s, protocol.ErrWritePaused, "EMQ.DEBUG.NEST", "EMQ.DEBUG.KEYS", "1", "emq:{a}:guarded")
	if v := valkeytest.Do(t, s, "EXISTS", "emq:{a}:guarded", "emq:{a}:held"); v != int64(0) {
		t.Fatalf("written during the pause: %#v", v)
	}
	valkeytest.Do(t, s, "CLIENT", "UNPAUSE")
	select {
	case v := <-done:
		if flat(v) != "1" {
			t.Fatalf("after the pause: %#v", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("EMQ.DEBUG.KEYS still held after CLIENT UNPAUSE")
	}
}

// Forks run no Go code: BGSAVE and BGREWRITEAOF succeed with the module
// loaded, and the module works after them.
func TestFork(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{AOF: true})
	for i := range 100 {
		valkeytest.Do(t, s, "EMQ.DEBUG.KEYS", "1", "emq:{a}:"+strconv.Itoa(i))
	}
	forkBoth(t, s)
	if v := valkeytest.Do(t, s, "EMQ.DEBUG.KEYS", "1", "emq:{a}:0"); flat(v) != "2" {
		t.Fatalf("after the forks: %#v", v)
	}
}

// forkBoth runs BGSAVE, then BGREWRITEAOF, waits for each and fails t
// unless both succeeded: both fork a child that must run no Go code.
func forkBoth(t *testing.T, s *valkeyserver.Server) {
	t.Helper()
	valkeytest.Do(t, s, "BGSAVE")
	waitInfo(t, s, "persistence", "rdb_bgsave_in_progress", "0")
	if st := infoField(t, s, "persistence", "rdb_last_bgsave_status"); st != "ok" {
		t.Fatalf("BGSAVE: %s", st)
	}
	valkeytest.Do(t, s, "BGREWRITEAOF")
	waitInfo(t, s, "persistence", "aof_rewrite_in_progress", "0")
	waitInfo(t, s, "persistence", "aof_rewrite_scheduled", "0")
	if st := infoField(t, s, "persistence", "aof_last_bgrewrite_status"); st != "ok" {
		t.Fatalf("BGREWRITEAOF: %s", st)
	}
}

// heldByPause sends args on a connection of its own while the server's
// writes are paused, fails t if the command answers within 300 ms, and
// returns where its reply (or error) arrives once the pause ends.
func heldByPause(t *testing.T, s *valkeyserver.Server, args ...string) <-chan any {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		v, err := s.Do(context.Background(), args...)
		if err != nil {
			done <- err
			return
		}
		done <- v
	}()
	select {
	case v := <-done:
		t.Fatalf("%s ran during the pause: %#v", args[0], v)
	case <-time.After(300 * time.Millisecond):
	}
	return done
}

func infoField(t *testing.T, s *valkeyserver.Server, section, field string) string {
	t.Helper()
	info, err := s.Info(ctxT(t), section)
	if err != nil {
		t.Fatal(err)
	}
	return valkeyserver.InfoField(info, field)
}

func waitInfo(t *testing.T, s *valkeyserver.Server, section, field, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for infoField(t, s, section, field) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s stays %q, want %q", field, infoField(t, s, section, field), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func runtimeInfo(t *testing.T, s *valkeyserver.Server) []int64 {
	t.Helper()
	var out []int64
	for _, v := range valkeytest.Do(t, s, "EMQ.DEBUG.RUNTIME").([]any) {
		out = append(out, v.(int64))
	}
	return out
}

func TestModuleArgs(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{})
	if rt := runtimeInfo(t, s); rt[0] != 2 || rt[1] != 100 {
		t.Fatalf("defaults: gomaxprocs %d, gcpercent %d", rt[0], rt[1])
	}
	s = startDebug(t, valkeyserver.Options{ModuleArgs: []string{"gomaxprocs", "3", "gcpercent", "400", "memlimit", "1000000000"}})
	if rt := runtimeInfo(t, s); rt[0] != 3 || rt[1] != 400 || rt[2] != 1000000000 {
		t.Fatalf("set: gomaxprocs %d, gcpercent %d, memlimit %d", rt[0], rt[1], rt[2])
	}
}

func TestBadModuleArgFailsTheLoad(t *testing.T) {
	_, err := valkeyserver.Start(ctxT(t), valkeyserver.Options{
		Module: valkeytest.ModulePath(t), ModuleArgs: []string{"gomaxprocs", "2", "bogus", "1"},
	})
	if err == nil || !strings.Contains(err.Error(), `unknown module argument \"bogus\"`) && !strings.Contains(err.Error(), `unknown module argument "bogus"`) {
		t.Fatalf("start with a bad argument: %v", err)
	}
	// At run time: a refused load leaves the server up and a later load works;
	// a second load and an unload are refused without harm.
	s := valkeytest.Start(t, valkeyserver.Options{})
	path := valkeytest.ModulePath(t)
	if got := refused(t, s, "MODULE", "LOAD", path, "debug-commands", "maybe"); !strings.Contains(got, "Error loading") {
		t.Fatalf("MODULE LOAD with a bad argument: %q", got)
	}
	valkeytest.Do(t, s, "MODULE", "LOAD", path, "debug-commands", "yes")
	refused(t, s, "MODULE", "LOAD", path)
	refused(t, s, "MODULE", "UNLOAD", "trafikey")
	if v := valkeytest.Do(t, s, "EMQ.DEBUG.KEYS", "1", "k"); flat(v) != "1" {
		t.Fatalf("after refused loads: %#v", v)
	}
	if got := valkeytest.Do(t, s, "COMMAND", "GETKEYS", "EMQ.DEBUG.KEYS", "1", "k"); flat(got) != "k" {
		t.Fatalf("GETKEYS after refused loads: %#v", got)
	}
	if !strings.Contains(s.Log(), `debug-commands "maybe"`) {
		t.Fatalf("no log line for the bad argument:\n%s", s.LogTail(10))
	}
}

// Host calls allocate nothing in steady state: thousands of guarded write
// batches and reads move the Go heap's allocation count by a handful at most
// (EMQ.DEBUG.RUNTIME itself allocates a little).
func TestNoAllocationsPerCall(t *testing.T) {
	s := startDebug(t, valkeyserver.Options{})
	c, err := s.Dial(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	valkeytest.Do(t, s, "SET", "payload", strings.Repeat("p", 300))
	cmds := [][]string{}
	for i := range 500 {
		cmds = append(cmds,
			[]string{"EMQ.DEBUG.KEYS", "2", "emq:{a}:" + strconv.Itoa(i%10), "emq:{a}:x"},
			[]string{"EMQ.DEBUG.CALL", "GET", "payload"},
			[]string{"EMQ.VERSION"})
	}
	warm := func() {
		if _, err := c.DoMulti(ctxT(t), cmds...); err != nil {
			t.Fatal(err)
		}
	}
	warm()
	d := fewestAllocs(t, s, func() {
		for range 4 {
			warm()
		}
	})
	t.Logf("%d heap allocations for %d commands", d, 4*len(cmds))
	if d > 20 {
		t.Fatalf("%d heap allocations for %d commands", d, 4*len(cmds))
	}
}

// fewestAllocs runs run three times and returns the fewest heap allocations
// the server's Go runtime made during one of them. The runtime allocates a
// few objects of its own as wall time passes (a loaded machine stretches
// it), while an allocation per command shows in every run, so the fewest is
// what a bound on the commands' own allocations can hold to.
func fewestAllocs(t *testing.T, s *valkeyserver.Server, run func()) int64 {
	t.Helper()
	var fewest int64 = -1
	for range 3 {
		before := runtimeInfo(t, s)[3]
		run()
		if d := runtimeInfo(t, s)[3] - before; fewest < 0 || d < fewest {
			fewest = d
		}
	}
	return fewest
}

// In a cluster, the declared keys route the command (MOVED, CROSSSLOT): the
// key positions come from the module's getkeys-api answer.
func TestClusterRouting(t *testing.T) {
	c := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{
		Primaries: 2,
		Base:      valkeyserver.Options{Module: valkeytest.ModulePath(t), ModuleArgs: []string{"debug-commands", "yes"}},
	})
	// {a} hashes to slot 15495 (the second primary), {b} to 3300 (the first).
	first, second := c.Primaries()[0], c.Primaries()[1]
	if v := valkeytest.Do(t, second, "EMQ.DEBUG.KEYS", "1", "emq:{a}:k"); flat(v) != "1" {
		t.Fatalf("local key: %#v", v)
	}
	if got := refused(t, first, "EMQ.DEBUG.KEYS", "1", "emq:{a}:k"); !strings.HasPrefix(got, "MOVED 15495 ") {
		t.Fatalf("remote key: %q, want MOVED", got)
	}
	if got := refused(t, second, "EMQ.DEBUG.KEYS", "2", "emq:{a}:k", "emq:{b}:k"); !strings.HasPrefix(got, "CROSSSLOT") {
		t.Fatalf("keys of two slots: %q, want CROSSSLOT", got)
	}
	if v := valkeytest.Do(t, first, "EMQ.VERSION"); v != int64(protocol.Wire) {
		t.Fatalf("EMQ.VERSION on any node: %#v", v)
	}
}
