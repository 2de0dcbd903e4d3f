package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// traStates are the values a TRA key starts from: no key, strings of each
// encoding (embstr, int, a shared small integer, raw), lengths around where
// each server stops embedding a string (44 bytes on Valkey 8, 116 at most on
// 9.1), and a list (wrong type).
var traStates = []struct {
	name  string
	setup []string // the command that makes the key, "" for none; %k is the key
}{
	{"absent", nil},
	{"embstr", []string{"SET", "%k", "abc"}},
	{"int", []string{"SET", "%k", "12345"}},
	{"shared-int", []string{"SET", "%k", "7"}},
	{"len-44", []string{"SET", "%k", strings.Repeat("e", 44)}},
	{"len-45", []string{"SET", "%k", strings.Repeat("f", 45)}},
	{"len-100", []string{"SET", "%k", strings.Repeat("\xff", 100)}},
	{"len-110", []string{"SET", "%k", strings.Repeat("g", 110)}},
	{"len-113", []string{"SET", "%k", strings.Repeat("h", 113)}},
	{"len-200", []string{"SET", "%k", strings.Repeat("i", 200)}},
	{"setbit-made", []string{"SETBIT", "%k", "3", "1"}},
	{"with-ttl", []string{"SET", "%k", "abc", "PXAT", "4102444800000"}},
	{"list", []string{"RPUSH", "%k", "x"}},
}

func withKey(cmd []string, key string) []string {
	out := make([]string, len(cmd))
	for i, a := range cmd {
		out[i] = strings.ReplaceAll(a, "%k", key)
	}
	return out
}

// plain is the server's own command for a TRA call.
func plain(cmd []string) []string {
	out := append([]string(nil), cmd...)
	out[0] = strings.TrimPrefix(out[0], "TRA.")
	return out
}

// A TRA call leaves the key as the server's own command leaves it: the
// same reply, the same value and length, the same encoding (SETBIT leaves
// any string it looked at raw, a bit written or not), the same memory, on
// strings of every encoding and length, inside and past the end (growth).
func TestTRAEncodingParity(t *testing.T) {
	t.Parallel()
	for _, pre := range []string{"yes", "no"} {
		t.Run("tra-c-"+pre, func(t *testing.T) {
			t.Parallel()
			s := startModule(t, valkeyserver.Options{ModuleArgs: []string{"tra-c", pre}})
			n := 0
			for _, st := range traStates {
				if st.name == "list" {
					continue
				}
				for _, op := range [][]string{
					{"TRA.GETBIT", "%k", "0"}, {"TRA.GETBIT", "%k", "9"}, {"TRA.GETBIT", "%k", "1000"},
					{"TRA.SETBIT", "%k", "1", "0"}, {"TRA.SETBIT", "%k", "1", "1"}, {"TRA.SETBIT", "%k", "2", "1"},
					{"TRA.SETBIT", "%k", "1000", "0"}, {"TRA.SETBIT", "%k", "1000", "1"},
					{"TRA.SETBIT", "%k", "361", "0"}, {"TRA.SETBIT", "%k", "8388607", "0"}, {"TRA.SETBIT", "%k", "8388608", "1"},
				} {
					n++
					tk, rk := "t:"+strconv.Itoa(n), "r:"+strconv.Itoa(n)
					if st.setup != nil {
						valkeytest.Do(t, s, withKey(st.setup, tk)...)
						valkeytest.Do(t, s, withKey(st.setup, rk)...)
					}
					what := fmt.Sprintf("%s on %s", op, st.name)
					require.Equal(t, valkeytest.Reply(t, s, plain(withKey(op, rk))...), valkeytest.Reply(t, s, withKey(op, tk)...), what)
					for _, probe := range [][]string{{"EXISTS"}, {"OBJECT", "ENCODING"}, {"STRLEN"}, {"GET"}, {"MEMORY", "USAGE"}} {
						require.Equal(t, valkeytest.Reply(t, s, append(probe, rk)...), valkeytest.Reply(t, s, append(probe, tk)...), "%s: %s", what, probe)
					}
					hasTTL := func(k string) bool { return valkeytest.Reply(t, s, "PTTL", k).(int64) > 0 }
					require.Equal(t, hasTTL(rk), hasTTL(tk), "%s: the expiry", what)
				}
			}
		})
	}
}

// The keyspace events of a TRA call are exactly the server's command's: a
// setbit event (class string) when the bit was written or the string
// created or grown, none when it changed nothing; the events of the key's
// creation (new) and of a read miss (keymiss) as the command gives them.
func TestTRANotifications(t *testing.T) {
	t.Parallel()
	for _, pre := range []string{"yes", "no"} {
		t.Run("tra-c-"+pre, func(t *testing.T) {
			t.Parallel()
			s := startModule(t, valkeyserver.Options{ModuleArgs: []string{"tra-c", pre}})
			valkeytest.Do(t, s, "CONFIG", "SET", "notify-keyspace-events", "EAnm")
			c := valkeytest.Client(t, s)
			msgs := make(chan valkey.PubSubMessage, 4096)
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			go func() {
				_ = c.Receive(ctx, c.B().Psubscribe().Pattern("__keyevent@0__:*", "mark").Build(), func(m valkey.PubSubMessage) { msgs <- m })
			}()
			// events per key prefix up to the next mark
			until := func(mark string) map[string][]string {
				got := map[string][]string{}
				for m := range msgs {
					if m.Channel == "mark" {
						if m.Message == mark {
							return got
						}
						continue
					}
					prefix, _, _ := strings.Cut(m.Message, ":")
					got[prefix] = append(got[prefix], strings.TrimPrefix(m.Channel, "__keyevent@0__:"))
				}
				return got
			}
			// a mark published before the subscription is in place is lost:
			// publish again until one comes back
			deadline := ctxT(t)
			for ready := false; !ready; {
				valkeytest.Do(t, s, "PUBLISH", "mark", "ready")
				select {
				case m := <-msgs:
					ready = m.Channel == "mark"
				case <-time.After(50 * time.Millisecond):
				case <-deadline.Done():
					t.Fatal("no subscription")
				}
			}
			n, events := 0, 0
			for _, st := range traStates {
				for _, op := range [][]string{
					{"TRA.GETBIT", "%k", "3"}, {"TRA.GETBIT", "%k", "900"},
					{"TRA.SETBIT", "%k", "3", "1"}, {"TRA.SETBIT", "%k", "3", "0"}, {"TRA.SETBIT", "%k", "1", "0"},
					{"TRA.SETBIT", "%k", "900", "0"}, {"TRA.SETBIT", "%k", "8388608", "0"},
				} {
					n++
					tk, rk := "t"+strconv.Itoa(n)+":k", "r"+strconv.Itoa(n)+":k"
					if st.setup != nil {
						valkeytest.Do(t, s, withKey(st.setup, tk)...)
						valkeytest.Do(t, s, withKey(st.setup, rk)...)
					}
					setup := "setup" + strconv.Itoa(n)
					valkeytest.Do(t, s, "PUBLISH", "mark", setup)
					until(setup)
					valkeytest.Reply(t, s, withKey(op, tk)...)
					valkeytest.Reply(t, s, plain(withKey(op, rk))...)
					done := "done" + strconv.Itoa(n)
					valkeytest.Do(t, s, "PUBLISH", "mark", done)
					got := until(done)
					require.Equal(t, got["r"+strconv.Itoa(n)], got["t"+strconv.Itoa(n)], "%s on %s", op, st.name)
					events += len(got["t"+strconv.Itoa(n)])
				}
			}
			require.Positive(t, events, "no event seen at all")
		})
	}
}

// traDiffCalls is every case of the differential test: each key state,
// offsets at 0, inside, at the end, past it, at the bounds of the bit
// call's range and of the family's, each value, each call twice (the
// second changes nothing), and the refusals.
func traDiffCalls() [][]string {
	var calls [][]string
	offsets := []string{"0", "7", "8", "23", "100", "799", "800", "801", strconv.Itoa(host.SmallBitOffsets - 1), strconv.Itoa(host.SmallBitOffsets)}
	for _, st := range append(traStates, struct {
		name  string
		setup []string
	}{"binary", []string{"SET", "%k", "\x00\xffzz"}}) {
		key := "d:" + st.name
		if st.name == "binary" {
			key = "d:\x00\xff\r\n bin"
		}
		if st.setup != nil {
			calls = append(calls, withKey(st.setup, key))
		}
		for _, o := range offsets {
			for _, v := range []string{"1", "0"} {
				calls = append(calls, []string{"TRA.GETBIT", key, o}, []string{"TRA.SETBIT", key, o, v}, []string{"TRA.SETBIT", key, o, v}, []string{"TRA.GETBIT", key, o})
			}
		}
		calls = append(calls, []string{"TRA.GETBIT", key, strconv.Itoa(protocol.MaxBitOffset)}, []string{"TRA.GETBIT", key, "4294967296"},
			[]string{"TRA.SETBIT", key, "4294967296", "1"}, []string{"TRA.SETBIT", key, "-1", "1"}, []string{"TRA.SETBIT", key, "01", "1"},
			[]string{"TRA.SETBIT", key, "x", "1"}, []string{"TRA.GETBIT", key, "01"}, []string{"TRA.SETBIT", key, "5", "2"},
			[]string{"TRA.SETBIT", key, "5", "01"}, []string{"TRA.SETBIT", key, "5", ""}, []string{"TRA.SETBIT", key, "5", "-0"})
	}
	calls = append(calls, []string{"TRA.SETBIT", "d:list", strconv.Itoa(protocol.MaxBitOffset), "1"})
	// offsets and values C and the handler's grammar parse each their own
	// way, on no key and on a string
	for _, key := range []string{"d:odd", "d:len-100"} {
		for _, o := range []string{"", " 1", "1 ", "+1", "-0", "00", "007", "4294967296", "42949672950", "99999999999999999999",
			"18446744073709551615", "1e3", "0x1", "1.0", "\uff17", "7\x00", "\x007", "#1"} {
			calls = append(calls, []string{"TRA.SETBIT", key, o, "1"}, []string{"TRA.GETBIT", key, o})
		}
		for _, v := range []string{"", "00", "10", "+1", " 1", "1 ", "-1", "true", "1\x00", "\x001", "0x1", "\uff11"} {
			calls = append(calls, []string{"TRA.SETBIT", key, "3", v})
		}
	}
	return calls
}

// C (tra-c yes) and the Go handlers (tra-c no) answer every case alike,
// and leave the same dataset, AOF, replica, and dirty count; both answer
// as SETBIT and GETBIT do (an error where they refuse, the TRA family's own
// texts aside) and leave what they leave; and every TRA.SETBIT that C
// answers replies and writes as the handler's verdict says for the bit
// and the length it found (the verdict is the oracle of C's decision).
func TestTRAInCDifferential(t *testing.T) {
	skipInShort(t, "thousands of TRA calls on five servers")
	t.Parallel()
	yes := startModule(t, valkeyserver.Options{AOF: true})
	no := startModule(t, valkeyserver.Options{AOF: true, ModuleArgs: []string{"tra-c", "no"}})
	raw := startModule(t, valkeyserver.Options{AOF: true})
	yesR := startModule(t, valkeyserver.Options{ReplicaOf: yes.Addr()})
	noR := startModule(t, valkeyserver.Options{ReplicaOf: no.Addr(), ModuleArgs: []string{"tra-c", "no"}})
	require.NoError(t, yesR.WaitReplicaSync(ctxT(t)))
	require.NoError(t, noR.WaitReplicaSync(ctxT(t)))
	changed, setups := 0, 0
	oracled := 0
	for _, call := range traDiffCalls() {
		check := traOracle(t, yes, call)
		a, b := valkeytest.Reply(t, yes, call...), valkeytest.Reply(t, no, call...)
		require.Equal(t, a, b, "%q: C and the Go handler", call)
		if check != nil {
			check(a)
			oracled++
		}
		if !strings.HasPrefix(call[0], "TRA.") {
			valkeytest.Reply(t, raw, call...)
			if call[0] == "SETBIT" {
				setups++
			}
			continue
		}
		want := valkeytest.Reply(t, raw, plain(call)...)
		_, wantErr := want.(valkeyserver.ReplyError)
		_, gotErr := a.(valkeyserver.ReplyError)
		require.Equal(t, wantErr, gotErr, "%q: %v, the server's command %v", call, a, want)
		if !gotErr {
			require.Equal(t, want, a, "%q", call)
		}
		if call[0] == "TRA.SETBIT" && !gotErr {
			changed++
		}
	}
	for _, k := range []string{"d:absent", "d:embstr", "d:int", "d:shared-int", "d:len-100", "d:len-110", "d:len-200", "d:\x00\xff\r\n bin"} {
		require.Equal(t, valkeytest.Reply(t, raw, "OBJECT", "ENCODING", k), valkeytest.Reply(t, yes, "OBJECT", "ENCODING", k), k)
		require.Equal(t, valkeytest.Reply(t, raw, "OBJECT", "ENCODING", k), valkeytest.Reply(t, no, "OBJECT", "ENCODING", k), k)
	}
	snap := valkeytest.Snapshot(t, raw, "*")
	valkeytest.RequireUnchanged(t, snap, valkeytest.Snapshot(t, yes, "*"))
	valkeytest.RequireUnchanged(t, snap, valkeytest.Snapshot(t, no, "*"))
	valkeytest.WaitReplicated(t, yes, yesR)
	valkeytest.WaitReplicated(t, no, noR)
	valkeytest.RequireUnchanged(t, snap, valkeytest.Snapshot(t, yesR, "*"))
	valkeytest.RequireUnchanged(t, snap, valkeytest.Snapshot(t, noR, "*"))
	require.Equal(t, readAOF(t, yes), readAOF(t, no), "the AOFs")
	rawAOF := readAOF(t, raw)
	setbits := strings.Count(rawAOF, "$6\r\nSETBIT\r\n") - setups
	require.Equal(t, setbits, strings.Count(readAOF(t, yes), "$10\r\nTRA.SETBIT\r\n"), "one verbatim TRA.SETBIT per SETBIT that changed the string")
	require.Less(t, setbits, changed, "some calls changed nothing")
	require.Greater(t, oracled, 300, "TRA.SETBIT calls held to the verdict")
	for _, f := range []string{"rdb_changes_since_last_save"} {
		want := infoField(t, raw, "persistence", f)
		require.Equal(t, want, infoField(t, yes, "persistence", f), f)
		require.Equal(t, want, infoField(t, no, "persistence", f), f)
	}
}

// A TRA call on a key of another type is refused with the family's text
// and writes nothing: no AOF, no replication, no dirty count, no event.
func TestTRAWrongTypeWritesNothing(t *testing.T) {
	t.Parallel()
	for _, pre := range []string{"yes", "no"} {
		t.Run("tra-c-"+pre, func(t *testing.T) {
			t.Parallel()
			s := startModule(t, valkeyserver.Options{AOF: true, ModuleArgs: []string{"tra-c", pre}})
			valkeytest.Do(t, s, "HSET", "h", "f", "v")
			valkeytest.Do(t, s, "RPUSH", "l", "x")
			before := valkeytest.Snapshot(t, s, "*")
			size, offset := aofSize(t, s), infoField(t, s, "replication", "master_repl_offset")
			dirty := infoField(t, s, "persistence", "rdb_changes_since_last_save")
			for _, k := range []string{"h", "l"} {
				for _, c := range [][]string{{"TRA.SETBIT", k, "0", "1"}, {"TRA.SETBIT", k, "0", "0"}, {"TRA.SETBIT", k, "80000", "1"}, {"TRA.SETBIT", k, "8388608", "1"}, {"TRA.GETBIT", k, "0"}, {"TRA.GETBIT", k, "8388608"}} {
					wantRefused(t, s, protocol.ErrTRAWrongType, c...)
				}
			}
			valkeytest.RequireUnchanged(t, before, valkeytest.Snapshot(t, s, "*"))
			require.Equal(t, size, aofSize(t, s))
			require.Equal(t, offset, infoField(t, s, "replication", "master_repl_offset"))
			require.Equal(t, dirty, infoField(t, s, "persistence", "rdb_changes_since_last_save"))
		})
	}
}

// An offset past the server's bound (8 bits a byte of proto-max-bulk-len)
// is refused as SETBIT and GETBIT refuse it, in their words, writing
// nothing; one within it is set, also from a script.
func TestTRAServerBound(t *testing.T) {
	t.Parallel()
	onEachTRAPath(t, func(t *testing.T, args []string) {
		traServerBound(t, startModule(t, valkeyserver.Options{ModuleArgs: args}))
	})
}

func traServerBound(t *testing.T, s *valkeyserver.Server) {
	valkeytest.Do(t, s, "CONFIG", "SET", "proto-max-bulk-len", "1mb")
	valkeytest.Do(t, s, "RPUSH", "list", "x")
	for _, c := range [][]string{{"TRA.SETBIT", "k", "8388608", "1"}, {"TRA.GETBIT", "k", "8388608"}, {"TRA.SETBIT", "k", "4294967295", "0"},
		{"TRA.SETBIT", "list", "8388608", "1"}, {"TRA.GETBIT", "list", "8388608"}} {
		require.Equal(t, valkeytest.Reply(t, s, plain(c)...), valkeytest.Reply(t, s, c...), "%q", c)
		require.IsType(t, valkeyserver.ReplyError(""), valkeytest.Reply(t, s, c...))
	}
	require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", "k"))
	require.Equal(t, int64(0), valkeytest.Do(t, s, "TRA.SETBIT", "k", "8388607", "1"))
	require.Equal(t, int64(1<<20), valkeytest.Do(t, s, "STRLEN", "k"))
	valkeytest.Do(t, s, "CONFIG", "SET", "proto-max-bulk-len", "2mb")
	const script = "return server.call('TRA.SETBIT', KEYS[1], ARGV[1], '1')"
	require.Equal(t, int64(0), valkeytest.Do(t, s, "EVAL", script, "1", "k", "8388608"))
	require.Equal(t, int64(1), valkeytest.Do(t, s, "EVAL", script, "1", "k", "8388608"))
	require.Equal(t, int64(1<<20+1), valkeytest.Do(t, s, "STRLEN", "k"))
	require.Equal(t, int64(1), valkeytest.Do(t, s, "TRA.GETBIT", "k", "8388608"))
	require.Equal(t, int64(1), valkeytest.Do(t, s, "EVAL", "return server.call('TRA.GETBIT', KEYS[1], ARGV[1])", "1", "k", "8388607"))
}

// A TRA.SETBIT that changes the string signals the key (a WATCH aborts the
// transaction), one that changes nothing does not, as SETBIT.
func TestTRAWatch(t *testing.T) {
	t.Parallel()
	for _, pre := range []string{"yes", "no"} {
		t.Run("tra-c-"+pre, func(t *testing.T) {
			t.Parallel()
			s := startModule(t, valkeyserver.Options{ModuleArgs: []string{"tra-c", pre}})
			w, err := s.Dial(ctxT(t))
			require.NoError(t, err)
			defer w.Close()
			aborted := func(cmd ...string) bool {
				_, err := w.Do(ctxT(t), "WATCH", cmd[1])
				require.NoError(t, err)
				valkeytest.Reply(t, s, cmd...)
				res, err := w.DoMulti(ctxT(t), []string{"MULTI"}, []string{"PING"}, []string{"EXEC"})
				require.NoError(t, err)
				return res[2] == nil
			}
			valkeytest.Do(t, s, "SET", "t", "abc")
			valkeytest.Do(t, s, "SET", "r", "abc")
			for _, c := range [][]string{{"3", "0"}, {"1", "1"}, {"2", "0"}, {"2", "0"}, {"7", "1"}, {"100", "0"}, {"100", "0"}, {"8388608", "0"}} {
				require.Equal(t, aborted("SETBIT", "r", c[0], c[1]), aborted("TRA.SETBIT", "t", c[0], c[1]), "%q", c)
			}
			require.Equal(t, aborted("GETBIT", "r", "1"), aborted("TRA.GETBIT", "t", "1"))
		})
	}
}

// traOracle returns, for a TRA.SETBIT whose arguments the handler's
// grammar accepts on a string or no key, a check of the call's reply and
// write against the handler's verdict for what s holds before the call
// (GETBIT and STRLEN; the dirty count says whether it wrote), or nil.
func traOracle(t *testing.T, s *valkeyserver.Server, call []string) func(reply any) {
	t.Helper()
	if call[0] != "TRA.SETBIT" {
		return nil
	}
	offset, err := grammar.BitOffset([]byte(call[2]))
	if err != nil {
		return nil
	}
	value, err := grammar.Bit([]byte(call[3]))
	if err != nil {
		return nil
	}
	prev, ok := valkeytest.Reply(t, s, "GETBIT", call[1], call[2]).(int64)
	if !ok {
		return nil // another type
	}
	strlen := valkeytest.Reply(t, s, "STRLEN", call[1]).(int64)
	dirty := infoField(t, s, "persistence", "rdb_changes_since_last_save")
	return func(got any) {
		t.Helper()
		v := verdict.SetBit(offset, value, prev, strlen)
		require.Equal(t, v.Previous, got, "%q: the reply", call)
		wrote := infoField(t, s, "persistence", "rdb_changes_since_last_save") != dirty
		require.Equal(t, v.Write, wrote, "%q: written, the verdict says %v", call, v.Write)
	}
}

// The server's bound does not apply to a TRA.SETBIT the server must obey,
// as SETBIT's does not: one from the primary, on a replica whose
// proto-max-bulk-len is lower than the primary's, and one replayed from
// the AOF.
func TestTRABoundObeysPrimary(t *testing.T) {
	t.Parallel()
	onEachTRAPath(t, func(t *testing.T, args []string) {
		p := startModule(t, valkeyserver.Options{AOF: true, Debug: true, ModuleArgs: args})
		r := startModule(t, valkeyserver.Options{ReplicaOf: p.Addr(), ModuleArgs: args})
		require.NoError(t, r.WaitReplicaSync(ctxT(t)))
		valkeytest.Do(t, r, "CONFIG", "SET", "proto-max-bulk-len", "1mb")
		for _, c := range [][]string{{"t", "8388608", "1"}, {"t", "8388615", "1"}, {"t", "8388616", "0"}} {
			require.Equal(t, valkeytest.Do(t, p, append([]string{"SETBIT", "r"}, c[1:]...)...), valkeytest.Do(t, p, append([]string{"TRA.SETBIT"}, c...)...))
		}
		valkeytest.WaitReplicated(t, p, r)
		for _, k := range []string{"t", "r"} {
			require.Equal(t, int64(1<<20+2), valkeytest.Do(t, r, "STRLEN", k), k)
			require.Equal(t, valkeytest.Do(t, p, "GET", k), valkeytest.Do(t, r, "GET", k), k)
		}
		want := valkeytest.Snapshot(t, p, "*")
		valkeytest.Do(t, p, "CONFIG", "SET", "proto-max-bulk-len", "1mb")
		valkeytest.Do(t, p, "DEBUG", "LOADAOF")
		valkeytest.RequireUnchanged(t, want, valkeytest.Snapshot(t, p, "*"))
	})
}
