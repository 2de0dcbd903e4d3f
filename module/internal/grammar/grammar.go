// Package grammar holds the pure checks every native verb runs before its
// first read (shape, layout, values) and the integer rules it predicts writes
// with. Nothing here talks to the server, so every rule is unit-tested alone;
// the texts come from the protocol registry.
package grammar

import (
	"bytes"
	"math"
	"strings"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Refusal is a refusal text from the protocol registry (or the server's own
// text the verb predicts). A handler replies it as an error and writes
// nothing.
type Refusal string

// Error implements error.
func (r Refusal) Error() string { return string(r) }

// String2LL parses b with Valkey's string2ll rules: an optional '-', no '+',
// no leading zero except "0" itself, no spaces, and within int64.
func String2LL(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := false
	p := b
	if p[0] == '-' {
		neg = true
		p = p[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range p {
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-9)/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		if v > uint64(math.MaxInt64)+1 {
			return 0, false
		}
		return -int64(v-1) - 1, true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// Decimal parses a canonical non-negative decimal argument of at most
// protocol.MaxDecimalSize digits within [lo, hi].
func Decimal(b []byte, lo, hi int64) (int64, bool) {
	if len(b) == 0 || len(b) > protocol.MaxDecimalSize {
		return 0, false
	}
	if b[0] == '0' && len(b) > 1 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, v >= lo && v <= hi
}

// ID parses a job id argument: a canonical decimal in 1..MaxJobID.
func ID(b []byte) bool {
	_, ok := Decimal(b, 1, protocol.MaxJobID)
	return ok
}

// Call is a verb call split into its declared keys and arguments.
type Call struct {
	Keys [][]byte
	Args [][]byte
}

// Shape checks numkeys with the EVAL family's rules, then the verb's exact
// key count, then splits argv (argv[0] is the command name). The ARGV count
// is the verb's own check.
func Shape(v *protocol.Verb, argv [][]byte) (Call, error) {
	if len(argv) < 2 {
		return Call{}, Refusal(protocol.ErrArity(v.Name))
	}
	n, ok := String2LL(argv[1])
	if !ok {
		return Call{}, Refusal(protocol.ErrNotInteger)
	}
	rest := argv[2:]
	if n > int64(len(rest)) {
		return Call{}, Refusal(protocol.ErrNumkeysTooMany)
	}
	if n < 0 {
		return Call{}, Refusal(protocol.ErrNumkeysNegative)
	}
	if n != int64(v.NumKeys()) {
		return Call{}, Refusal(protocol.ErrNumkeys(v.Name, v.NumKeys()))
	}
	return Call{Keys: rest[:n], Args: rest[n:]}, nil
}

// Arity refuses an ARGV count other than want.
func Arity(v *protocol.Verb, c Call, want int) error {
	if len(c.Args) != want {
		return Refusal(protocol.ErrArity(v.Name))
	}
	return nil
}

// Layout checks that KEYS[1] is a queue base and every other declared key is
// the base followed by the verb's suffix, in order; a named verb's last key
// is the base, its prefix and a bus name (NamedKey).
func Layout(v *protocol.Verb, c Call) error {
	base := c.Keys[0]
	if _, ok := protocol.QueueOfBase(base); !ok {
		return Refusal(protocol.ErrLayout(v.Name))
	}
	for i, suffix := range v.Keys {
		k := c.Keys[i+1]
		if v.Named != "" && i == len(v.Keys)-1 {
			if !NamedKey(base, v.Named, k) {
				return Refusal(protocol.ErrLayout(v.Name))
			}
			continue
		}
		if len(k) != len(base)+len(suffix) || !bytes.HasPrefix(k, base) || string(k[len(base):]) != suffix {
			return Refusal(protocol.ErrLayout(v.Name))
		}
	}
	return nil
}

// SameTag refuses a derived key whose hash tag is not the base's: the module
// never touches a key of another slot.
func SameTag(v *protocol.Verb, base, derived []byte) error {
	if !bytes.Equal(protocol.HashTag(base), protocol.HashTag(derived)) {
		return Refusal(protocol.ErrLayout(v.Name))
	}
	return nil
}

// Fence is the verdict on the version key: GET's reply as a string (present)
// or absent. A version key of another type never reaches here: the GET
// itself answers WRONGTYPE.
func Fence(value []byte, present bool) error {
	if !present {
		return Refusal(protocol.ErrWireMissing)
	}
	if string(value) != protocol.WireString {
		return Refusal(Clip(protocol.ErrWireFound(string(value))))
	}
	return nil
}

// Clip is a refusal text as the client receives it: up to its first NUL.
// The server ends every error reply there (addReplyErrorFormat takes a C
// string, for a script's error table as for a module's reply), so a text that
// carries stored bytes ends there on both executors. The host cuts every
// reply there too; Clip makes a verdict's own text already the one the
// client gets, which its unit tests check without a server.
func Clip(text string) string {
	if i := strings.IndexByte(text, 0); i >= 0 {
		return text[:i]
	}
	return text
}

// PredictHincrby predicts HINCRBY's reply on a field holding stored (or
// absent): the new value, or the server's refusal text.
func PredictHincrby(stored []byte, present bool, by int64) (int64, error) {
	var cur int64
	if present {
		v, ok := String2LL(stored)
		if !ok {
			return 0, Refusal(protocol.ErrHashNotInteger)
		}
		cur = v
	}
	if (by > 0 && cur > math.MaxInt64-by) || (by < 0 && cur < math.MinInt64-by) {
		return 0, Refusal(protocol.ErrOverflow)
	}
	return cur + by, nil
}

// RetryDelay is FAIL's delay before the next attempt for a stored backoff
// field bo ("fixed:<ms>" or "exponential:<ms>") after attempt att: fixed
// waits ms, exponential ms × 2^(att−1) capped at protocol.MaxRetryDelay.
func RetryDelay(bo []byte, att int64) int64 {
	kind, msText, ok := bytes.Cut(bo, []byte(":"))
	if !ok {
		return 0
	}
	ms, ok := Decimal(msText, 0, protocol.MaxBackoffMS)
	if !ok || ms == 0 {
		return 0
	}
	switch string(kind) {
	case protocol.BackoffFixed:
		return ms
	case protocol.BackoffExponential:
		d := ms
		for i := int64(1); i < att; i++ {
			d *= 2
			if d >= protocol.MaxRetryDelay {
				return protocol.MaxRetryDelay
			}
		}
		return min(d, protocol.MaxRetryDelay)
	}
	return 0
}

// CountedArity judges the ARGV of a verb whose first argument is a count of
// groups (ADD): ARGV empty is the arity refusal, ARGV[1] not a count in
// 1..MaxCount is "bad count", and then anything other than exactly
// 1 + per·n entries is the arity refusal again. It returns n.
func CountedArity(v *protocol.Verb, args [][]byte, per int) (int, error) {
	if len(args) == 0 {
		return 0, Refusal(protocol.ErrArity(v.Name))
	}
	n, ok := Decimal(args[0], 1, protocol.MaxCount)
	if !ok {
		return 0, Refusal(protocol.ErrBadArg(v.Name, "count"))
	}
	if len(args) != 1+per*int(n) {
		return 0, Refusal(protocol.ErrArity(v.Name))
	}
	return int(n), nil
}

// OptionArity judges the ARGV of a verb whose first argument is a count of
// groups and its second a count of option columns (ADD): ARGV empty is the
// arity refusal, ARGV[1] not a count in 1..MaxCount is "bad count", no
// ARGV[2] the arity refusal, ARGV[2] not a decimal in 0..MaxAddOptions "bad
// options", and then anything other than exactly 2 + k + (per + k)·n
// entries is the arity refusal again. It returns n and k.
func OptionArity(v *protocol.Verb, args [][]byte, per int) (n, k int, err error) {
	if len(args) == 0 {
		return 0, 0, Refusal(protocol.ErrArity(v.Name))
	}
	count, ok := Decimal(args[0], 1, protocol.MaxCount)
	if !ok {
		return 0, 0, Refusal(protocol.ErrBadArg(v.Name, "count"))
	}
	if len(args) < 2 {
		return 0, 0, Refusal(protocol.ErrArity(v.Name))
	}
	opts, ok := Decimal(args[1], 0, protocol.MaxAddOptions)
	if !ok {
		return 0, 0, Refusal(protocol.ErrBadArg(v.Name, "options"))
	}
	n, k = int(count), int(opts)
	if len(args) != 2+k+(per+k)*n {
		return 0, 0, Refusal(protocol.ErrArity(v.Name))
	}
	return n, k, nil
}
