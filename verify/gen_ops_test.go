package verify

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"pgregory.net/rapid"

	"github.com/trafikey/trafikey/internal/protocol"
)

// The operations verbs' draws (docs/PROTOCOL.md, "Operations").
//
// A cursor's score and a dead filter's times are scores of the servers'
// sets: for pending, a lane and waiting they are the same on both servers
// (priority and id), so a cursor is drawn from A's members with their
// scores; for the sets scored by time (delayed, active, dead, completed)
// each server holds its own clock's times, so a cursor names the edges
// (score 0, or past every time) with any member, and a filter the whole
// range, none of it, or the planted scores 0 and 1 (see corrupt's
// "member"). pair.run skips, as inconclusive, a call on a time set whose
// members are in another order on A than on B (two steps closer than the
// servers' skew).

var (
	maxScore = strconv.FormatInt(protocol.MaxScore, 10)
	// domScore: scores the protocol accepts, then refused ones.
	domScore = dom{[]string{"0", "1", maxScore, "4398046511105"}, []string{"-1", "01", maxScore + "0", "9007199254740992", "1.5", " 1"}}
	domClip  = dom{[]string{"0", "16", "1", "1024"}, []string{"1025", "-1", "01", ""}}
	// opsErrors: error texts the dead filter matches by substring.
	opsErrors = []string{"", "boom", "o", "lease expired", "\x00", "child"}
)

// timeScored reports whether set suffix s is scored by the servers' clocks.
func timeScored(s string) bool {
	return s == protocol.SuffixDelayed || s == protocol.SuffixActive || s == protocol.SuffixDead || s == protocol.SuffixCompleted
}

// cursor draws a cursor (after_score, after_member) for zset key of queue
// q: mostly none; on a set scored by id, a member of A's with its score; on
// any set, an edge score with a member or bytes; rarely a refused one.
func (g *gen) cursor(key string, byTime bool, badPct int) (string, string) {
	if g.chance("cursor refused", badPct) {
		return g.pick("after_score", domScore.bad...), g.pick("after_member", "", "1")
	}
	if g.chance("no cursor", 40) {
		return "", ""
	}
	if !byTime && !g.chance("cursor at an edge", 30) {
		v, _ := g.p.a.do("ZRANGE", key, "0", "-1", "WITHSCORES")
		list, _ := v.([]any)
		if len(list) >= 2 {
			i := g.intn("cursor member", 0, len(list)/2-1)
			member, score := fmt.Sprint(list[2*i]), fmt.Sprint(list[2*i+1])
			if f, err := strconv.ParseFloat(score, 64); err == nil {
				score = strconv.FormatInt(int64(f), 10)
			}
			if g.chance("cursor moved", 20) {
				// the member's score is not the cursor's: between scores
				score = g.pick("after_score", "0", maxScore)
			}
			return score, member
		}
	}
	return g.pick("after_score", "0", "1", maxScore), g.pick("after_member", "", "1", "9", "10", "abc", "\x00", "\xff")
}

// jobsArgs draws JOBS' ARGV on queue q.
func (g *gen) jobsArgs(q string, badPct int) []string {
	state := g.pick("state", protocol.JobsStates...)
	if g.chance("state refused", badPct) {
		state = g.pick("state", "", "Dead", "lane", "pending ")
	}
	lane := ""
	if state == protocol.StatePending && g.chance("jobs lane", 30) {
		lane = g.pick("lane", lanes...)
	}
	if g.chance("lane refused", badPct) {
		lane = g.pick("lane", strings.Repeat("l", protocol.MaxLaneName+1), "t1")
		if lane == "t1" && state == protocol.StatePending {
			state = protocol.StateDead
		}
	}
	newest := g.pick("newest", "0", "1")
	if g.chance("newest refused", badPct) {
		newest = g.pick("newest", "2", "", "01", "true")
	}
	k := protocol.KeysOf(q)
	key := k.Fixed(state)
	if lane != "" {
		key = k.Lane(lane)
	}
	score, member := g.cursor(key, timeScored(state), badPct)
	count := g.val("count", domCount, badPct)
	clip := g.val("clip", domClip, badPct)
	return []string{state, lane, newest, score, member, count, clip}
}

// deadFilterArgs draws REQUEUEDEAD's or REMOVEDEAD's filter on queue q.
func (g *gen) deadFilterArgs(q string, badPct int) []string {
	limit := g.val("limit", domCount, badPct)
	score, member := g.cursor(protocol.KeysOf(q).Fixed(protocol.SuffixDead), true, badPct)
	lo, hi := "0", maxScore
	switch {
	case g.chance("filter none", 10):
		lo, hi = maxScore, maxScore
	case g.chance("filter planted", 10):
		lo, hi = "0", "1"
	}
	if g.chance("min refused", badPct) {
		lo = g.pick("min", domScore.bad...)
	}
	if g.chance("max refused", badPct) {
		hi = g.pick("max", domScore.bad...)
	}
	lane := ""
	if g.chance("filter lane", 25) {
		lane = g.pick("lane", lanes...)
	}
	if g.chance("lane refused", badPct) {
		lane = strings.Repeat("l", protocol.MaxLaneName+1)
	}
	errText := ""
	if g.chance("filter error", 25) {
		errText = g.pick("error", opsErrors...)
	}
	if g.chance("error refused", badPct) {
		errText = textTooLong
	}
	return []string{limit, score, member, lo, hi, lane, errText}
}

// opsValidArgs is validArgs for the operations verbs.
func (g *gen) opsValidArgs(v *protocol.Verb, q string) []string {
	switch v {
	case protocol.Jobs:
		return g.jobsArgs(q, 0)
	case protocol.RequeueDead, protocol.RemoveDead:
		return g.deadFilterArgs(q, 0)
	case protocol.PromoteAll:
		return []string{g.val("limit", domCount, 0)}
	case protocol.Retry:
		return []string{g.id(q, protocol.SuffixDelayed)}
	}
	return nil
}

// opsActions are the operations verbs' actions.
func (g *gen) opsActions(bad int) map[string]func(*rapid.T) {
	on := func(v *protocol.Verb, args func(q string) []string) func(*rapid.T) {
		return func(*rapid.T) {
			q := g.queue()
			g.call(v, q, args(q)...)
		}
	}
	return map[string]func(*rapid.T){
		"jobs":         on(protocol.Jobs, func(q string) []string { return g.jobsArgs(q, bad) }),
		"requeue dead": on(protocol.RequeueDead, func(q string) []string { return g.deadFilterArgs(q, bad) }),
		"remove dead":  on(protocol.RemoveDead, func(q string) []string { return g.deadFilterArgs(q, bad) }),
		"promote all":  on(protocol.PromoteAll, func(string) []string { return []string{g.val("limit", domCount, bad)} }),
		"retry": on(protocol.Retry, func(q string) []string {
			return []string{g.id(q, protocol.SuffixDelayed, protocol.SuffixDead)}
		}),
	}
}

// orderedSet is the zset of a well-formed operations call whose outcome
// depends on the order of a set scored by time: JOBS of such a state, the
// dead filters, PROMOTEALL.
func orderedSet(s step) (string, bool) {
	if s.Kind != kindCall || s.Numkeys != strconv.Itoa(s.Verb.NumKeys()) || len(s.Args) < s.Verb.NumKeys() {
		return "", false
	}
	base := s.Args[0]
	switch s.Verb {
	case protocol.Jobs:
		if len(s.Args) == 2+7 && timeScored(s.Args[2]) {
			return base + s.Args[2], true
		}
	case protocol.RequeueDead, protocol.RemoveDead:
		return base + protocol.SuffixDead, true
	case protocol.PromoteAll:
		return base + protocol.SuffixDelayed, true
	}
	return "", false
}

// members is the whole of zset key on the side, in order.
func (s side) order(key string) []string {
	v, _ := s.do("ZRANGE", key, "0", "-1")
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, m := range list {
		out[i] = fmt.Sprint(m)
	}
	return out
}

// sameOrder reports whether zset key holds the same members in the same
// order on A and B.
func (p *pair) sameOrder(key string) bool {
	return slices.Equal(p.a.order(key), p.b.order(key))
}

// renderOps renders the replies of JOBS and the dead filters with the
// times that are each server's own (a time set's scores in rows and
// cursors, a row's at) as <time> when the two are at most p.window apart.
func (p *pair) renderOps(s step, ra, rb node) (node, node) {
	same := func(x, y *node) {
		if x.Kind == "int" && y.Kind == "int" && p.sameTime(strconv.FormatInt(x.Int, 10), strconv.FormatInt(y.Int, 10)) {
			*x = node{Kind: "bulk", Text: "<time>"}
			*y = *x
		}
	}
	if ra.Kind != "array" || rb.Kind != "array" || len(ra.Elems) != len(rb.Elems) || len(ra.Elems) != 4 {
		return ra, rb
	}
	ra, rb = cloneNode(ra), cloneNode(rb)
	switch s.Verb {
	case protocol.Jobs:
		same(&ra.Elems[1], &rb.Elems[1])
		rowsA, rowsB := cloneNode(ra.Elems[3]), cloneNode(rb.Elems[3])
		if len(rowsA.Elems) == len(rowsB.Elems) {
			for i := range rowsA.Elems {
				x, y := cloneNode(rowsA.Elems[i]), cloneNode(rowsB.Elems[i])
				if len(x.Elems) == len(protocol.JobsRowFields) && len(y.Elems) == len(x.Elems) {
					same(&x.Elems[1], &y.Elems[1])
					same(&x.Elems[9], &y.Elems[9])
				}
				rowsA.Elems[i], rowsB.Elems[i] = x, y
			}
		}
		ra.Elems[3], rb.Elems[3] = rowsA, rowsB
	case protocol.RequeueDead, protocol.RemoveDead:
		same(&ra.Elems[2], &rb.Elems[2])
	}
	return ra, rb
}
