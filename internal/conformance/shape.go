package conformance

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// testShape: numkeys and the ARGV count of every verb (docs/PROTOCOL.md,
// the order of every verb, step 1).
func testShape(t *testing.T, env Env) {
	for _, v := range protocol.All {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			n := v.NumKeys()
			ns := strconv.Itoa(n)
			full := func(q *queue) []string { return append(v.KeyNames(q.k), fixtures[v](q)...) }

			// numkeys the server's string2ll refuses: EVALSHA's own text
			for _, spelled := range []string{"0" + ns, "+" + ns, " " + ns, ns + " ", ns + ".0", "0x" + ns, "", "-", "99999999999999999999"} {
				scenario(t, env, "numkeys "+strconv.Quote(spelled), func(t *testing.T, q *queue) {
					q.refuse(protocol.ErrNotInteger, q.raw(v, spelled, full(q)...))
				})
			}
			scenario(t, env, "numkeys -1", func(t *testing.T, q *queue) {
				q.refuse(protocol.ErrNumkeysNegative, q.raw(v, "-1", full(q)...))
			})
			scenario(t, env, "numkeys past the arguments", func(t *testing.T, q *queue) {
				rest := full(q)
				q.refuse(protocol.ErrNumkeysTooMany, q.raw(v, strconv.Itoa(len(rest)+1), rest...))
			})
			scenario(t, env, "numkeys int64 max", func(t *testing.T, q *queue) {
				q.refuse(protocol.ErrNumkeysTooMany, q.raw(v, "9223372036854775807", full(q)...))
			})

			// a valid count that is not the verb's
			wrong := protocol.ErrNumkeys(v.Name, n)
			scenario(t, env, "numkeys 0", func(t *testing.T, q *queue) {
				q.refuse(wrong, q.raw(v, "0", full(q)...))
			})
			scenario(t, env, "numkeys one short", func(t *testing.T, q *queue) {
				q.refuse(wrong, q.raw(v, strconv.Itoa(n-1), full(q)...))
			})
			scenario(t, env, "numkeys one more", func(t *testing.T, q *queue) {
				args := fixtures[v](q)
				keys := append(v.KeyNames(q.k), q.k.Base+"extra")
				q.refuse(wrong, q.raw(v, strconv.Itoa(n+1), append(keys, args...)...))
			})
			scenario(t, env, "numkeys before layout", func(t *testing.T, q *queue) {
				args := fixtures[v](q)
				keys := v.KeyNames(q.k)
				keys[0] = "bad"
				q.refuse(wrong, q.raw(v, strconv.Itoa(n-1), append(keys, args...)...))
			})

			// the ARGV count
			if group, ok := countGroups[v]; ok {
				testCountShape(t, env, v, group)
				return
			}
			scenario(t, env, "argv one more", func(t *testing.T, q *queue) {
				args := append(fixtures[v](q), optionalArgs[v]...)
				q.refuse(protocol.ErrArity(v.Name), q.verb(v, append(args, "extra")...))
			})
			if argCount[v] > 0 {
				scenario(t, env, "argv one short", func(t *testing.T, q *queue) {
					args := fixtures[v](q)
					q.refuse(protocol.ErrArity(v.Name), q.verb(v, args[:len(args)-1]...))
				})
			}
			scenario(t, env, "argv before layout", func(t *testing.T, q *queue) {
				args := append(fixtures[v](q), optionalArgs[v]...)
				keys := v.KeyNames(q.k)
				keys[0] = "bad"
				q.refuse(protocol.ErrArity(v.Name), q.keys(v, keys, append(args, "extra")...))
			})
		})
	}
}

// optionalArgs are, for a verb whose last arguments may be left out, the
// values a fixture leaves out: one argument past them is too many.
var optionalArgs = map[*protocol.Verb][]string{
	protocol.Claim: {"0", "0"}, // ext, block_ms
}

// countGroups is, for each verb whose ARGV is a count n and then n groups
// of arguments (ADD, COMPLETEMANY), one valid group.
var countGroups = map[*protocol.Verb][]string{
	protocol.Add:          append([]string{"0"}, job{data: "a"}.args(nil)...),
	protocol.CompleteMany: {"1", "1", ""},
}

// testCountShape: a count verb's ARGV is n then one group per job; n is
// judged in the shape step, since the ARGV count depends on it.
func testCountShape(t *testing.T, env Env, v *protocol.Verb, one []string) {
	arity, badCount := protocol.ErrArity(v.Name), protocol.ErrBadArg(v.Name, "count")
	with := func(count string, rest ...string) []string { return append([]string{count}, rest...) }
	for _, tc := range []struct {
		name string
		argv []string
		want string
	}{
		{"argv empty", nil, arity},
		{"count alone", []string{"1"}, arity},
		{"count 2 with one job", with("2", one...), arity},
		{"count 1000 with one job", with("1000", one...), arity},
		{"count 1 with two jobs", with("1", append(slices.Clone(one), one...)...), arity},
		{"one argument short", with("1", one[:len(one)-1]...), arity},
		{"one argument more", append(with("1", one...), "x"), arity},
		{"count 0", with("0", one...), badCount},
		{"count 0 alone", []string{"0"}, badCount},
		{"count 1001", with("1001", one...), badCount},
		{"count 01", with("01", one...), badCount},
		{"count -1", with("-1", one...), badCount},
		{"count +1", with("+1", one...), badCount},
		{"count 1 with a space", with("1 ", one...), badCount},
		{"count 1.5", with("1.5", one...), badCount},
		{"count empty", with("", one...), badCount},
		{"count 16 digits", with("1000000000000000", one...), badCount},
		{"count word", with("one", one...), badCount},
		{"count NUL", with("1\x00", one...), badCount},
	} {
		scenario(t, env, tc.name, func(t *testing.T, q *queue) {
			fixtures[v](q)
			q.refuse(tc.want, q.verb(v, tc.argv...))
		})
	}
	scenario(t, env, "bad count before layout", func(t *testing.T, q *queue) {
		fixtures[v](q)
		keys := v.KeyNames(q.k)
		keys[2] = "bad"
		q.refuse(badCount, q.keys(v, keys, with("0", one...)...))
	})
	scenario(t, env, "argv before layout", func(t *testing.T, q *queue) {
		fixtures[v](q)
		keys := v.KeyNames(q.k)
		keys[2] = "bad"
		q.refuse(arity, q.keys(v, keys, with("2", one...)...))
	})
}

// testLayout: the declared keys must be the queue base and the verb's keys
// built from it, in order (step 2).
func testLayout(t *testing.T, env Env) {
	for _, v := range protocol.All {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			rebuilt := func(base string) []string {
				keys := []string{base}
				for _, s := range v.Keys {
					keys = append(keys, base+s)
				}
				return keys
			}
			last := v.NumKeys() - 1
			for _, tc := range []struct {
				name string
				keys func(q *queue) []string
			}{
				{"base without braces", func(q *queue) []string { return rebuilt("emq:" + q.name + ":") }},
				{"base without the colon", func(q *queue) []string { return rebuilt("emq:{" + q.name + "}") }},
				{"base in capitals", func(q *queue) []string { return rebuilt("EMQ:{" + q.name + "}:") }},
				{"base with a prefix", func(q *queue) []string { return rebuilt("x" + q.k.Base) }},
				{"base with a suffix", func(q *queue) []string { return rebuilt(q.k.Base + "x") }},
				{"base empty", func(q *queue) []string { return rebuilt("") }},
				{"empty queue name", func(q *queue) []string { return rebuilt("emq:{}:") }},
				{"open brace in the name", func(q *queue) []string { return rebuilt("emq:{" + q.name + "{x}:") }},
				{"close brace in the name", func(q *queue) []string { return rebuilt("emq:{" + q.name + "}x}:") }},
				{"name of 129 bytes", func(q *queue) []string {
					return rebuilt("emq:{" + q.name + strings.Repeat("x", 129-len(q.name)) + "}:")
				}},
				{"base of another queue", func(q *queue) []string {
					keys := v.KeyNames(q.k)
					keys[0] = q.other().k.Base
					return keys
				}},
				{"key of another queue", func(q *queue) []string {
					keys := v.KeyNames(q.k)
					keys[last] = q.other().k.Base + v.Keys[last-1]
					return keys
				}},
				{"wrong suffix", func(q *queue) []string {
					keys := v.KeyNames(q.k)
					keys[1] = q.k.Base + "Version"
					return keys
				}},
				{"suffix with a trailing byte", func(q *queue) []string {
					keys := v.KeyNames(q.k)
					keys[last] += "\x00"
					return keys
				}},
				{"derived key declared", func(q *queue) []string {
					keys := v.KeyNames(q.k)
					keys[last] = q.k.Job("1")
					return keys
				}},
				{"keys in another order", func(q *queue) []string {
					keys := v.KeyNames(q.k)
					keys[last-1], keys[last] = keys[last], keys[last-1]
					return keys
				}},
			} {
				scenario(t, env, tc.name, func(t *testing.T, q *queue) {
					args := fixtures[v](q)
					keys := tc.keys(q)
					q.refuseKeys(protocol.ErrLayout(v.Name), keys, q.keys(v, keys, args...))
				})
			}
			if first, ok := firstValue[v]; ok {
				scenario(t, env, "layout before values", func(t *testing.T, q *queue) {
					args := fixtures[v](q)
					args[first.index] = "x"
					keys := v.KeyNames(q.k)
					keys[last] += " " // no suffix and no bus name ends in a space
					q.refuseKeys(protocol.ErrLayout(v.Name), keys, q.keys(v, keys, args...))
				})
			}
		})
	}
	scenario(t, env, "a name of 128 bytes is a queue", func(t *testing.T, q *queue) {
		name := q.name + strings.Repeat("x", protocol.MaxQueueName-len(q.name))
		long := &queue{t: q.t, env: q.env, name: name, k: protocol.KeysOf(name)}
		long.install()
		require.Equal(t, Bulks("1"), long.call(protocol.Add, addArgs(job{data: "a"})...))
	})
}

// refuseKeys is refuse for a call with keys outside the queue's pattern:
// each of keys is compared too (a layout refusal must not touch them).
func (q *queue) refuseKeys(want string, keys []string, call func() valkey.ValkeyResult) {
	q.t.Helper()
	dumps := func() map[string]string {
		out := q.snapshot()
		for _, k := range keys {
			if d, err := q.cmd("DUMP", k).ToString(); err == nil {
				out[k] = d
			}
		}
		return out
	}
	before := dumps()
	require.Equal(q.t, Err(want), Render(call()))
	valkeytest.RequireUnchanged(q.t, before, dumps())
}

// testFence: the queue's version key is the first read of every verb but
// INSTALL (step 4).
func testFence(t *testing.T, env Env) {
	for _, v := range protocol.All {
		if v == protocol.Install {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			scenario(t, env, "not installed", func(t *testing.T, q *queue) {
				args := fixtures[v](q)
				q.do("DEL", q.k.Version)
				q.refuse(protocol.ErrWireMissing, q.verb(v, args...))
			})
			// "1": a wire-1 dataset, which INSTALL refuses too
			for _, found := range []string{"1", "3", "0", "02", "2 ", "", "\x00\xff", "2\r\n1", "2\x00"} {
				scenario(t, env, "wire "+strconv.Quote(found), func(t *testing.T, q *queue) {
					args := fixtures[v](q)
					q.do("SET", q.k.Version, found)
					q.refuse(ErrorText(protocol.ErrWireFound(found)), q.verb(v, args...))
				})
			}
			scenario(t, env, "version of another type", func(t *testing.T, q *queue) {
				args := fixtures[v](q)
				q.plant(q.k.Version, "string")
				q.refuse(protocol.ErrWrongType, q.verb(v, args...))
			})
			if first, ok := firstValue[v]; ok {
				scenario(t, env, "values before the fence", func(t *testing.T, q *queue) {
					args := fixtures[v](q)
					args[first.index] = "x"
					q.do("DEL", q.k.Version)
					q.refuse(protocol.ErrBadArg(v.Name, first.name), q.verb(v, args...))
				})
			}
		})
	}
}
