package verify

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/trafikey/trafikey/internal/protocol"
)

// gen draws the steps of one sequence and runs each on the pair as soon as
// it is drawn, so a draw can depend on the state so far (the ids in a set,
// a job's current attempt token), read from A. Every draw shrinks towards
// the first value of its list: a valid, common value.
type gen struct {
	t *rapid.T
	p *pair
}

// A dom is an argument's domain: values the protocol accepts, then values
// it refuses with ERR EMQ <verb> bad <argument>.
type dom struct {
	ok, bad []string
}

var (
	domPriority  = dom{[]string{"0", "1000", "1", "500", "999"}, []string{"1001", "-1", "01", "", "abc", "+5"}}
	domDelay     = dom{[]string{"0", "1", "2", "3600000", "3", "315360000000"}, []string{"315360000001", "-1", "01", "1.5", " 1", "0x10"}}
	domAttempts  = dom{[]string{"3", "1", "2", "1000000"}, []string{"0", "1000001", "+1", "3 "}}
	domBackoff   = dom{[]string{protocol.BackoffFixed, protocol.BackoffExponential}, []string{"", "Fixed", "linear", "fixed\x00"}}
	domBackoffMS = dom{[]string{"0", "1", "2", "86400000", "3600000", "1000"}, []string{"86400001", "-1", "1e3", "00"}}
	domUniqueTTL = dom{[]string{"3600000", "1", "2", "315360000000"}, []string{"0", "315360000001", "01", "-1"}}
	domLease     = dom{[]string{"600000", "1", "2", "3", "86400000"}, []string{"0", "86400001", "-5", "1000000000000000", "9223372036854775808"}}
	domCount     = dom{[]string{"1", "2", "3", "10", "1000"}, []string{"0", "1001", "01", "99999999999999999999", "-1"}}
	domCap       = dom{[]string{"10", "1", "2", "3", "10000"}, []string{"0", "10001", ""}}
	domRetry     = dom{[]string{"1", "0"}, []string{"2", "", "01", "true", "1 "}}
	domLaneCap   = dom{[]string{"1", "2", "0", "3", "1000000"}, []string{"1000001", "-1", "01", "", "x"}}
	domRateMax   = dom{[]string{"5", "1", "2", "1000000"}, []string{"1000001", "-1", "01", "", "x"}}
	domWindow    = dom{[]string{"600000", "1", "86400000"}, []string{"86400001", "-1", "01", ""}}
	domLanes     = dom{[]string{"1", "2", "10", "1000"}, []string{"0", "1001", "01", ""}}
	// ids the protocol refuses (the domain is 1 .. 2^42-1, canonical)
	badIDs = []string{"0", "01", "4398046511104", "-1", "abc", "", "1.0", "999999999999999999999"}
)

var (
	// texts are payloads, error texts, log lines and progress values: any
	// bytes; 100 bytes turn a row into a hashtable, 65536 is the text bound.
	texts = []string{"a", "", "boom", "\x00", "a\x00b", "\xff\xfe\xc3\x28\xed\xa0\x80", "\r\n$-1\r\n*1\r\n",
		strings.Repeat("x", 100), strings.Repeat("e", protocol.MaxText)}
	// textTooLong is one byte past the text bound.
	textTooLong = strings.Repeat("e", protocol.MaxText+1)
	// uniqueKeys: few, so that they repeat; the bound is 512 bytes.
	uniqueKeys = []string{"", "u1", "u2", "\x00\xff{x}:", strings.Repeat("k", protocol.MaxUniqueKey)}
	// lanes: few, so that they fill and drain; any bytes, 1..128.
	lanes = []string{"t1", "t2", "t3", "\x00{x}:", strings.Repeat("l", protocol.MaxLaneName)}
	// badLanes are lane names the lane verbs refuse.
	badLanes = []string{"", strings.Repeat("l", protocol.MaxLaneName+1)}
	// intish are values planted in counters and numeric fields: the edges
	// of int64, of the id space and of the 15-digit rule, and non-integers.
	intish = []string{"9223372036854775807", "9223372036854775806", "9223372036854774808", "-9223372036854775808",
		"4398046511103", "4398046511102", "999999999999999", "1000000000000000", "-1", "01", "abc", "", "0", "1", "2", " 3"}
)

// attish are the values planted in a row's att. CLAIM increments att and
// replies the result, which the Lua executor reads as a double: the
// protocol keeps replies below 2^53 and calls an att planted beyond that
// outside it (docs/PROTOCOL.md, conventions), so att gets the edges inside
// the protocol and the one value that is refused before any reply
// (int64 max: the increment would overflow). The edge below 2^53 leaves room
// for every claim a sequence can make (each adds one): 2^53 − 2 passed 2^53
// after three claims of the same job, outside the protocol.
var attish = []string{"9223372036854775807", "9007199254739991", "4398046511103", "999999999999999",
	"1000000000000000", "-1", "01", "abc", "", "0", "1", "2", " 3"}

// draw helpers -----------------------------------------------------------------

func (g *gen) pick(label string, xs ...string) string {
	return rapid.SampledFrom(xs).Draw(g.t, label)
}

func (g *gen) intn(label string, lo, hi int) int {
	return rapid.IntRange(lo, hi).Draw(g.t, label)
}

// chance is true with about percent% probability. rapid draws the ends of
// a range far more often than its middle (0 about 10% of the time, 99
// about 3%), and the middle about evenly, so the outcome that has the
// smaller probability is a band in the middle, 1.6 values per percent
// (0.63% each); a draw shrinks to 0, the likelier outcome.
func (g *gen) chance(label string, percent int) bool {
	x := rapid.IntRange(0, 99).Draw(g.t, label)
	rare := min(percent, 100-percent)
	hit := x >= 20 && x < 20+rare*8/5
	if percent > 50 {
		return !hit
	}
	return hit
}

// val draws a value of d, a refused one with badPct% probability.
func (g *gen) val(label string, d dom, badPct int) string {
	if g.chance(label+" refused", badPct) {
		return g.pick(label, d.bad...)
	}
	return g.pick(label, d.ok...)
}

// text draws a payload or text; bound adds one past the 64 KiB bound.
func (g *gen) text(label string, bound bool) string {
	if bound && g.chance(label+" too long", 2) {
		return textTooLong
	}
	if g.chance(label+" random", 25) {
		return string(rapid.SliceOfN(rapid.Byte(), 0, 16).Draw(g.t, label))
	}
	return g.pick(label, texts...)
}

// queue draws one of the queues, mostly the first.
func (g *gen) queue() string {
	if g.chance("another queue", 10) {
		return g.pick("queue", queues[1:]...)
	}
	return queues[0]
}

// reads of A's state --------------------------------------------------------------

// members returns the members of a queue's zset on A (none when it is not
// a zset).
func (g *gen) members(q, suffix string) []string {
	v, _ := g.p.a.do("ZRANGE", protocol.Base(q)+suffix, "0", "-1")
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, m := range list {
		out[i] = fmt.Sprint(m)
	}
	return out
}

// seq is the queue's meta seq on A, read as a small non-negative number.
func (g *gen) seq(q string) int {
	v, _ := g.p.a.do("HGET", protocol.Base(q)+protocol.SuffixMeta, protocol.MetaSeq)
	n, err := strconv.Atoi(fmt.Sprint(v))
	if err != nil || n < 0 || n > 1_000_000 {
		return 3
	}
	return n
}

// id draws a job id: mostly a member of one of the sets in prefer (a job in
// the state the verb wants), else one of 1 .. seq+2, rarely a refused one.
func (g *gen) id(q string, prefer ...string) string {
	if g.chance("id refused", 3) {
		return g.pick("id", badIDs...)
	}
	var cands []string
	for _, s := range prefer {
		cands = append(cands, g.members(q, s)...)
	}
	if len(cands) > 0 && !g.chance("id any", 20) {
		return g.pick("id", cands...)
	}
	return strconv.Itoa(g.intn("id", 1, g.seq(q)+2))
}

// token draws an attempt token for job id: mostly the row's att on A (the
// right one), else a stale or foreign one.
func (g *gen) token(q, id string) string {
	v, _ := g.p.a.do("HGET", protocol.KeysOf(q).Job(id), protocol.FieldAttempts)
	att, ok := v.(string)
	if !ok {
		att = "0"
	}
	if !g.chance("token wrong", 20) {
		return att
	}
	prev := "0"
	if n, err := strconv.ParseInt(att, 10, 64); err == nil && n > 0 {
		prev = strconv.FormatInt(n-1, 10)
	}
	return g.pick("token", prev, "0", "x", "", att+"\x00", "0"+att, " "+att)
}

// limit draws RECOVER's or PROMOTE's limit (v) on queue q: one that takes
// the same due jobs on both servers (see pair.run), or rarely a refused one.
func (g *gen) limit(v *protocol.Verb, q string, badPct int) string {
	if g.chance("limit refused", badPct) {
		return g.pick("limit", domCount.bad...)
	}
	now, _ := g.p.settle(g.t, v)
	key := protocol.Base(q) + timeSetOf(v)
	a, b := g.p.a.due(key, now, protocol.MaxCount), g.p.b.due(key, now, protocol.MaxCount)
	var safe []string
	for _, l := range domCount.ok {
		n, _ := strconv.Atoi(l)
		if sameMembers(a[:min(n, len(a))], b[:min(n, len(b))]) {
			safe = append(safe, l)
		}
	}
	if len(safe) == 0 {
		return strconv.Itoa(protocol.MaxCount)
	}
	return g.pick("limit", safe...)
}

// calls ----------------------------------------------------------------------------

// call runs verb v on queue q with the given ARGV.
func (g *gen) call(v *protocol.Verb, q string, args ...string) {
	g.p.run(g.t, call(v, v.KeyNames(protocol.KeysOf(q)), args))
}

// lane draws a lane name, rarely a refused one.
func (g *gen) lane(badPct int) string {
	if g.chance("lane refused", badPct) {
		return g.pick("lane", badLanes...)
	}
	return g.pick("lane", lanes...)
}

// job draws the 8 ADD arguments of one job, then its lane ("" for none, the
// lane column's value); each value is refused with badPct% probability.
func (g *gen) job(badPct int) []string {
	data := g.text("data", false)
	prio := g.val("priority", domPriority, badPct)
	delay := g.val("delay", domDelay, badPct)
	attempts := g.val("attempts", domAttempts, badPct)
	backoff := g.val("backoff", domBackoff, badPct)
	backoffMS := g.val("backoff_ms", domBackoffMS, badPct)
	ukey := ""
	if g.chance("unique", 25) {
		ukey = g.pick("unique_key", uniqueKeys[1:]...)
	}
	if g.chance("unique_key refused", badPct) {
		ukey = strings.Repeat("k", protocol.MaxUniqueKey+1)
	}
	ttl := "0"
	switch {
	case ukey != "":
		ttl = g.val("unique_ttl", domUniqueTTL, badPct)
	case g.chance("unique_ttl without key", 10):
		ttl = g.pick("unique_ttl", "5", "315360000000", "315360000001", "x")
	}
	lane := ""
	if g.chance("laned", 40) {
		lane = g.pick("lane", lanes...)
	}
	if g.chance("lane refused", badPct) {
		lane = strings.Repeat("l", protocol.MaxLaneName+1)
	}
	wait := ""
	if g.chance("waited", 15) {
		wait = g.pick("wait", "60000", "1", "0", "86400000")
	}
	if g.chance("wait refused", badPct) {
		wait = g.pick("wait", "86400001", "-1", "01")
	}
	due, timeout, kind, headers := g.jobOptions(badPct)
	// parent and onfail are drawn by addArgs, which knows the job's place
	return []string{data, prio, delay, attempts, backoff, backoffMS, ukey, ttl, lane, "", "", wait, due, timeout, kind, headers}
}

// jobOptions draws a job's due, timeout, kind and headers columns ("" for
// none), each refused with badPct% probability. A due time is far from the
// clock (long past, or an hour and more ahead of A's), so that it is not
// above now on one server and below it on the other.
func (g *gen) jobOptions(badPct int) (due, timeout, kind, headers string) {
	if g.chance("due", 20) {
		due = g.due()
	}
	if g.chance("due refused", badPct) {
		due = g.pick("due", "253402300800000", "-1", "01", "x")
	}
	if g.chance("timeout", 20) {
		timeout = g.pick("timeout", "30000", "1", "0", "86400000")
	}
	if g.chance("timeout refused", badPct) {
		timeout = g.pick("timeout", "86400001", "-1", "01")
	}
	if g.chance("kind", 25) {
		kind = g.pick("kind", "email", "\x00{k}:\xff", strings.Repeat("k", protocol.MaxKind))
	}
	if g.chance("kind refused", badPct) {
		kind = strings.Repeat("k", protocol.MaxKind+1)
	}
	if g.chance("headers", 20) {
		headers = g.pick("headers", "traceparent=00-01", "\x00\r\n", strings.Repeat("h", protocol.MaxHeaders))
	}
	if g.chance("headers refused", badPct) {
		headers = strings.Repeat("h", protocol.MaxHeaders+1)
	}
	return due, timeout, kind, headers
}

// due draws an absolute due time far from the clock: 0 (none), long past,
// an hour or a day ahead of A's clock, or the domain's end.
func (g *gen) due() string {
	switch g.pick("due at", "0", "past", "hour", "day", "end") {
	case "past":
		return g.pick("due past", "1", "1000000000000")
	case "hour":
		return strconv.FormatInt(g.p.now(g.t)+3_600_000, 10)
	case "day":
		return strconv.FormatInt(g.p.now(g.t)+86_400_000, 10)
	case "end":
		return strconv.FormatInt(protocol.MaxDueMS, 10)
	}
	return "0"
}

// The option columns of a job's group as job draws it, after the fixed 8.
var addColumns = []string{protocol.AddOptionLane, protocol.AddOptionParent, protocol.AddOptionOnFail, protocol.AddOptionWait,
	protocol.AddOptionDue, protocol.AddOptionTimeout, protocol.AddOptionKind, protocol.AddOptionHeaders}

// addArgs is ADD's ARGV for n jobs; the count is rarely refused or wrong.
func (g *gen) addArgs(n, badPct int) []string {
	count := strconv.Itoa(n)
	if g.chance("count refused", 2) {
		count = g.pick("count", "0", "1001", "01", strconv.Itoa(n+1), "", "-1")
	}
	jobs := make([][]string, n)
	flow := n > 1 && g.chance("flow", 40)
	for i := range jobs {
		jobs[i] = g.job(badPct)
		if flow && i > 0 {
			// a parent earlier in the call, mostly; rarely one the
			// protocol refuses (itself, a later one, none of the form)
			parent := strconv.Itoa(g.intn("parent", 1, i))
			if g.chance("parent refused", 5) {
				parent = g.pick("parent", strconv.Itoa(i+1), strconv.Itoa(i+2), "0", "01", "x")
			}
			jobs[i][protocol.AddArgsPerJob+1] = parent
			if p, err := strconv.Atoi(parent); err == nil && p >= 1 && p <= i && !g.chance("parent due kept", 5) {
				// a parent with a due time is refused: mostly none
				jobs[p-1][protocol.AddArgsPerJob+4] = ""
			}
			if g.chance("onfail", 40) {
				jobs[i][protocol.AddArgsPerJob+2] = g.pick("onfail", protocol.OnFailIgnore, protocol.OnFailContinue, protocol.OnFailFail, "skip")
			}
		}
	}
	// the columns some job uses, and rarely one more
	var used []int
	for c := range addColumns {
		for _, j := range jobs {
			if j[protocol.AddArgsPerJob+c] != "" {
				used = append(used, c)
				break
			}
		}
	}
	if len(used) == 0 && g.chance("lane column", 20) {
		used = []int{0}
	}
	args := []string{count}
	refused := g.chance("options refused", 3)
	if refused {
		// a column count or name the protocol refuses
		switch g.pick("bad options", "count", "name", "repeated") {
		case "count":
			args = append(args, g.pick("options", "9", "01", "", "-1", "x"))
		case "name":
			args = append(args, "1", g.pick("option", "lanes", "LANE", "", "parents"))
		default:
			args = append(args, "2", protocol.AddOptionLane, protocol.AddOptionLane)
		}
		used = []int{0}
	} else {
		args = append(args, strconv.Itoa(len(used)))
		for _, c := range used {
			args = append(args, addColumns[c])
		}
	}
	for _, j := range jobs {
		args = append(args, j[:protocol.AddArgsPerJob]...)
		for _, c := range used {
			args = append(args, j[protocol.AddArgsPerJob+c])
		}
	}
	return args
}

// result draws a result COMPLETE or COMPLETEMANY carries: mostly none or a
// short one, rarely one past the default bound or the hard one.
func (g *gen) result() string {
	switch {
	case g.chance("result too large", 2):
		return strings.Repeat("r", protocol.DefaultResult+1)
	case g.chance("result refused", 1):
		return strings.Repeat("r", protocol.MaxResult+1)
	case g.chance("result", 40):
		return g.text("result", false)
	}
	return ""
}

// manyArgs is COMPLETEMANY's ARGV on queue q: n then n (id, token) pairs,
// the jobs mostly active (right or stale tokens, g.token), else pending,
// delayed or dead (not active), gone, or rarely refused ids. An id drawn
// twice is dropped, except with repeatPct% probability (the call is then
// refused); the count is refused or wrong with countPct% probability.
// Rarely the call names every active job, or every id from 1 to 1000 with
// token 1.
func (g *gen) manyArgs(q string, repeatPct, countPct int) []string {
	var ids []string
	thousand := false
	switch {
	case g.chance("completemany all active", 10):
		ids = g.members(q, protocol.SuffixActive)
		if g.chance("completemany all active reversed", 50) {
			slices.Reverse(ids)
		}
	case g.chance("completemany a thousand", 2):
		thousand = true
		for i := range protocol.MaxCount {
			ids = append(ids, strconv.Itoa(i+1))
		}
	default:
		for range g.intn("completemany jobs", 1, 6) {
			if g.chance("completemany not active", 20) {
				ids = append(ids, g.id(q, protocol.SuffixPending, protocol.SuffixDelayed, protocol.SuffixDead))
			} else {
				ids = append(ids, g.id(q, protocol.SuffixActive))
			}
		}
	}
	named := map[string]bool{}
	args := []string{""}
	for _, id := range ids {
		if named[id] && !g.chance("completemany repeat", repeatPct) {
			continue
		}
		named[id] = true
		token := "1" // a job's first claim; drawn for each of a thousand would be slow
		if !thousand {
			token = g.token(q, id)
		}
		res := ""
		if !thousand {
			res = g.result()
		}
		args = append(args, id, token, res)
	}
	n := (len(args) - 1) / 3
	args[0] = strconv.Itoa(n)
	if g.chance("completemany count refused", countPct) {
		args[0] = g.pick("count", "0", "1001", "01", strconv.Itoa(n+1), strconv.Itoa(max(n-1, 0)), "", "-1", "+1", "1000")
	}
	return args
}

// validArgs draws a well-formed ARGV of v, for the malformed-call action to
// break one thing of.
func (g *gen) validArgs(v *protocol.Verb, q string) []string {
	id := func(prefer ...string) string { return g.id(q, prefer...) }
	switch v {
	case protocol.Add:
		return g.addArgs(g.intn("jobs", 1, 2), 0)
	case protocol.Claim:
		return g.claimArgs(g.val("lease", domLease, 0), g.val("count", domCount, 0), 0)
	case protocol.Extend:
		i := id(protocol.SuffixActive)
		return []string{i, g.token(q, i), g.val("lease", domLease, 0)}
	case protocol.Complete:
		i := id(protocol.SuffixActive)
		return []string{i, g.token(q, i), g.result()}
	case protocol.CompleteMany:
		return g.manyArgs(q, 0, 0)
	case protocol.Fail:
		i := id(protocol.SuffixActive)
		return []string{i, g.token(q, i), g.val("retry", domRetry, 0), g.text("error", false)}
	case protocol.Recover, protocol.Promote:
		return []string{g.limit(v, q, 0)}
	case protocol.Inspect:
		return []string{id(protocol.SuffixPending, protocol.SuffixDelayed, protocol.SuffixDead, protocol.SuffixWaiting, protocol.SuffixCompleted)}
	case protocol.Remove:
		return []string{id(protocol.SuffixPending, protocol.SuffixDelayed, protocol.SuffixDead, protocol.SuffixWaiting), g.pick("cascade", "0", "1")}
	case protocol.Retain:
		return g.retainArgs(0)
	case protocol.Trim:
		return []string{g.val("limit", domCount, 0)}
	case protocol.Children:
		return []string{id(protocol.SuffixWaiting, protocol.SuffixPending), g.pick("after", "0", "1", "2"), g.val("count", domLanes, 0)}
	case protocol.Requeue:
		return []string{id(protocol.SuffixDead)}
	case protocol.Log:
		i := id(protocol.SuffixActive)
		return []string{i, g.token(q, i), g.text("line", false), g.val("cap", domCap, 0)}
	case protocol.Progress:
		i := id(protocol.SuffixActive)
		return []string{i, g.token(q, i), g.text("value", false)}
	case protocol.LaneCap:
		return []string{g.lane(0), g.val("cap", domLaneCap, 0)}
	case protocol.LanePause, protocol.LaneResume, protocol.Lane:
		return []string{g.lane(0)}
	case protocol.Lanes:
		return []string{g.pick("after", "", "t1", "t2", "\x00"), g.val("count", domLanes, 0)}
	case protocol.Rate:
		return g.rateArgs(0)
	case protocol.Append:
		return g.appendArgs(q, protocol.DefaultBusName, 0)
	case protocol.Publish:
		return g.publishArgs(0)
	case protocol.FailuresIncr:
		return []string{g.val("ttl", domFailuresTTL, 0)}
	case protocol.Events:
		return []string{g.val("max_len", domEventsMax, 0)}
	case protocol.Reschedule:
		return g.rescheduleArgs(q, 0)
	case protocol.Cancel:
		return []string{id(protocol.SuffixPending, protocol.SuffixDelayed, protocol.SuffixActive)}
	}
	if slices.Contains(protocol.ScheduleVerbs, v) {
		return g.scheduleValidArgs(v, q)
	}
	return g.opsValidArgs(v, q)
}

// rescheduleArgs draws RESCHEDULE's id (mostly a pending or delayed job),
// due time and delay; each value is refused with badPct% probability.
func (g *gen) rescheduleArgs(q string, badPct int) []string {
	due := g.due()
	if g.chance("due refused", badPct) {
		due = g.pick("due", "253402300800000", "-1", "01", "")
	}
	return []string{g.id(q, protocol.SuffixPending, protocol.SuffixDelayed), due, g.val("delay", domDelay, badPct)}
}

// claimArgs draws CLAIM's lease and count, and rarely its ext (0, 1, or one
// refused) and its block_ms (a few ms: a native call that finds nothing
// blocks that long, then answers the empty array as the Lua does); each
// value is refused with badPct% probability.
func (g *gen) claimArgs(lease, count string, badPct int) []string {
	args := []string{lease, count}
	if g.chance("claim ext", 40) {
		args = append(args, g.pick("ext", protocol.ClaimExtended, protocol.ClaimWaits, "0"))
	}
	if g.chance("ext refused", badPct) {
		args = append(args[:2], g.pick("ext", "2", "", "01", "true"))
	}
	if g.chance("claim block", 25) {
		if len(args) == 2 {
			args = append(args, "0")
		}
		block := g.pick("block", "0", "1", "3")
		if g.chance("block refused", badPct) {
			block = g.pick("block", "-1", "86400001", "01", "")
		}
		args = append(args, block)
	}
	return args
}

// retainArgs draws RETAIN's five values: retention off or on, with bounds
// that a sequence does not reach by time (hours) and counts it may reach.
// Which jobs a count bound trims depends on their completion times, which
// differ between the servers by the clock: the counts stay above what a
// sequence completes or kills, so TRIM finds nothing past them and the two
// agree; TRIM's trimming itself is held by the conformance suite.
func (g *gen) retainArgs(badPct int) []string {
	keep := func(label string) string {
		v := g.pick(label, "0", "3600000", "315360000000")
		if g.chance(label+" refused", badPct) {
			v = g.pick(label, "315360000001", "-1", "01")
		}
		return v
	}
	count := func(label string) string {
		v := g.pick(label, "0", "1000000", "100000000")
		if g.chance(label+" refused", badPct) {
			v = g.pick(label, "100000001", "-1", "x")
		}
		return v
	}
	resultMax := g.pick("result_max", "0", "1048576", "16", "262144")
	if g.chance("result_max refused", badPct) {
		resultMax = "1048577"
	}
	return []string{keep("keep_done"), count("keep_done_max"), keep("keep_dead"), count("keep_dead_max"), resultMax}
}

// rateArgs draws RATE's max and window: mostly a limit, sometimes the clear
// (0 0), each value refused with badPct% probability.
func (g *gen) rateArgs(badPct int) []string {
	if g.chance("rate clear", 20) {
		return []string{"0", "0"}
	}
	return []string{g.val("max", domRateMax, badPct), g.val("window", domWindow, badPct)}
}

// ready reports whether queue q has a job to claim on A: pending, or a lane
// in turns.
func (g *gen) ready(q string) bool {
	return len(g.members(q, protocol.SuffixPending)) > 0 || len(g.members(q, protocol.SuffixTurns)) > 0
}

// the actions ---------------------------------------------------------------------

// start begins a sequence: usually with the queue installed (by INSTALL, or
// by setting the version key when B does not run INSTALL yet).
func (g *gen) start() {
	if g.chance("resp2", 50) {
		g.p.run(g.t, step{Kind: kindResp, Args: []string{"2"}})
	}
	if g.chance("not installed", 10) {
		return
	}
	for _, q := range queues {
		if q != queues[0] && !g.chance("install "+q, 50) {
			continue
		}
		g.call(protocol.Install, q)
	}
}

// actions are the step kinds of a sequence, for rapid's Repeat (which picks
// one uniformly and shrinks towards the first in name order).
func (g *gen) actions() map[string]func(*rapid.T) {
	verb := func(v *protocol.Verb, args func(q string) []string) func(*rapid.T) {
		return func(*rapid.T) {
			q := g.queue()
			g.call(v, q, args(q)...)
		}
	}
	// onJob is verb for a verb that works on a job in set: mostly skipped
	// (another action is drawn) while the set is empty, as it would find
	// nothing to do.
	onJob := func(v *protocol.Verb, set string, args func(q string) []string) func(*rapid.T) {
		return func(*rapid.T) {
			q := g.queue()
			if len(g.members(q, set)) == 0 && !g.chance("on an empty "+set, 20) {
				g.t.Skipf("%s is empty", set)
			}
			g.call(v, q, args(q)...)
		}
	}
	// onReady is CLAIM, mostly skipped while the queue has nothing ready.
	onReady := func(args func() []string) func(*rapid.T) {
		return func(*rapid.T) {
			q := g.queue()
			if !g.ready(q) && !g.chance("claim with nothing ready", 20) {
				g.t.Skip("nothing ready")
			}
			g.call(protocol.Claim, q, args()...)
		}
	}
	bad := 4 // percent of refused values per argument
	all := g.opsActions(bad)
	for name, a := range map[string]func(*rapid.T){
		"add": verb(protocol.Add, func(string) []string { return g.addArgs(1, 1) }),
		"add batch": verb(protocol.Add, func(string) []string {
			return g.addArgs(g.intn("jobs", 2, 5), 1)
		}),
		"claim": onReady(func() []string {
			return g.claimArgs(g.val("lease", domLease, bad), g.val("count", domCount, bad), bad)
		}),
		"claim short lease": onReady(func() []string {
			return g.claimArgs(g.pick("lease", "1", "2", "3"), g.pick("count", "1", "2", "1000"), 0)
		}),
		"reschedule": verb(protocol.Reschedule, func(q string) []string { return g.rescheduleArgs(q, bad) }),
		"cancel": verb(protocol.Cancel, func(q string) []string {
			return []string{g.id(q, protocol.SuffixPending, protocol.SuffixDelayed, protocol.SuffixActive, protocol.SuffixDead, protocol.SuffixWaiting)}
		}),
		"lane cap": verb(protocol.LaneCap, func(string) []string {
			return []string{g.lane(bad), g.val("cap", domLaneCap, bad)}
		}),
		"lane pause":  verb(protocol.LanePause, func(string) []string { return []string{g.lane(bad)} }),
		"lane resume": verb(protocol.LaneResume, func(string) []string { return []string{g.lane(bad)} }),
		"lane":        verb(protocol.Lane, func(string) []string { return []string{g.lane(bad)} }),
		"lanes": verb(protocol.Lanes, func(string) []string {
			after := g.pick("after", "", "t1", "t2", "\x00", strings.Repeat("l", protocol.MaxLaneName))
			if g.chance("after refused", bad) {
				after = strings.Repeat("l", protocol.MaxLaneName+1)
			}
			return []string{after, g.val("count", domLanes, bad)}
		}),
		"rate": verb(protocol.Rate, func(string) []string { return g.rateArgs(bad) }),
		"append": func(*rapid.T) {
			q, name := g.queue(), g.busName(bad)
			g.callNamed(protocol.Append, q, name, g.appendArgs(q, name, bad)...)
		},
		"publish":    verb(protocol.Publish, func(string) []string { return g.publishArgs(bad) }),
		"events":     verb(protocol.Events, func(string) []string { return []string{g.val("max_len", domEventsMax, bad)} }),
		"bus tamper": func(*rapid.T) { g.busTamper() },
		"failures incr": func(*rapid.T) {
			q, name := g.queue(), g.busName(bad)
			g.callNamed(protocol.FailuresIncr, q, name, g.val("ttl", domFailuresTTL, bad))
		},
		"extend": onJob(protocol.Extend, protocol.SuffixActive, func(q string) []string {
			id := g.id(q, protocol.SuffixActive)
			return []string{id, g.token(q, id), g.val("lease", domLease, bad)}
		}),
		"complete": onJob(protocol.Complete, protocol.SuffixActive, func(q string) []string {
			id := g.id(q, protocol.SuffixActive)
			return []string{id, g.token(q, id), g.result()}
		}),
		"retain": verb(protocol.Retain, func(string) []string { return g.retainArgs(bad) }),
		"trim":   verb(protocol.Trim, func(string) []string { return []string{g.val("limit", domCount, bad)} }),
		"children": verb(protocol.Children, func(q string) []string {
			after := g.pick("after", "0", "1", "2", "3")
			if g.chance("after refused", bad) {
				after = g.pick("after", "01", "-1", "x", "4398046511104")
			}
			return []string{g.id(q, protocol.SuffixWaiting, protocol.SuffixPending), after, g.val("count", domLanes, bad)}
		}),
		"complete many": onJob(protocol.CompleteMany, protocol.SuffixActive, func(q string) []string {
			return g.manyArgs(q, 5, 3)
		}),
		"fail": onJob(protocol.Fail, protocol.SuffixActive, func(q string) []string {
			id := g.id(q, protocol.SuffixActive)
			return []string{id, g.token(q, id), g.val("retry", domRetry, bad), g.text("error", true)}
		}),
		"recover": verb(protocol.Recover, func(q string) []string { return []string{g.limit(protocol.Recover, q, bad)} }),
		"promote": verb(protocol.Promote, func(q string) []string { return []string{g.limit(protocol.Promote, q, bad)} }),
		"pause":   verb(protocol.Pause, func(string) []string { return nil }),
		"resume":  verb(protocol.Resume, func(string) []string { return nil }),
		"remove": verb(protocol.Remove, func(q string) []string {
			cascade := g.pick("cascade", "0", "1")
			if g.chance("cascade refused", bad) {
				cascade = g.pick("cascade", "2", "", "01", "true")
			}
			return []string{g.id(q, protocol.SuffixPending, protocol.SuffixDelayed, protocol.SuffixDead, protocol.SuffixActive, protocol.SuffixWaiting, protocol.SuffixCompleted), cascade}
		}),
		"requeue": onJob(protocol.Requeue, protocol.SuffixDead, func(q string) []string { return []string{g.id(q, protocol.SuffixDead)} }),
		"log": onJob(protocol.Log, protocol.SuffixActive, func(q string) []string {
			id := g.id(q, protocol.SuffixActive)
			return []string{id, g.token(q, id), g.text("line", true), g.val("cap", domCap, bad)}
		}),
		"progress": onJob(protocol.Progress, protocol.SuffixActive, func(q string) []string {
			id := g.id(q, protocol.SuffixActive)
			return []string{id, g.token(q, id), g.text("value", true)}
		}),
		"stats": verb(protocol.Stats, func(string) []string { return nil }),
		"inspect": verb(protocol.Inspect, func(q string) []string {
			return []string{g.id(q, protocol.SuffixActive, protocol.SuffixDelayed, protocol.SuffixDead, protocol.SuffixPending)}
		}),
		"install":   verb(protocol.Install, func(string) []string { return nil }),
		"malformed": func(*rapid.T) { g.malformed() },
		"tamper": func(*rapid.T) {
			if g.chance("plant", 40) {
				g.plant()
			} else {
				g.corrupt()
			}
		},
		"as a limited user": func(*rapid.T) { g.asLimitedUser() },
		"at maxmemory": func(*rapid.T) {
			// Both servers are over any limit: a verb that grows the
			// dataset is refused with the server's OOM text, the others run.
			g.p.run(g.t, cmd("CONFIG", "SET", "maxmemory", "1"))
			g.anyCall()
			g.p.run(g.t, cmd("CONFIG", "SET", "maxmemory", "0"))
		},
		"read while paused": func(*rapid.T) {
			// CLIENT PAUSE WRITE holds writers (a reset or the pause's own
			// end lifts it); the read verbs answer.
			g.p.run(g.t, cmd("CLIENT", "PAUSE", "2000", "WRITE"))
			v := verbByName(g.pick("read verb", protocol.Stats.Name, protocol.Inspect.Name, protocol.Lane.Name, protocol.Lanes.Name, protocol.Jobs.Name))
			q := g.queue()
			g.call(v, q, g.validArgs(v, q)...)
			g.p.run(g.t, cmd("CLIENT", "UNPAUSE"))
		},
		"sleep": func(*rapid.T) {
			ms := g.intn("sleep ms", 1, 5)
			g.p.run(g.t, step{Kind: kindSleep, Sleep: time.Duration(ms) * time.Millisecond})
		},
	} {
		all[name] = a
	}
	maps.Copy(all, g.scheduleActions(bad))
	return all
}

// anyCall runs a well-formed call of any verb on any queue.
func (g *gen) anyCall() {
	v := verbByName(g.pick("verb", verbNames()...))
	q := g.queue()
	g.call(v, q, g.validArgs(v, q)...)
}

// verbNames are the verbs' names, in protocol order.
func verbNames() []string {
	names := make([]string, len(protocol.All))
	for i, v := range protocol.All {
		names[i] = v.Name
	}
	return names
}

// asLimitedUser makes an ACL user that may run every command and touch a
// queue's declared keys, with one class of its derived keys (rows, logs,
// unique keys, lane keys, turns, rate or the events stream) read-only, write-only or denied, and runs one call as that
// user: a denial is the registry's NOPERM on both sides, with nothing
// written.
func (g *gen) asLimitedUser() {
	q := g.queue()
	base := escapeGlob(protocol.KeysOf(q).Base)
	patterns := map[string]string{"rows": "job:*[0-9]", "logs": "job:*:logs", "unique": "unique:*", "lanes": "lane*", "turns": "turns", "rate": "rate",
		"events": protocol.SuffixEvents}
	classes := []string{"rows", "logs", "unique", "lanes", "turns", "rate", "events"}
	limited := g.pick("acl class", classes...)
	perm := g.pick("acl access", "R", "W", "")
	name := "u" + strconv.Itoa(len(g.p.steps))
	rules := []string{"ACL", "SETUSER", name, "reset", "on", ">pw", "+@all", "%RW~" + base, "%RW~" + base + "[^ejlrtu]*"}
	for _, class := range classes {
		p := "RW"
		if class == limited {
			p = perm
		}
		if p != "" {
			rules = append(rules, "%"+p+"~"+base+patterns[class])
		}
	}
	g.p.run(g.t, cmd(rules...))
	if u, err := g.p.a.do("ACL", "GETUSER", name); err != nil || u == nil {
		// A pattern the server's ACL cannot hold (a name with a NUL): both
		// refused it alike, and there is no user to call as.
		g.t.Skipf("no ACL user %s for queue %q: %v", name, q, err)
	}
	g.p.run(g.t, step{Kind: kindAs, Args: []string{name}})
	g.anyCall()
}

// escapeGlob escapes the glob characters of a key pattern's fixed part (a
// queue name is any bytes but braces).
func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// malformed runs a call of a verb that breaks one rule of shape or layout:
// numkeys spelled otherwise, one key more or less, a key of another form,
// one argument more or less.
func (g *gen) malformed() {
	v := verbByName(g.pick("verb", verbNames()...))
	q := g.queue()
	k := protocol.KeysOf(q)
	keys := v.KeyNames(k)
	args := g.validArgs(v, q)
	n := strconv.Itoa(len(keys))
	rest := func() []string { return append(slices.Clone(keys), args...) }
	switch g.pick("malformation", "numkeys", "layout", "arity", "keys") {
	case "numkeys":
		spelled := g.pick("numkeys", "0"+n, "+"+n, " "+n, n+" ", "-1", "99999999999999999999",
			"9223372036854775807", "", "0", "-0", strconv.Itoa(len(keys)-1), strconv.Itoa(len(keys)+len(args)+1), "1e1", "0x"+n)
		g.p.run(g.t, raw(v, spelled, rest()))
	case "layout":
		i := g.intn("key", 0, len(keys)-1)
		other := protocol.KeysOf("other")
		keys[i] = g.pick("bad key",
			strings.Replace(keys[i], "{"+q+"}", "{other}", 1), // another queue's key
			strings.TrimSuffix(k.Base, ":"),                   // base without its colon
			"emq:{}:", "emq:{a{b}:", "emq:{a}b}:", "EMQ:{"+q+"}:",
			protocol.Base(strings.Repeat("n", protocol.MaxQueueName+1)),
			protocol.Base(strings.Repeat("n", protocol.MaxQueueName))+protocol.SuffixVersion,
			keys[i]+" ", strings.ToUpper(keys[i]), keys[(i+1)%len(keys)], other.Base, "")
		g.p.run(g.t, call(v, keys, args))
	case "arity":
		if len(args) > 0 && g.chance("drop argument", 50) {
			args = args[:len(args)-1]
		} else {
			args = append(args, g.pick("extra argument", "1", "", "\x00"))
		}
		g.p.run(g.t, call(v, keys, args))
	case "keys":
		if len(keys) > 1 && g.chance("drop key", 50) {
			keys = keys[:len(keys)-1]
		} else {
			keys = append(keys, k.Base+"extra")
		}
		g.p.run(g.t, call(v, keys, args))
	}
}

// fixedKeys are the suffixes of a queue's keys of fixed name.
var fixedKeys = []string{protocol.SuffixVersion, protocol.SuffixMeta, protocol.SuffixStats, protocol.SuffixPending,
	protocol.SuffixDelayed, protocol.SuffixActive, protocol.SuffixDead, protocol.SuffixSignal,
	protocol.SuffixLaneInfo, protocol.SuffixLanes, protocol.SuffixTurns, protocol.SuffixRate,
	protocol.SuffixWaiting, protocol.SuffixCompleted}

// plant replaces a key of the queue by one of another type (or deletes
// it): a fixed key, a job row, its logs or a unique key.
func (g *gen) plant() {
	q := g.queue()
	k := protocol.KeysOf(q)
	var key string
	switch g.pick("planted key", "fixed", "row", "logs", "unique", "lane", "flow") {
	case "fixed":
		key = k.Fixed(g.pick("suffix", fixedKeys...))
	case "row":
		key = k.Job(g.id(q))
	case "logs":
		key = k.Logs(g.id(q))
	case "unique":
		key = k.Unique(g.pick("unique key", uniqueKeys[1:]...))
	case "lane":
		key = k.Lane(g.pick("lane", lanes...))
	case "flow":
		id := g.id(q, protocol.SuffixWaiting)
		key = g.pick("flow key", k.Kids(id), k.Results(id), k.Failures(id), k.Done(id))
	}
	g.p.run(g.t, cmd("DEL", key))
	switch g.pick("planted type", "string", "hash", "list", "zset", "set", "none") {
	case "string":
		g.p.run(g.t, cmd("SET", key, "planted"))
	case "hash":
		g.p.run(g.t, cmd("HSET", key, "f", "v"))
	case "list":
		g.p.run(g.t, cmd("RPUSH", key, "planted"))
	case "zset":
		g.p.run(g.t, cmd("ZADD", key, "1", "planted"))
	case "set":
		g.p.run(g.t, cmd("SADD", key, "planted"))
	}
}

// corrupt writes a value the verbs never write: a counter at the edge of
// int64 or not an integer, a version of another wire, a row field out of
// its form, a member that is not an id, a second signal token.
func (g *gen) corrupt() {
	q := g.queue()
	k := protocol.KeysOf(q)
	var c step
	switch g.pick("corrupted", "seq", "counter", "version", "row", "row field gone", "member", "paused", "signal", "logs", "holder",
		"lane field", "lane meta", "turn member", "rate", "flow field", "flow member", "retention", "events", "job option",
		"row flag") {
	case "seq":
		c = cmd("HSET", k.Meta, protocol.MetaSeq, g.pick("value", intish...))
	case "counter":
		c = cmd("HSET", k.Stats, g.pick("counter", protocol.StatsCounters...), g.pick("value", intish...))
	case "version":
		c = cmd("SET", k.Version, g.pick("version", "1", "2", "1\x00x", "", "\xff", "01", "1\r\n"))
		if g.chance("version restored", 50) {
			c = cmd("SET", k.Version, protocol.WireString)
		}
	case "row":
		field := g.pick("field", protocol.FieldAttempts, protocol.FieldMax, protocol.FieldPriority,
			protocol.FieldBackoff, protocol.FieldState, protocol.FieldUnique, protocol.FieldData)
		var value string
		switch field {
		case protocol.FieldBackoff:
			value = g.pick("value", "fixed:5", "exponential:1", "exponential:x", "fixed:", "weird", "fixed:86400001", "exponential:0")
		case protocol.FieldState:
			value = g.pick("value", protocol.StatePending, protocol.StateDead, protocol.StateActive, protocol.StateDelayed, "bogus")
		case protocol.FieldUnique:
			value = g.pick("value", uniqueKeys...)
		case protocol.FieldAttempts:
			value = g.pick("value", attish...)
		default:
			value = g.pick("value", intish...)
		}
		c = cmd("HSET", k.Job(g.id(q)), field, value)
	case "row field gone":
		c = cmd("HDEL", k.Job(g.id(q)), g.pick("field", protocol.FieldAttempts, protocol.FieldData, protocol.FieldUnique, protocol.FieldMax))
	case "member":
		set := g.pick("set", protocol.SuffixPending, protocol.SuffixActive, protocol.SuffixDelayed, protocol.SuffixDead)
		member := g.pick("member", "abc", "0", "01", "4398046511104", strconv.Itoa(g.intn("member id", 1, g.seq(q)+2)))
		// times far in the past or future only: a score near the clock
		// would make the step's outcome depend on when it runs
		c = cmd("ZADD", k.Fixed(set), g.pick("score", "0", "1", "99999999999999", "-1", "4398046511105"), member)
	case "paused":
		c = cmd("HSET", k.Meta, protocol.MetaPaused, g.pick("value", "1", "0", "yes", "1\x00", " 1"))
	case "signal":
		c = cmd("RPUSH", k.Signal, "x")
	case "logs":
		c = cmd("RPUSH", k.Logs(g.id(q)), g.text("line", false))
	case "holder":
		// the id a unique key holds, as EMQLOCK's text and COMPLETE,
		// COMPLETEMANY and REMOVE read it: another job's, or bytes an
		// error text cuts
		holder := g.pick("holder", strconv.Itoa(g.intn("holder id", 1, g.seq(q)+1)), "7\x00x", "a\r\nb", "", "01")
		c = cmd("SET", k.Unique(g.pick("unique key", uniqueKeys[1:]...)), holder)
	case "lane field":
		// a lane's count or settings out of form, or a row's lane
		l := g.pick("lane", lanes...)
		switch g.pick("lane field", "active", "cap", "paused", "row") {
		case "active":
			c = cmd("HSET", k.Fixed(protocol.SuffixLaneInfo), protocol.FieldLaneActive+l, g.pick("value", intish...))
		case "cap":
			c = cmd("HSET", k.Fixed(protocol.SuffixLaneInfo), protocol.FieldLaneCap+l, g.pick("value", intish...))
		case "paused":
			c = cmd("HSET", k.Fixed(protocol.SuffixLaneInfo), protocol.FieldLanePaused+l, g.pick("value", "1", "0", "1\x00"))
		default:
			c = cmd("HSET", k.Job(g.id(q)), protocol.FieldLane, g.pick("value", append([]string{"", strings.Repeat("l", protocol.MaxLaneName+1)}, lanes...)...))
		}
	case "lane meta":
		c = cmd("HSET", k.Meta, g.pick("field", protocol.MetaTurn, protocol.MetaPendingTurn, protocol.MetaLaneWait, protocol.MetaRateMax, protocol.MetaRateWindow,
			protocol.MetaLaneSets),
			g.pick("value", intish...))
	case "turn member":
		// a lane in turns that is not ready, or a member in a lane set
		if g.chance("lane member", 50) {
			c = cmd("ZADD", k.Lane(g.pick("lane", lanes...)), g.pick("score", "0", "1", "4398046511105"),
				g.pick("member", "abc", "0", strconv.Itoa(g.intn("member id", 1, g.seq(q)+2))))
		} else {
			c = cmd("ZADD", k.Fixed(protocol.SuffixTurns), g.pick("score", "0", "1", "99999"), g.pick("lane", lanes...))
		}
	case "rate":
		// a rate log entry out of form, live, gone or ahead of the clock,
		// in a log without a TTL; or a log of another type
		if g.chance("rate of another type", 20) {
			c = cmd("SET", k.Fixed(protocol.SuffixRate), g.pick("value", intish...))
			break
		}
		now := g.p.now(g.t)
		at := now + int64(g.intn("rate entry age", -3_600_000, 2_000))
		c = cmd("ZADD", k.Fixed(protocol.SuffixRate), strconv.FormatInt(at, 10),
			g.pick("member", "000000000000000:1", "000000000000003:2", "000000000000001:1000000", "x", "7", "000000000000005:x", ":",
				"000000000000002:-1", "000000000000002:01", "7:2", "00000000000000x:1", "999999999999999:999999999999999", "9223372036854775807:1"))
	case "flow field":
		// a parent's count or failure, a child's parent or policy, a
		// retention mark or a wait out of form
		field := g.pick("field", protocol.FieldDeps, protocol.FieldParent, protocol.FieldChildFail, protocol.FieldOnFail,
			protocol.FieldKeep, protocol.FieldWait)
		value := g.pick("value", intish...)
		switch field {
		case protocol.FieldParent, protocol.FieldChildFail:
			value = strconv.Itoa(g.intn("flow id", 1, g.seq(q)+2))
		case protocol.FieldOnFail:
			value = g.pick("value", protocol.OnFailIgnore, protocol.OnFailContinue, "skip", "")
		case protocol.FieldKeep:
			value = g.pick("value", "1", "0", "yes")
		}
		c = cmd("HSET", k.Job(g.id(q)), field, value)
	case "flow member":
		// a child in a parent's kids, or a job in waiting or completed,
		// that is not there by the verbs
		id := strconv.Itoa(g.intn("flow id", 1, g.seq(q)+2))
		switch g.pick("flow set", "kids", "waiting", "completed") {
		case "kids":
			c = cmd("ZADD", k.Kids(g.id(q)), id, id)
		case "waiting":
			c = cmd("ZADD", k.Fixed(protocol.SuffixWaiting), id, id)
		default:
			c = cmd("ZADD", k.Fixed(protocol.SuffixCompleted), g.pick("score", "0", "1"), id)
		}
	case "retention":
		c = cmd("HSET", k.Meta, g.pick("field", protocol.MetaKeepDone, protocol.MetaKeepDoneMax, protocol.MetaKeepDead,
			protocol.MetaKeepDeadMax, protocol.MetaResultMax), g.pick("value", "0", "1", "01", "abc", "1048577", "3600000"))
	case "events":
		// the queue's bound, or a row's, out of form (read as off) or small
		// (trimming)
		value := g.pick("value", append([]string{"1", "2", "1000000", "1000001"}, intish...)...)
		if g.chance("row ev", 50) {
			c = cmd("HSET", k.Job(g.id(q)), protocol.FieldEvents, value)
		} else {
			c = cmd("HSET", k.Meta, protocol.MetaEventsMax, value)
		}
	case "job option":
		// a row's kind, timeout, headers or cancelled mark, as CLAIM's
		// extended rows, INSPECT and the cancelled refusal read them; or
		// the queue's jobfields flag, set or not as no ADD left it
		if g.chance("jobfields", 25) {
			c = cmd("HSET", k.Meta, protocol.MetaJobFields, g.pick("value", "1", "0", "1\x00", ""))
			break
		}
		field := g.pick("field", protocol.FieldTimeout, protocol.FieldKind, protocol.FieldHeaders, protocol.FieldCancelled, protocol.FieldMax)
		value := g.pick("value", append([]string{"86400000", "86400001", "\x00"}, intish...)...)
		c = cmd("HSET", k.Job(g.id(q)), field, value)
	case "row flag":
		// the queue's rowopts flag, set, of other bytes, or gone (read as
		// 0): the lane, flow, retention and events fields planted above are
		// then read, or not (0), or ev alone (2), by COMPLETE, COMPLETEMANY
		// and CLAIM
		if g.chance("row flag gone", 25) {
			c = cmd("HDEL", k.Meta, protocol.MetaRowOpts)
			break
		}
		c = cmd("HSET", k.Meta, protocol.MetaRowOpts, g.pick("value", "1", "0", "1\x00", "", "2", "2\x00"))
	}
	g.p.run(g.t, c)
}
