// Package executor runs protocol verbs on a server through one of the two
// executors: the Lua scripts (EVALSHA) or the native module's EMQ.*
// commands. The client, the conformance suite, the differential test and
// the benchmarks share it; Raw exists so tests can send malformed calls
// exactly as a client could.
package executor

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/lua"
	"github.com/trafikey/trafikey/internal/protocol"
)

// Executor runs protocol verbs on a server. The two executors, Lua and
// native, take the same keys and arguments and give the same replies; a Queue
// is opened on one of them.
type Executor interface {
	// Name is "lua" or "native".
	Name() string
	// Exec runs verb v with its declared keys and arguments and returns the
	// raw reply.
	Exec(ctx context.Context, v *protocol.Verb, keys, args []string) valkey.ValkeyResult
	// Raw runs verb v with numkeys spelled as given and rest as the keys and
	// arguments after it: a malformed call, exactly as a client could send it.
	Raw(ctx context.Context, v *protocol.Verb, numkeys string, rest []string) valkey.ValkeyResult
	// ExecThen runs verb v as Exec does, then the commands then builds, on
	// the same connection and in one round trip: WAIT and WAITAOF count
	// the writes of their own connection. It returns the verb's reply and
	// theirs.
	ExecThen(ctx context.Context, v *protocol.Verb, keys, args []string, then Then) (valkey.ValkeyResult, []valkey.ValkeyResult)
}

// Then builds the commands that follow a verb on its connection. Commands
// are built anew for each send, as a built command is sent once.
type Then func(b valkey.Builder) []valkey.Completed

// onOneConn sends cmd and then's commands on one connection of client (a
// dedicated one: of the node that owns cmd's slot, in a cluster) and returns
// their replies. retry, when it is not nil, builds the verb again for a
// second send, made when the first reply asks for it.
func onOneConn(ctx context.Context, client valkey.Client, cmd func(valkey.Builder) valkey.Completed, then Then,
	again func(first valkey.ValkeyResult) func(valkey.Builder) valkey.Completed) (valkey.ValkeyResult, []valkey.ValkeyResult) {
	var out []valkey.ValkeyResult
	_ = client.Dedicated(func(dc valkey.DedicatedClient) error {
		send := func(c func(valkey.Builder) valkey.Completed) {
			out = dc.DoMulti(ctx, append([]valkey.Completed{c(dc.B())}, then(dc.B())...)...)
		}
		send(cmd)
		if again != nil {
			if c := again(out[0]); c != nil {
				send(c)
			}
		}
		return nil
	})
	if len(out) == 0 {
		// No dedicated connection was handed out: the verb alone, and no
		// confirmation, which the caller reports as not confirmed.
		return client.Do(ctx, cmd(client.B())), nil
	}
	return out[0], out[1:]
}

// Lua is the executor that runs each verb's script with EVALSHA. It needs
// nothing installed on the server.
type Lua struct {
	client valkey.Client
	sha    map[*protocol.Verb]string
	source map[*protocol.Verb]string
}

// NewLua returns the Lua executor on client.
func NewLua(client valkey.Client) *Lua {
	s := scripts()
	return &Lua{client: client, sha: s.sha, source: s.source}
}

// scriptSet is every verb's script and its SHA1, read only once built.
type scriptSet struct {
	sha, source map[*protocol.Verb]string
}

// scripts builds the scripts once per process, on the first NewLua: they
// are constant, and building them (pruning the library for each verb)
// costs tens of ms, which a process opening a hundred queues (the
// dashboard) would pay a hundred times.
var scripts = sync.OnceValue(func() scriptSet {
	s := scriptSet{sha: map[*protocol.Verb]string{}, source: map[*protocol.Verb]string{}}
	for _, v := range protocol.All {
		src := lua.Source(v)
		sum := sha1.Sum([]byte(src))
		s.source[v] = src
		s.sha[v] = hex.EncodeToString(sum[:])
	}
	return s
})

// Name implements Executor.
func (l *Lua) Name() string { return "lua" }

// Exec implements Executor.
func (l *Lua) Exec(ctx context.Context, v *protocol.Verb, keys, args []string) valkey.ValkeyResult {
	return l.run(ctx, v, strconv.Itoa(len(keys)), keys, args)
}

// Raw implements Executor.
func (l *Lua) Raw(ctx context.Context, v *protocol.Verb, numkeys string, rest []string) valkey.ValkeyResult {
	return l.run(ctx, v, numkeys, nil, rest)
}

func (l *Lua) run(ctx context.Context, v *protocol.Verb, numkeys string, keys, args []string) valkey.ValkeyResult {
	bySHA, bySource := l.commands(v, numkeys, keys, args)
	res := l.client.Do(ctx, bySHA(l.client.B()))
	if noScript(res) {
		res = l.client.Do(ctx, bySource(l.client.B()))
	}
	return res
}

// commands builds verb v's call by its script's SHA1 and by its source
// (the first time a server runs the script).
func (l *Lua) commands(v *protocol.Verb, numkeys string, keys, args []string) (bySHA, bySource func(valkey.Builder) valkey.Completed) {
	build := func(head, body string) func(valkey.Builder) valkey.Completed {
		return func(b valkey.Builder) valkey.Completed {
			c := b.Arbitrary(head, body, numkeys)
			if len(keys) > 0 {
				c = c.Keys(keys...)
			}
			return c.Args(args...).Build()
		}
	}
	// A read verb runs as EVALSHA_RO: read-only users may call it, and the
	// server does not hold it during CLIENT PAUSE WRITE, as it does not
	// hold the native readonly command.
	evalsha, eval := "EVALSHA", "EVAL"
	if !v.Write {
		evalsha, eval = "EVALSHA_RO", "EVAL_RO"
	}
	return build(evalsha, l.sha[v]), build(eval, l.source[v])
}

// noScript reports whether res is the server's NOSCRIPT: it does not hold
// the script yet.
func noScript(res valkey.ValkeyResult) bool {
	err, ok := valkey.IsValkeyErr(res.Error())
	return ok && err.IsNoScript()
}

// ExecThen implements Executor.
func (l *Lua) ExecThen(ctx context.Context, v *protocol.Verb, keys, args []string, then Then) (valkey.ValkeyResult, []valkey.ValkeyResult) {
	bySHA, bySource := l.commands(v, strconv.Itoa(len(keys)), keys, args)
	return onOneConn(ctx, l.client, bySHA, then, func(first valkey.ValkeyResult) func(valkey.Builder) valkey.Completed {
		if noScript(first) {
			return bySource
		}
		return nil
	})
}

// Native is the executor that calls the trafikey module's EMQ.* commands.
type Native struct {
	client valkey.Client
}

// NewNative returns the native executor on client. The server must have the
// module loaded; see Probe.
func NewNative(client valkey.Client) *Native { return &Native{client: client} }

// Name implements Executor.
func (n *Native) Name() string { return "native" }

// Exec implements Executor.
func (n *Native) Exec(ctx context.Context, v *protocol.Verb, keys, args []string) valkey.ValkeyResult {
	cmd := n.client.B().Arbitrary(v.Command, strconv.Itoa(len(keys))).Keys(keys...).Args(args...).Build()
	return n.client.Do(ctx, cmd)
}

// ExecBlocking runs v as a blocking command (CLAIM with a block time): on a
// connection of the client's dedicated pool, so it holds up no pipelined
// call, and, when ctx ends while the server holds it, released with CLIENT
// UNBLOCK, which the module answers as a timeout (the empty array, nothing
// written).
func (n *Native) ExecBlocking(ctx context.Context, v *protocol.Verb, keys, args []string) valkey.ValkeyResult {
	cmd := n.client.B().Arbitrary(v.Command, strconv.Itoa(len(keys))).Keys(keys...).Args(args...).Blocking().UnblockOnCancel()
	return n.client.Do(ctx, cmd)
}

// ExecThen implements Executor.
func (n *Native) ExecThen(ctx context.Context, v *protocol.Verb, keys, args []string, then Then) (valkey.ValkeyResult, []valkey.ValkeyResult) {
	cmd := func(b valkey.Builder) valkey.Completed {
		return b.Arbitrary(v.Command, strconv.Itoa(len(keys))).Keys(keys...).Args(args...).Build()
	}
	return onOneConn(ctx, n.client, cmd, then, nil)
}

// Raw implements Executor.
func (n *Native) Raw(ctx context.Context, v *protocol.Verb, numkeys string, rest []string) valkey.ValkeyResult {
	return n.client.Do(ctx, n.client.B().Arbitrary(v.Command, numkeys).Args(rest...).Build())
}

// Probe reports whether the server behind client has the trafikey module
// loaded with this wire: EMQ.VERSION answers protocol.Wire.
func Probe(ctx context.Context, client valkey.Client) bool {
	v, err := client.Do(ctx, client.B().Arbitrary(protocol.VersionCommand).Build()).AsInt64()
	return err == nil && v == protocol.Wire
}

// Detect returns the native executor when the module is loaded, else the
// Lua executor. A call that does not reach the server, or an error reply
// for which passing reports true (the server did not run the command for
// now: it is loading its data), is an error, not a verdict: a server down
// or loading for a moment must not make a queue Lua for good.
func Detect(ctx context.Context, client valkey.Client, passing func(error) bool) (Executor, error) {
	res := client.Do(ctx, client.B().Arbitrary(protocol.VersionCommand).Build())
	if err := res.NonValkeyError(); err != nil {
		return nil, err
	}
	if err := res.Error(); err != nil && passing(err) {
		return nil, err
	}
	if v, err := res.AsInt64(); err == nil && v == protocol.Wire {
		return NewNative(client), nil
	}
	return NewLua(client), nil
}

// Missing says why the native executor cannot run every verb on the server
// behind client, or returns "" when it can: the module answers EMQ.VERSION
// with this wire and registers every job-core verb. The demo falls back to
// Lua on it; the tests fail on it.
func Missing(ctx context.Context, client valkey.Client) string {
	if !Probe(ctx, client) {
		return "the server has no module answering " + protocol.VersionCommand + " with wire " + protocol.WireString
	}
	var missing []string
	for _, v := range protocol.All {
		info, err := client.Do(ctx, client.B().CommandInfo().CommandName(v.Command).Build()).ToArray()
		if err != nil || len(info) == 0 || info[0].IsNil() {
			missing = append(missing, v.Command)
		}
	}
	if len(missing) > 0 {
		return "the loaded module does not register " + strings.Join(missing, " ")
	}
	return ""
}
