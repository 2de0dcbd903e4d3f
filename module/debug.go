package main

import (
	"runtime"
	"runtime/metrics"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
)

// debugTable lists the commands registered with "debug-commands yes" only:
// they prove the host's promises against a real server in tests, and have no
// place in production.
func debugTable() []host.Command {
	return []host.Command{
		{
			Name: "EMQ.DEBUG.PANIC", Flags: "readonly", Arity: 1, Handler: debugPanic,
			Summary: "Panics in Go: the reply must be an error and the server must live on.",
		},
		{
			Name: "EMQ.DEBUG.CALL", Flags: "readonly", Arity: -2, Handler: debugCall, Debug: true,
			Summary: "Runs one host read (format vEW) and replies with its reply re-encoded.",
		},
		{
			Name: "EMQ.DEBUG.CALLSTR", Flags: "readonly", Arity: -3, Handler: debugCallStr, Debug: true,
			Summary: "EMQ.DEBUG.CALL with the arguments after the key passed as the program's own strings.",
		},
		{
			Name: "EMQ.DEBUG.NEST", Flags: "readonly", Arity: -2, Handler: debugNest, Debug: true,
			Summary: "Runs one command as another module's command would (format vE, writes allowed), and replies with its reply re-encoded.",
		},
		{
			Name: "EMQ.DEBUG.KEYS", Flags: "write deny-oom", Keys: host.WriteKeys, Arity: -2, Handler: debugKeys,
			Summary: "HINCRBY key n 1 on each declared key and each derived key after them, past the guard.",
		},
		{
			Name: "EMQ.DEBUG.RUNTIME", Flags: "readonly", Arity: 1, Handler: debugRuntime,
			Summary: "Replies [gomaxprocs, gcpercent, memlimit, heap objects allocated, GC cycles].",
		},
	}
}

// debugPanic: EMQ.DEBUG.PANIC.
func debugPanic(*host.Call) error {
	panic("EMQ.DEBUG.PANIC")
}

// debugCall: EMQ.DEBUG.CALL <command> [arg …] runs the command with the read
// format and replies with its reply as the same RESP2 structure; an error
// reply (or a reply the host refuses) is the error reply. The arguments are
// passed by reference, as the server's own strings. The command may be any
// (host.Call.DebugRead): a write is refused by the read format.
func debugCall(c *host.Call) error { return debugRun(c, c.DebugRead()) }

// debugCallStr: EMQ.DEBUG.CALLSTR <command> <key> [arg …] runs the read as
// EMQ.DEBUG.CALL does, the key by reference and the arguments after it as
// the program's own strings (host.Batch.Str), as the verbs pass field names.
func debugCallStr(c *host.Call) error {
	b := c.DebugRead().Cmd(string(c.Arg(1))).Argv(2)
	for i := 3; i < c.Argc(); i++ {
		b.Str(string(c.Arg(i)))
	}
	v, err := b.Do()
	if err != nil {
		return err
	}
	echo(c, v)
	return nil
}

// debugNest: EMQ.DEBUG.NEST <command> [arg …] runs the command as another
// module's command runs it (host.Call.DebugNested): a write runs, and a verb
// called this way is not held by CLIENT PAUSE WRITE, so it meets its write
// guard. The reply is echoed as EMQ.DEBUG.CALL's.
func debugNest(c *host.Call) error { return debugRun(c, c.DebugNested()) }

// debugRun runs the call's command and arguments in b and echoes the reply:
// EMQ.DEBUG.CALL and EMQ.DEBUG.NEST differ only in the batch's format.
func debugRun(c *host.Call, b *host.DebugReadBatch) error {
	b.Cmd(string(c.Arg(1)))
	for i := 2; i < c.Argc(); i++ {
		b.Argv(i)
	}
	v, err := b.Do()
	if err != nil {
		return err
	}
	echo(c, v)
	return nil
}

// echo writes v as the reply.
func echo(c *host.Call, v host.Value) {
	switch v.Kind() {
	case host.KindString:
		c.ReplyBulk(v.Text())
	case host.KindInt:
		n, _ := v.Int()
		c.ReplyInt(n)
	case host.KindError:
		c.ReplyError(string(v.Text()))
	case host.KindArray:
		c.ReplyArray(v.Len())
		v.Elems(func(_ int, e host.Value) bool {
			echo(c, e)
			return true
		})
	default:
		c.ReplyNull()
	}
}

// debugKeys: EMQ.DEBUG.KEYS numkeys key… [derived …] checks the derived keys
// (outside the key-spec) against the caller's ACL, passes the guard, then runs
// HINCRBY <key> n 1 on every key in one write batch, and replies the new
// values as an array.
func debugKeys(c *host.Call) error {
	n, err := numkeys(c.Arg(1), c.Argc()-2)
	if err != nil {
		return err
	}
	argv := c.Argv()
	derived := argv[2+n:]
	if err := c.CheckKeys(host.KeyRead|host.KeyUpdate, derived...); err != nil {
		return err
	}
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write()
	for i := 2; i < len(argv); i++ {
		b.Cmd("HINCRBY").Argv(i).Str("n").Int(1)
	}
	if len(argv) == 2 {
		c.ReplyArray(0)
		return nil
	}
	res, err := b.Run()
	if err != nil {
		return err
	}
	c.ReplyArray(res.Len())
	for i := range res.Len() {
		v, _ := res.At(i)
		x, err := v.Int()
		if err != nil {
			return err
		}
		c.ReplyInt(x)
	}
	return nil
}

// numkeys parses numkeys with the EVAL family's rules and texts; max is how
// many arguments follow it.
func numkeys(arg []byte, max int) (int, error) {
	if len(arg) == 0 || len(arg) > 9 || (arg[0] == '0' && len(arg) > 1) {
		return 0, host.Error(protocol.ErrNotInteger)
	}
	n := 0
	for i, ch := range arg {
		if ch == '-' && i == 0 && len(arg) > 1 {
			return 0, host.Error(protocol.ErrNumkeysNegative)
		}
		if ch < '0' || ch > '9' {
			return 0, host.Error(protocol.ErrNotInteger)
		}
		n = n*10 + int(ch-'0')
	}
	if n > max {
		return 0, host.Error(protocol.ErrNumkeysTooMany)
	}
	return n, nil
}

// debugRuntime: EMQ.DEBUG.RUNTIME, the Go runtime's settings as applied,
// its allocation count (a test checks that host calls allocate nothing),
// its GC cycles and the bytes of its live heap after a collection it forces
// (the soak samples it).
func debugRuntime(c *host.Call) error {
	samples := []metrics.Sample{
		{Name: "/gc/gogc:percent"},
		{Name: "/gc/gomemlimit:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	metrics.Read(samples)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	runtime.GC()
	runtime.ReadMemStats(&ms)
	c.ReplyArray(6)
	c.ReplyInt(int64(runtime.GOMAXPROCS(0)))
	c.ReplyInt(int64(samples[0].Value.Uint64()))
	c.ReplyInt(int64(samples[1].Value.Uint64()))
	c.ReplyInt(int64(mallocs))
	c.ReplyInt(int64(samples[2].Value.Uint64()))
	c.ReplyInt(int64(ms.HeapAlloc))
	return nil
}
