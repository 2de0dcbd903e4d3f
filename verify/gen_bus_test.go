package verify

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/trafikey/trafikey/internal/protocol"
)

// The bus verbs' draws (docs/PROTOCOL.md, "Bus verbs").

var (
	domFailuresTTL = dom{[]string{"600000", "1", "2", "315360000000"}, []string{"0", "315360000001", "01", "-1", ""}}
	// busNames: few, so that streams and counters grow; badBusNames are
	// refused in the layout step.
	busNames    = []string{protocol.DefaultBusName, "b2", "x-y.z:1/@", strings.Repeat("n", protocol.MaxBusName)}
	badBusNames = []string{"", "a b", "{x}", "\x00", strings.Repeat("n", protocol.MaxBusName+1)}
	events      = []string{"added", "completed", "e", strings.Repeat("e", protocol.MaxEventName), "\x00\xff"}
	// domEventsMax is EVENTS' max_len: small bounds make the job events'
	// MAXLEN ~ trim
	domEventsMax = dom{[]string{"1000", "1", "2", "0", "1000000"}, []string{"1000001", "-1", "01", "", "x"}}
)

// busName draws a bus name, rarely a refused one.
func (g *gen) busName(badPct int) string {
	if g.chance("bus name refused", badPct) {
		return g.pick("bus name", badBusNames...)
	}
	return g.pick("bus name", busNames...)
}

// callNamed runs named verb v on queue q's key of bus name.
func (g *gen) callNamed(v *protocol.Verb, q, name string, args ...string) {
	k := protocol.KeysOf(q)
	g.p.run(g.t, call(v, []string{k.Base, k.Version, v.NamedKey(k, name)}, args))
}

// streamTop is the last generated id of a stream on A ("0-0" when absent),
// as its two halves.
func (g *gen) streamTop(key string) (ms, seq int64) {
	v, err := g.p.a.do("XINFO", "STREAM", key)
	list, _ := v.([]any)
	if err != nil {
		return 0, 0
	}
	for i := 0; i+1 < len(list); i += 2 {
		if fmt.Sprint(list[i]) == "last-generated-id" {
			a, b, _ := strings.Cut(fmt.Sprint(list[i+1]), "-")
			ms, _ = strconv.ParseInt(a, 10, 64)
			seq, _ = strconv.ParseInt(b, 10, 64)
		}
	}
	return ms, seq
}

// appendArgs is APPEND's ARGV for bus name of queue q: 1 to 4 entries,
// mostly with ids after the top on A, each refused with badPct%
// probability (an id not after the top or the entry before, a malformed id,
// a bad field count).
func (g *gen) appendArgs(q, name string, badPct int) []string {
	ms, seq := g.streamTop(protocol.Append.NamedKey(protocol.KeysOf(q), name))
	n := g.intn("append entries", 1, 4)
	args := []string{strconv.Itoa(n)}
	for range n {
		switch {
		case g.chance("append id not after", badPct):
			// the top itself, or one before it
		case g.chance("append same ms", 50):
			seq++
		default:
			ms, seq = ms+int64(g.intn("append ms step", 1, 3)), 0
		}
		id := strconv.FormatInt(ms, 10) + "-" + strconv.FormatInt(seq, 10)
		if g.chance("append id refused", badPct) {
			id = g.pick("append id", "0-0", "x", "1", "01-1", "*", "1000000000000000-0")
		}
		nf := g.intn("append fields", 1, 3)
		count := strconv.Itoa(nf)
		if g.chance("append fields refused", badPct) {
			count = g.pick("append fields", "0", "1001", "x")
		}
		args = append(args, id, count)
		for i := range nf {
			args = append(args, g.pick("field", "f", "g", "\x00", strconv.Itoa(i)), g.text("value", false))
		}
	}
	return args
}

// publishArgs is PUBLISH's ARGV: an event, a job id, and 0 to 2 pairs.
func (g *gen) publishArgs(badPct int) []string {
	event := g.pick("event", events...)
	if g.chance("event refused", badPct) {
		event = g.pick("event", "", strings.Repeat("e", protocol.MaxEventName+1))
	}
	id := g.pick("publish id", "1", "2", "4398046511103")
	if g.chance("publish id refused", badPct) {
		id = g.pick("publish id", badIDs...)
	}
	args := []string{event, id}
	for range g.intn("publish pairs", 0, 2) {
		args = append(args, g.pick("field", "lane", "f", "\x00"), g.text("value", false))
	}
	return args
}

// busTamper plants what the bus verbs refuse or must predict: an events
// entry of another brand, a stream top past every id, a counter that INCR
// refuses or one at the edge, a counter without a TTL.
func (g *gen) busTamper() {
	k := protocol.KeysOf(g.queue())
	counter := protocol.FailuresIncr.NamedKey(k, g.pick("bus name", busNames...))
	switch g.pick("bus tamper", "brand", "top", "counter", "no ttl") {
	case "brand":
		g.p.run(g.t, cmd("XADD", k.Fixed(protocol.SuffixEvents), "1-1", "brand", g.pick("brand", "bull", "emq\x00")))
	case "top":
		key := g.pick("stream", k.Fixed(protocol.SuffixEvents), protocol.Append.NamedKey(k, protocol.DefaultBusName))
		g.p.run(g.t, cmd("XADD", key, "18446744073709551615-18446744073709551615", "brand", "emq"))
	case "counter":
		g.p.run(g.t, cmd("SET", counter, g.pick("counter", "abc", "9223372036854775807", "-5", "01", ""), "PX", "600000"))
	case "no ttl":
		g.p.run(g.t, cmd("SET", counter, "5"))
	}
}

func init() {
	fixedKeys = append(fixedKeys, protocol.SuffixBus+protocol.DefaultBusName, protocol.SuffixEvents,
		protocol.SuffixFailuresCount+protocol.DefaultBusName)
}
