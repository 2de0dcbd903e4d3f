package verify

import (
	"fmt"
	"strconv"
	"strings"

	"pgregory.net/rapid"

	"github.com/trafikey/trafikey/internal/protocol"
)

// The schedule verbs' draws (docs/PROTOCOL.md, "Schedules").
//
// A schedule's state holds times the servers' clocks wrote (SET, RESUME:
// last and next are the time of the call), which differ between A and B
// by the skew of one step; the harness compares them within its window.
// A FIRE is computed from the state, as a worker computes it: the
// generator reads A's state and, when B's differs only by those clock
// readings, first writes A's on both (a plain HSET step), so that the
// call's rev and from mean the same on both servers. Its upto is in the
// past on both (at least settleBand before the clock) or an hour ahead,
// and its jitters put no job's due time near the clock.

var (
	// scheduleIDs: few, so that they repeat; any of the bus names'
	// alphabet, 1..128 bytes.
	scheduleIDs    = []string{"s1", "s2", "a-b.c:d/e@f", strings.Repeat("s", protocol.MaxScheduleID)}
	badScheduleIDs = []string{"", "a b", "{x}", "\x00", strings.Repeat("s", protocol.MaxScheduleID+1)}
	cronSpecs      = []string{"*/5 * * * * *", "0 0 * * * *", "@hourly", "x", strings.Repeat("*", protocol.MaxCronSpec)}
	domEvery       = dom{[]string{"60000", "1", "1000", "315360000000"}, []string{"0", "315360000001", "01", "x", ""}}
	domJitter      = dom{[]string{"0", "1000", "86400000"}, []string{"86400001", "-1", "01", ""}}
	domLimit       = dom{[]string{"0", "1", "3", "1000000000000"}, []string{"1000000000001", "-1", "x"}}
	domGrace       = dom{[]string{"60000", "0", "86400000"}, []string{"86400001", "x"}}
	domCatchup     = dom{[]string{"1", "0", "1000"}, []string{"1001", "01"}}
	domSchedTime   = dom{[]string{"0", "1", "1700000000000", "253402300799999"}, []string{"253402300800000", "-1", "x"}}
)

// scheduleID draws a schedule id, rarely a refused one.
func (g *gen) scheduleID(badPct int) string {
	if g.chance("schedule id refused", badPct) {
		return g.pick("schedule id", badScheduleIDs...)
	}
	return g.pick("schedule id", scheduleIDs...)
}

// scheduleSetArgs is SCHEDULE.SET's ARGV: an interval or a cron schedule
// with a template and up to two option pairs, each value refused with
// badPct% probability.
func (g *gen) scheduleSetArgs(badPct int) []string {
	id := g.scheduleID(badPct)
	kind, spec, tz := protocol.ScheduleEvery, g.val("every", domEvery, badPct), ""
	if g.chance("cron", 40) {
		kind, spec, tz = protocol.ScheduleCron, g.pick("cron", cronSpecs...), g.pick("tz", "", "Europe/Paris", "UTC")
	}
	if g.chance("kind refused", badPct) {
		kind = g.pick("kind", "Every", "", "at")
	}
	if g.chance("tz refused", badPct) {
		tz = strings.Repeat("z", protocol.MaxTimeZone+1)
	}
	start, end := "0", "0"
	if g.chance("start", 20) {
		start = g.val("start", domSchedTime, badPct)
	}
	if g.chance("end", 20) {
		end = g.val("end", domSchedTime, badPct)
	}
	args := []string{id, kind, spec, tz, g.val("jitter", domJitter, badPct), start, end,
		g.val("limit", domLimit, badPct), g.val("grace", domGrace, badPct), g.val("catchup", domCatchup, badPct)}
	// the template: ADD's job but for its delay
	j := g.job(badPct)
	args = append(args, j[0], j[1], j[3], j[4], j[5], j[6], j[7])
	var pairs []string
	if j[8] != "" || g.chance("lane pair", 10) {
		pairs = append(pairs, protocol.AddOptionLane, j[8])
	}
	if j[11] != "" || g.chance("wait pair", 10) {
		pairs = append(pairs, protocol.AddOptionWait, j[11])
	}
	// the job options a template carries (its due is refused below)
	for c, name := range []string{protocol.AddOptionTimeout, protocol.AddOptionKind, protocol.AddOptionHeaders} {
		if v := j[13+c]; v != "" {
			pairs = append(pairs, name, v)
		}
	}
	if g.chance("option refused", badPct) {
		pairs = append(pairs, g.pick("option", protocol.AddOptionParent, protocol.AddOptionOnFail, protocol.AddOptionDue,
			protocol.AddOptionLane, "x"), "1")
	}
	if len(pairs) > 2 && g.chance("pairs reversed", 50) {
		pairs[0], pairs[1], pairs[2], pairs[3] = pairs[2], pairs[3], pairs[0], pairs[1]
	}
	args = append(args, strconv.Itoa(len(pairs)/2))
	return append(args, pairs...)
}

// schedule reads schedule id of queue q on side s: its definition's
// elements (nil when absent or not a list) and its state field ("" when
// absent).
func (s side) schedule(q, id string) (def []string, state string, ok bool) {
	key := protocol.KeysOf(q).Fixed(protocol.SuffixSchedules)
	v, err := s.do("HMGET", key, protocol.ScheduleDefField+id, protocol.ScheduleStateField+id)
	list, _ := v.([]any)
	if err != nil || len(list) != 2 {
		return nil, "", false
	}
	if d, isStr := list[0].(string); isStr {
		def, _ = protocol.DecodeList(d)
	}
	state, ok = list[1].(string)
	return def, state, ok
}

// fireID draws the id of a FIRE: mostly a schedule of q on A.
func (g *gen) fireID(q string, badPct int) string {
	if ids := g.members(q, protocol.SuffixScheduleIDs); len(ids) > 0 && !g.chance("fire any id", 15) {
		return g.pick("fire id", ids...)
	}
	return g.scheduleID(badPct)
}

// fireArgs is SCHEDULE.FIRE's ARGV for schedule id of queue q, computed
// from its state on A as a worker computes it (see the file's comment),
// after the step that gives B A's state when they differ by the clock.
func (g *gen) fireArgs(q, id string, badPct int) []string {
	def, state, ok := g.p.a.schedule(q, id)
	parts := strings.Split(state, " ")
	_, stateB, okB := g.p.b.schedule(q, id)
	synced := ok && okB && state != stateB && sameState(state, stateB, g.p.window+settleBand)
	if ok && len(parts) == 5 && g.chance("schedule back-dated", 60) {
		// last fired some time ago, so that occurrences are due: a
		// worker that stepped earlier (the same bytes on both)
		if last, err := strconv.ParseInt(parts[2], 10, 64); err == nil {
			parts[2] = strconv.FormatInt(max(last-int64(g.intn("back-dated by", 1000, 100_000)), 0), 10)
			state, synced = strings.Join(parts, " "), true
		}
	}
	if synced {
		g.p.run(g.t, cmd("HSET", protocol.KeysOf(q).Fixed(protocol.SuffixSchedules), protocol.ScheduleStateField+id, state))
	}
	part := func(i int) int64 {
		if i < len(parts) {
			if v, err := strconv.ParseInt(parts[i], 10, 64); err == nil {
				return v
			}
		}
		return 0
	}
	rev, from := max(part(0), 1), part(2)
	if g.chance("fire stale", 10) {
		rev, from = g.pick64("stale rev", rev+1, max(rev-1, 1)), g.pick64("stale from", from, from+1, max(from-1, 0))
	}
	now := g.p.now(g.t)
	upto := from
	switch {
	case g.chance("fire not due", 5):
		upto = now + 3_600_000
	case from < now-settleBand && !g.chance("upto from", 20):
		upto = from + int64(g.intn("upto after from", 0, int(min(now-settleBand-from, 1<<30))))
	}
	// the occurrences, strictly increasing in (from, upto]
	var times []int64
	for t, n := from, g.intn("occurrences", 0, 3); len(times) < n && t < upto; {
		t += 1 + int64(g.intn("occurrence step", 0, int(min(upto-t-1, 100_000))))
		times = append(times, t)
	}
	jitter := int64(0)
	if len(def) > verdictJitter {
		jitter, _ = strconv.ParseInt(def[verdictJitter], 10, 64)
	}
	next := int64(0)
	if !g.chance("fire no next", 20) {
		next = upto + g.pick64("next after upto", 1_000, 1, 3_600_000)
	}
	args := []string{id, strconv.FormatInt(rev, 10), strconv.FormatInt(from, 10), strconv.FormatInt(upto, 10),
		strconv.FormatInt(next, 10), strconv.Itoa(len(times))}
	for _, t := range times {
		j := int64(0)
		switch {
		case g.chance("jitter outside", 5):
			j = jitter + 1
		case jitter > 0 && t+jitter > now+3_600_000 && g.chance("jitter", 30):
			// due an hour ahead or more on both servers
			j = jitter
		}
		args = append(args, strconv.FormatInt(t, 10), strconv.FormatInt(j, 10))
	}
	if g.chance("fire value refused", badPct) {
		i := g.intn("fire refused arg", 1, len(args)-1)
		args[i] = g.pick("fire refused value", "", "x", "01", "-1", "1000000000001", "253402300800000")
	}
	return args
}

// verdictJitter is the index of jitter in a definition's elements.
const verdictJitter = 3

// pick64 draws one of xs.
func (g *gen) pick64(label string, xs ...int64) int64 {
	return rapid.SampledFrom(xs).Draw(g.t, label)
}

// scheduleValidArgs is a well-formed ARGV of schedule verb v on queue q,
// for the malformed-call action.
func (g *gen) scheduleValidArgs(v *protocol.Verb, q string) []string {
	switch v {
	case protocol.ScheduleSet:
		return g.scheduleSetArgs(0)
	case protocol.SchedulePause, protocol.ScheduleResume, protocol.ScheduleRemove:
		return []string{g.fireID(q, 0)}
	case protocol.ScheduleList:
		return []string{g.pick("after", "", "s1", "s2"), g.val("count", domLanes, 0)}
	case protocol.ScheduleDue:
		return []string{g.limit(protocol.ScheduleDue, q, 0)}
	case protocol.ScheduleFire:
		return g.fireArgs(q, g.fireID(q, 0), 0)
	}
	return nil
}

// scheduleActions are the schedule verbs' actions, and the tampering of
// schedule state.
func (g *gen) scheduleActions(bad int) map[string]func(*rapid.T) {
	verb := func(v *protocol.Verb, args func(q string) []string) func(*rapid.T) {
		return func(*rapid.T) {
			q := g.queue()
			g.call(v, q, args(q)...)
		}
	}
	return map[string]func(*rapid.T){
		"schedule set":    verb(protocol.ScheduleSet, func(string) []string { return g.scheduleSetArgs(1) }),
		"schedule pause":  verb(protocol.SchedulePause, func(q string) []string { return []string{g.fireID(q, bad)} }),
		"schedule resume": verb(protocol.ScheduleResume, func(q string) []string { return []string{g.fireID(q, bad)} }),
		"schedule remove": verb(protocol.ScheduleRemove, func(q string) []string { return []string{g.fireID(q, bad)} }),
		"schedule list": verb(protocol.ScheduleList, func(string) []string {
			after := g.pick("after", append([]string{""}, scheduleIDs...)...)
			if g.chance("after refused", bad) {
				after = g.pick("after", badScheduleIDs[1:]...)
			}
			return []string{after, g.val("count", domLanes, bad)}
		}),
		"schedule due": verb(protocol.ScheduleDue, func(q string) []string { return []string{g.limit(protocol.ScheduleDue, q, bad)} }),
		"schedule fire": func(*rapid.T) {
			q := g.queue()
			if len(g.members(q, protocol.SuffixScheduleIDs)) == 0 && !g.chance("fire without a schedule", 20) {
				g.call(protocol.ScheduleSet, q, g.scheduleSetArgs(0)...)
			}
			id := g.fireID(q, bad)
			g.call(protocol.ScheduleFire, q, g.fireArgs(q, id, bad)...)
		},
		"schedule tamper": func(*rapid.T) { g.scheduleTamper() },
	}
}

// scheduleTamper writes a schedule's fields out of form: a state with
// parts missing, not decimals or out of range, a definition that does not
// decode or whose values SET refuses, or a member of scheddue or schedids
// without a schedule.
func (g *gen) scheduleTamper() {
	q := g.queue()
	k := protocol.KeysOf(q)
	schedules := k.Fixed(protocol.SuffixSchedules)
	id := g.fireID(q, 0)
	switch g.pick("schedule tampered", "state", "definition", "member") {
	case "state":
		g.p.run(g.t, cmd("HSET", schedules, protocol.ScheduleStateField+id,
			g.pick("state", "1 0 0 0 0", "1 0 0 0 1", "x", "", "2 3", "1  2 3 4 1", "01 0 0 0 0", "1 0 0 0 0 9",
				"9223372036854775807 0 0 0 0", "1000000000000 0 0 0 0", "1 999999999999999 1 1 0", " 1 0 0 0 0")))
	case "definition":
		valid := g.scheduleSetArgs(0)[1:]
		if g.chance("definition value", 50) {
			valid[g.intn("definition element", 0, len(valid)-1)] = g.pick("definition value", "", "x", "-1", "parent")
		}
		d := protocol.EncodeList(valid)
		switch g.pick("definition form", "list", "cut", "extra", "garbage") {
		case "cut":
			d = d[:len(d)-1]
		case "extra":
			d += "1:x"
		case "garbage":
			d = g.pick("definition bytes", "x", "01:a", "", fmt.Sprintf("%d:", len(d)+5))
		}
		g.p.run(g.t, cmd("HSET", schedules, protocol.ScheduleDefField+id, d))
	case "member":
		set := g.pick("schedule set", protocol.SuffixScheduleDue, protocol.SuffixScheduleIDs)
		score := "0"
		if set == protocol.SuffixScheduleDue {
			score = g.pick("due score", "0", "1", "99999999999999")
		}
		g.p.run(g.t, cmd("ZADD", k.Fixed(set), score, g.pick("member", append([]string{"ghost", "\x00"}, scheduleIDs...)...)))
	}
}

func init() {
	fixedKeys = append(fixedKeys, protocol.SuffixSchedules, protocol.SuffixScheduleDue, protocol.SuffixScheduleIDs)
}
