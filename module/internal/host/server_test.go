package host_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/lua"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// These tests load the module into a real server, with its debug commands:
// EMQ.DEBUG.CALL <command> <arg>… runs one host read and echoes its reply.
// The read fast path answers a command spelled as the verbs spell it (HGET);
// any other spelling (hget) goes through RM_Call, so the two replies of one
// read can be compared, and with the server's own reply to the client.

func startDebug(t *testing.T) *valkeyserver.Server {
	t.Helper()
	return valkeytest.Start(t, valkeyserver.Options{
		Module:     valkeytest.ModulePath(t),
		ModuleArgs: []string{"debug-commands", "yes"},
		Debug:      true,
	})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func show(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 200 {
		s = s[:200] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// calls of each command since the last CONFIG RESETSTAT, from INFO
// commandstats.
func calls(t *testing.T, s *valkeyserver.Server, cmd string) int {
	t.Helper()
	info, err := s.Info(ctxT(t), "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+strings.ToLower(cmd)+":calls=")
		if ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}

// sameRead checks one read three ways: through the fast path, through
// RM_Call, and sent by the client itself. All three must be equal in type and
// bytes. It returns the reply.
func sameRead(t *testing.T, s *valkeyserver.Server, cmd string, args ...string) any {
	t.Helper()
	fast, slow := hostRead(t, s, cmd, args...)
	if direct := valkeytest.Reply(t, s, append([]string{cmd}, args...)...); !reflect.DeepEqual(slow, direct) {
		t.Errorf("%s %q: through the host %s, from the client %s", cmd, args, show(slow), show(direct))
	}
	return fast
}

// hostRead runs one read through the fast path and through RM_Call, checks
// that the replies are equal in type and bytes, and returns both.
func hostRead(t *testing.T, s *valkeyserver.Server, cmd string, args ...string) (fast, slow any) {
	t.Helper()
	fast = valkeytest.Reply(t, s, append([]string{"EMQ.DEBUG.CALL", cmd}, args...)...)
	slow = valkeytest.Reply(t, s, append([]string{"EMQ.DEBUG.CALL", strings.ToLower(cmd)}, args...)...)
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s %q: fast path %s, RM_Call %s", cmd, args, show(fast), show(slow))
	}
	return fast, slow
}

// fill creates one key of each type, named after its type, and returns the
// names.
func fill(t *testing.T, s *valkeyserver.Server, prefix string) []string {
	t.Helper()
	valkeytest.Do(t, s, "SET", prefix+"string", "v")
	valkeytest.Do(t, s, "RPUSH", prefix+"list", "a", "b")
	valkeytest.Do(t, s, "HSET", prefix+"hash", "f", "v")
	valkeytest.Do(t, s, "ZADD", prefix+"zset", "1", "m")
	valkeytest.Do(t, s, "SADD", prefix+"set", "m")
	valkeytest.Do(t, s, "XADD", prefix+"stream", "1-1", "f", "v")
	return []string{prefix + "string", prefix + "list", prefix + "hash", prefix + "zset", prefix + "set", prefix + "stream"}
}

func TestFastReads(t *testing.T) {
	s := startDebug(t)
	typed := fill(t, s, "t:")
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MB
	bin := "a\x00b\x00\xff\r\n"

	// hashes: listpack and hashtable encodings, integer values, empty fields
	for _, h := range []string{"h:small", "h:large"} {
		valkeytest.Do(t, s, "HSET", h, "str", "value", "int", "12345", "neg", "-7", "zero", "0",
			"max", "9223372036854775807", "bin", bin, "empty", "", "", "empty name", "lead0", "007")
	}
	valkeytest.Do(t, s, "HSET", "h:large", "big", big)
	valkeytest.Do(t, s, "HSET", "h:bin", bin, "binary name")
	if enc := valkeytest.Do(t, s, "OBJECT", "ENCODING", "h:large"); enc != "hashtable" {
		t.Fatalf("h:large is %v", enc)
	}
	fields := []string{"str", "int", "neg", "zero", "max", "bin", "empty", "", "lead0", "big", "missing"}
	for _, h := range append([]string{"h:small", "h:large", "h:bin", "absent"}, typed...) {
		for _, f := range append(fields, bin) {
			sameRead(t, s, "HGET", h, f)
		}
		sameRead(t, s, "HMGET", h, "str")
		sameRead(t, s, "HMGET", append([]string{h}, fields...)...)
		sameRead(t, s, "HMGET", h, "int", "int", "missing", bin, "")
	}

	// sorted sets: listpack and skiplist, the scores the verbs store and others
	scores := map[string]string{
		"zero": "0", "negzero": "-0", "one": "1", "neg": "-42", "ms": "1767225600000",
		"2^53": "9007199254740992", "2^53+2": "9007199254740994", "-2^53": "-9007199254740992",
		"2^62": "4611686018427387904", "2^63": "9223372036854775808", "1e300": "1e300",
		"half": "1.5", "tenth": "0.1", "third": "0.3333333333333333", "tiny": "5e-324",
		"inf": "+inf", "-inf": "-inf", "": "3", bin: "4",
	}
	for member, score := range scores {
		valkeytest.Do(t, s, "ZADD", "z:small", score, member)
		valkeytest.Do(t, s, "ZADD", "z:large", score, member)
	}
	for i := range 200 {
		valkeytest.Do(t, s, "ZADD", "z:large", strconv.Itoa(1000+i), "m"+strconv.Itoa(i))
	}
	if enc := valkeytest.Do(t, s, "OBJECT", "ENCODING", "z:large"); enc != "skiplist" {
		t.Fatalf("z:large is %v", enc)
	}
	for _, z := range append([]string{"z:small", "z:large", "absent"}, typed...) {
		for member := range scores {
			sameRead(t, s, "ZSCORE", z, member)
		}
		sameRead(t, s, "ZSCORE", z, "m7")
		sameRead(t, s, "ZSCORE", z, "missing")
		sameRead(t, s, "ZCARD", z)
		for _, stop := range []string{"0", "1", "5", "199", "200", "201", "999999999"} {
			sameRead(t, s, "ZRANGE", z, "0", stop)
			sameRead(t, s, "ZRANGE", z, "0", stop, "WITHSCORES")
		}
		// other ranges go through RM_Call
		for _, r := range [][2]string{{"1", "2"}, {"0", "-1"}, {"00", "1"}, {"0", "01"}, {"0", "1000000000"}, {"-1", "0"}} {
			sameRead(t, s, "ZRANGE", z, r[0], r[1])
		}
		sameRead(t, s, "ZRANGE", z, "0", "1", "withscores")
		sameRead(t, s, "ZRANGE", z, "0", "1", "REV")
	}

	// lists
	valkeytest.Do(t, s, "RPUSH", "l:small", "a", "b", "c")
	for i := range 1000 {
		valkeytest.Do(t, s, "RPUSH", "l:large", strconv.Itoa(i)+big[:100])
	}
	for _, l := range append([]string{"l:small", "l:large", "absent"}, typed...) {
		sameRead(t, s, "LLEN", l)
	}

	// strings for EXISTS: present, binary, 1 MB, empty
	valkeytest.Do(t, s, "SET", "s:big", big)
	valkeytest.Do(t, s, "SET", "s:empty", "")
	valkeytest.Do(t, s, "SET", bin, bin)
	sameRead(t, s, "EXISTS", "absent")
	sameRead(t, s, "EXISTS", "s:big")
	sameRead(t, s, "EXISTS", append([]string{"s:big", "s:empty", bin, "absent", "s:big", "absent"}, typed...)...)

	// strings for STRLEN and GETBIT: int, and SET's strings of every length
	// around where this server stops embedding them (44 bytes on Valkey 8,
	// at most 116 on 9.1, fewer under a longer key name), a bitmap SETBIT made,
	// 1 MB; offsets inside, past the end, at the fast path's bound and past
	// it, and ones only the server refuses. No read may change a string's
	// encoding.
	valkeytest.Do(t, s, "SET", "b:int", "12345")
	valkeytest.Do(t, s, "SETBIT", "b:bitmap", "100", "1")
	valkeytest.Do(t, s, "SETBIT", "b:wide", "8388607", "1")
	strs := []string{"b:int", "b:bitmap", "b:wide"}
	longName := "b:" + strings.Repeat("k", 60) + ":"
	for _, n := range []int{1, 20, 21, 43, 44, 45, 46, 64, 70, 71, 72, 100, 108, 109, 110, 111, 112, 113, 114, 120, 128, 129, 200} {
		for _, prefix := range []string{"b:len-", longName} {
			k := prefix + strconv.Itoa(n)
			valkeytest.Do(t, s, "SET", k, strings.Repeat("\xa5", n))
			strs = append(strs, k)
		}
	}
	encodings := map[string]any{}
	for _, k := range strs {
		encodings[k] = valkeytest.Do(t, s, "OBJECT", "ENCODING", k)
	}
	if !slices.Contains(slices.Collect(maps.Values(encodings)), any("embstr")) || !slices.Contains(slices.Collect(maps.Values(encodings)), any("raw")) {
		t.Fatalf("the strings' encodings %v: want both embstr and raw ones", encodings)
	}
	strs = append(strs, "s:big", "s:empty", bin, "absent")
	strs = append(strs, typed...)
	for _, k := range strs {
		sameRead(t, s, "STRLEN", k)
		for _, off := range []string{"0", "1", "7", "8", "100", "351", "352", "359", "360", "8388607", "8388608",
			"07", "-1", "+1", "1.5", "x", "4294967295", "4294967296", "99999999999999999999"} {
			sameRead(t, s, "GETBIT", k, off)
		}
	}
	for k, enc := range encodings {
		if got := valkeytest.Do(t, s, "OBJECT", "ENCODING", k); got != enc {
			t.Errorf("%s: OBJECT ENCODING %v after the reads, %v before", k, got, enc)
		}
	}

	// a wrong argument count is the server's refusal, through RM_Call
	for _, args := range [][]string{{"HGET", "h:small"}, {"HGET", "h:small", "a", "b"}, {"HMGET", "h:small"},
		{"ZSCORE", "z:small"}, {"ZCARD"}, {"ZCARD", "a", "b"}, {"LLEN"}, {"EXISTS"}, {"STRLEN"}, {"STRLEN", "a", "b"},
		{"GETBIT", "b:raw"}, {"GETBIT", "b:raw", "1", "2"}} {
		got, _ := hostRead(t, s, args[0], args[1:]...)
		if _, ok := got.(valkeyserver.ReplyError); !ok {
			t.Errorf("%q: %s, want an error reply", args, show(got))
		}
	}

	// nothing read created a key
	if n := valkeytest.Do(t, s, "EXISTS", "absent", "missing"); n != int64(0) {
		t.Fatalf("reads created keys: EXISTS %v", n)
	}
}

// Field names passed as the program's own strings (Batch.Str, which the fast
// path answers from the names it keeps) read what the same names passed as
// the server's strings read: more names than the kept slots, so names
// replace each other and come back, names too long to keep, empty and binary
// names, on both encodings of a hash, and the server's own replies.
func TestFastReadsKeptFieldNames(t *testing.T) {
	s := startDebug(t)
	bin := "a\x00b\x00\xff\r\n"
	long := strings.Repeat("n", 25)
	var names []string
	for i := range 300 {
		names = append(names, "f"+strconv.Itoa(i))
	}
	names = append(names, "", bin, long, long+"x", strings.Repeat("n", 24))
	for _, h := range []string{"h:many", "h:large"} {
		args := []string{"HSET", h}
		for i, n := range names {
			if i%3 != 2 { // a third of the names are absent
				args = append(args, n, "v"+strconv.Itoa(i))
			}
		}
		valkeytest.Do(t, s, args...)
	}
	valkeytest.Do(t, s, "HSET", "h:large", "big", strings.Repeat("x", 100))
	if enc := valkeytest.Do(t, s, "OBJECT", "ENCODING", "h:large"); enc != "hashtable" {
		t.Fatalf("h:large is %v", enc)
	}
	valkeytest.Do(t, s, "HSET", "h:lp", "att", "1", "data", "d", "max", "3")
	if enc := valkeytest.Do(t, s, "OBJECT", "ENCODING", "h:lp"); enc != "listpack" {
		t.Fatalf("h:lp is %v", enc)
	}
	same := func(args ...string) {
		t.Helper()
		kept := valkeytest.Reply(t, s, append([]string{"EMQ.DEBUG.CALLSTR"}, args...)...)
		direct := valkeytest.Reply(t, s, args...)
		if !reflect.DeepEqual(kept, direct) {
			t.Errorf("%q: with kept names %s, from the client %s", args, show(kept), show(direct))
		}
		if byRef := valkeytest.Reply(t, s, append([]string{"EMQ.DEBUG.CALL"}, args...)...); !reflect.DeepEqual(kept, byRef) {
			t.Errorf("%q: with kept names %s, by reference %s", args, show(kept), show(byRef))
		}
	}
	for round := range 2 { // the second round meets the names the first left
		for _, h := range []string{"h:many", "h:large", "h:lp", "absent"} {
			for i := round; i < len(names); i += 7 {
				same("HGET", h, names[i])
			}
			same(append([]string{"HMGET", h}, names...)...)
			same("HMGET", h, "att", "data", "max", "att", "uniq", "lane", "", bin, long)
		}
	}
	valkeytest.Do(t, s, "SET", "str", "v")
	same("HGET", "str", "f1")
	same("HMGET", "str", "f1", "f2")
}

// The fast path answers without RM_Call (the server counts no call of the
// command), RM_Call answers the other spellings, and a score the server
// writes with its own routine goes through RM_Call.
func TestFastReadsSkipRMCall(t *testing.T) {
	s := startDebug(t)
	valkeytest.Do(t, s, "HSET", "h", "f", "v")
	valkeytest.Do(t, s, "ZADD", "z", "1767225600000", "ms", "1.5", "half")
	valkeytest.Do(t, s, "RPUSH", "l", "a")
	valkeytest.Do(t, s, "ZADD", "zi", "5", "a", "-7", "b")
	valkeytest.Do(t, s, "SETBIT", "b", "8000", "1") // 1001 bytes: longer than any server embeds
	valkeytest.Do(t, s, "SETBIT", "short", "7", "1")
	valkeytest.Do(t, s, "SET", "long", strings.Repeat("x", 2000)) // raw on every server
	reads := [][]string{{"HGET", "h", "f"}, {"HMGET", "h", "f", "g"}, {"ZSCORE", "z", "ms"}, {"ZCARD", "z"},
		{"LLEN", "l"}, {"EXISTS", "h", "z"}, {"ZRANGE", "z", "0", "1"}, {"STRLEN", "b"}}
	valkeytest.Do(t, s, "CONFIG", "RESETSTAT")
	for _, r := range reads {
		valkeytest.Reply(t, s, append([]string{"EMQ.DEBUG.CALL"}, r...)...)
		if n := calls(t, s, r[0]); n != 0 {
			t.Errorf("%q: %d calls of %s, want none (the fast path)", r, n, r[0])
		}
		valkeytest.Reply(t, s, append([]string{"EMQ.DEBUG.CALL", strings.ToLower(r[0])}, r[1:]...)...)
		if n := calls(t, s, r[0]); n != 1 {
			t.Errorf("%q in lower case: %d calls of %s, want 1 (RM_Call)", r, n, r[0])
		}
	}
	if v := valkeytest.Reply(t, s, "EMQ.DEBUG.CALL", "ZRANGE", "zi", "0", "1", "WITHSCORES"); !reflect.DeepEqual(v, []any{"b", "-7", "a", "5"}) || calls(t, s, "zrange") != 1 {
		t.Errorf("ZRANGE WITHSCORES of integers: %s, %d calls, want the fast path", show(v), calls(t, s, "zrange"))
	}
	if v := valkeytest.Reply(t, s, "EMQ.DEBUG.CALL", "ZRANGE", "z", "0", "0", "WITHSCORES"); !reflect.DeepEqual(v, []any{"half", "1.5"}) || calls(t, s, "zrange") != 2 {
		t.Errorf("ZRANGE WITHSCORES of 1.5: %s, %d calls, want it through RM_Call", show(v), calls(t, s, "zrange"))
	}
	if v := valkeytest.Reply(t, s, "EMQ.DEBUG.CALL", "ZSCORE", "z", "half"); v != "1.5" || calls(t, s, "zscore") != 2 {
		t.Errorf("ZSCORE of 1.5: %s, %d calls, want it through RM_Call", show(v), calls(t, s, "zscore"))
	}

	// GETBIT: fast in a raw string, past the end of a short one and for no
	// key; inside a short string (maybe embstr or int) through RM_Call
	for _, r := range []struct {
		args []string
		fast bool
	}{{[]string{"b", "400"}, true}, {[]string{"long", "15000"}, true}, {[]string{"short", "8"}, true}, {[]string{"absent", "7"}, true},
		{[]string{"short", "7"}, false}, {[]string{"b", "8388608"}, false}} {
		valkeytest.Do(t, s, "CONFIG", "RESETSTAT")
		valkeytest.Reply(t, s, append([]string{"EMQ.DEBUG.CALL", "GETBIT"}, r.args...)...)
		if n, want := calls(t, s, "getbit"), map[bool]int{true: 0, false: 1}[r.fast]; n != want {
			t.Errorf("GETBIT %q: %d calls, want %d", r.args, n, want)
		}
	}
}

// A key past its expiry reads as absent on both paths and the read deletes
// it, as the command does; a read creates nothing.
func TestFastReadsExpired(t *testing.T) {
	s := startDebug(t)
	valkeytest.Do(t, s, "DEBUG", "SET-ACTIVE-EXPIRE", "0")
	type read struct {
		cmd  string
		args []string
		make func(key string)
	}
	reads := []read{
		{"HGET", []string{"f"}, func(k string) { valkeytest.Do(t, s, "HSET", k, "f", "v") }},
		{"HMGET", []string{"f", "g"}, func(k string) { valkeytest.Do(t, s, "HSET", k, "f", "v") }},
		{"ZSCORE", []string{"m"}, func(k string) { valkeytest.Do(t, s, "ZADD", k, "5", "m") }},
		{"ZCARD", nil, func(k string) { valkeytest.Do(t, s, "ZADD", k, "5", "m") }},
		{"LLEN", nil, func(k string) { valkeytest.Do(t, s, "RPUSH", k, "a") }},
		{"EXISTS", nil, func(k string) { valkeytest.Do(t, s, "SET", k, "v") }},
		// a key of another type past its expiry is absent, not WRONGTYPE
		{"HGET", []string{"f"}, func(k string) { valkeytest.Do(t, s, "SET", k, "v") }},
		{"ZCARD", nil, func(k string) { valkeytest.Do(t, s, "SET", k, "v") }},
	}
	for i, r := range reads {
		fast, slow := fmt.Sprintf("x:%d:fast", i), fmt.Sprintf("x:%d:slow", i)
		r.make(fast)
		r.make(slow)
		valkeytest.Do(t, s, "PEXPIRE", fast, "1")
		valkeytest.Do(t, s, "PEXPIRE", slow, "1")
		time.Sleep(5 * time.Millisecond)
		before := valkeytest.Do(t, s, "DBSIZE").(int64)
		got := valkeytest.Reply(t, s, append([]string{"EMQ.DEBUG.CALL", r.cmd, fast}, r.args...)...)
		if after := valkeytest.Do(t, s, "DBSIZE").(int64); after != before-1 {
			t.Errorf("%s of an expired key: DBSIZE %d then %d, want the key deleted", r.cmd, before, after)
		}
		want := valkeytest.Reply(t, s, append([]string{"EMQ.DEBUG.CALL", strings.ToLower(r.cmd), slow}, r.args...)...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s of an expired key: fast path %s, RM_Call %s", r.cmd, show(got), show(want))
		}
		if n := valkeytest.Do(t, s, "DBSIZE").(int64); n != before-2 {
			t.Errorf("%s of an expired key through RM_Call: DBSIZE %d, want %d", r.cmd, n, before-2)
		}
	}
}

// The fast path reads the caller's database, in a transaction and in a
// script too.
func TestFastReadsSelectedDB(t *testing.T) {
	s := startDebug(t)
	c, err := s.Dial(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	do := func(args ...string) any {
		t.Helper()
		v, err := c.Do(ctxT(t), args...)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return v
	}
	valkeytest.Do(t, s, "HSET", "h", "f", "db0")
	do("SELECT", "3")
	do("HSET", "h", "f", "db3")
	if v := do("EMQ.DEBUG.CALL", "HGET", "h", "f"); v != "db3" {
		t.Fatalf("HGET in db 3: %s", show(v))
	}
	if v := do("EVAL", "return redis.call('EMQ.DEBUG.CALL', 'HGET', KEYS[1], 'f')", "1", "h"); v != "db3" {
		t.Fatalf("HGET in db 3 from a script: %s", show(v))
	}
	do("MULTI")
	do("EMQ.DEBUG.CALL", "HMGET", "h", "f")
	do("EMQ.DEBUG.CALL", "EXISTS", "h", "h")
	if v := do("EXEC"); !reflect.DeepEqual(v, []any{[]any{"db3"}, int64(2)}) {
		t.Fatalf("MULTI in db 3: %s", show(v))
	}
}

// A write passes its arguments as the server's scripts pass theirs, so SET
// stores a value with the encoding the Lua executor's SET gives it on the
// same server: int-encoded where scripts pass fresh copies (Valkey 8),
// embedded where they hold their arguments (9.1, Lua as a module).
func TestWriteValueEncoding(t *testing.T) {
	s := startDebug(t)
	sha := map[*protocol.Verb]string{}
	for _, v := range []*protocol.Verb{protocol.Install, protocol.Add} {
		sha[v] = valkeytest.Do(t, s, "SCRIPT", "LOAD", lua.Source(v)).(string)
	}
	run := func(native bool, q string, v *protocol.Verb, args ...string) {
		t.Helper()
		keys := v.KeyNames(protocol.KeysOf(q))
		line := append([]string{v.Command, strconv.Itoa(len(keys))}, keys...)
		if !native {
			line = append([]string{"EVALSHA", sha[v]}, line[1:]...)
		}
		valkeytest.Do(t, s, append(line, args...)...)
	}
	// ADD: count, no option column, then data, priority, delay, attempts, backoff, backoff ms,
	// unique key, unique TTL; none at its default, so the row holds every field
	job := []string{"1", "0", "data", "5", "60000", "4", protocol.BackoffFixed, "0", "order-7", "60000"}
	// a long queue name: its keys, passed by reference, are not copied
	long := strings.Repeat("q", 60)
	for _, q := range []string{"native", "lua", "native" + long, "lua" + long} {
		native := strings.HasPrefix(q, "native")
		run(native, q, protocol.Install)
		run(native, q, protocol.Add, job...)
	}
	for _, c := range []struct {
		key   func(protocol.Keys) string
		queue string
	}{
		{func(k protocol.Keys) string { return k.Version }, ""},
		{func(k protocol.Keys) string { return k.Unique("order-7") }, ""},
		{func(k protocol.Keys) string { return k.Version }, long},
		{func(k protocol.Keys) string { return k.Unique("order-7") }, long},
	} {
		n, l := c.key(protocol.KeysOf("native"+c.queue)), c.key(protocol.KeysOf("lua"+c.queue))
		en, el := valkeytest.Do(t, s, "OBJECT", "ENCODING", n), valkeytest.Do(t, s, "OBJECT", "ENCODING", l)
		if en != el {
			t.Errorf("OBJECT ENCODING: %s %v, %s %v; want the same", n, en, l, el)
		}
		if vn, vl := valkeytest.Do(t, s, "GET", n), valkeytest.Do(t, s, "GET", l); vn != vl {
			t.Errorf("GET: %s %v, %s %v", n, vn, l, vl)
		}
	}
	// the row: one HSET of 17 arguments, more than the format has specifiers
	// (its "at" is each executor's clock)
	for _, q := range []string{"", long} {
		n, l := protocol.KeysOf("native"+q).Job("1"), protocol.KeysOf("lua"+q).Job("1")
		valkeytest.Do(t, s, "HSET", n, "at", "0")
		valkeytest.Do(t, s, "HSET", l, "at", "0")
		hn, hl := valkeytest.Do(t, s, "HGETALL", n), valkeytest.Do(t, s, "HGETALL", l)
		if len(hn.([]any)) != 16 || !reflect.DeepEqual(hn, hl) {
			t.Errorf("HGETALL: %s %s, %s %s", n, show(hn), l, show(hl))
		}
	}
}

// In cluster mode every read goes through RM_Call, which refuses a key of a
// slot the node does not serve: the fast path is off.
func TestFastReadsOffInCluster(t *testing.T) {
	s := valkeytest.Start(t, valkeyserver.Options{
		Module:     valkeytest.ModulePath(t),
		ModuleArgs: []string{"debug-commands", "yes"},
		Cluster:    true,
	})
	valkeytest.Do(t, s, "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
	deadline := time.Now().Add(10 * time.Second)
	for {
		info := valkeytest.Do(t, s, "CLUSTER", "INFO").(string)
		if strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster did not come up: %s", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	valkeytest.Do(t, s, "HSET", "h", "f", "v")
	valkeytest.Do(t, s, "CONFIG", "RESETSTAT")
	if v := valkeytest.Reply(t, s, "EMQ.DEBUG.CALL", "HGET", "h", "f"); v != "v" || calls(t, s, "hget") != 1 {
		t.Fatalf("HGET in a cluster: %s, %d calls, want it through RM_Call", show(v), calls(t, s, "hget"))
	}
}
