package verify

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// ignoreEncodings, set by TRAFIKEY_DIFF_ENCODINGS=ignore, compares keys
// without their encodings (OBJECT ENCODING): a way to look past a known
// encoding divergence for other ones while it is being fixed. The default
// compares them: an encoding shows in DUMP, in memory, and on replicas.
var ignoreEncodings = os.Getenv("TRAFIKEY_DIFF_ENCODINGS") == "ignore"

// A dataset is every key of a server, read back logically.
type dataset map[string]keyDump

// keyDump is one key: its type, its encoding, its TTL (PTTL: -1 without
// one, -2 when it expired while it was being read) and its contents: a string's value; a hash's fields and values; a
// list's elements; a set's members, sorted; a zset's members and scores.
type keyDump struct {
	Type, Encoding string
	TTL            int64
	Items          []string
}

// reads are the commands that read each type; all run on every key in one
// pipeline, and the one of the key's type is kept.
var reads = map[string][]string{
	"string": {"GET"},
	"hash":   {"HGETALL"},
	"list":   {"LRANGE", "", "0", "-1"},
	"set":    {"SMEMBERS"},
	"zset":   {"ZRANGE", "", "0", "-1", "WITHSCORES"},
	"stream": {"XRANGE", "", "-", "+"},
}

var readOrder = []string{"string", "hash", "list", "set", "zset", "stream"}

// dumpSide reads the whole dataset of a side in two round trips.
func dumpSide(t tb, s side) dataset {
	t.Helper()
	v, err := s.do("KEYS", "*")
	if err != nil {
		t.Fatalf("KEYS on %s: %v", s.name, err)
	}
	list, _ := v.([]any)
	out := dataset{}
	if len(list) == 0 {
		return out
	}
	const per = 3 + 6 // TYPE, OBJECT ENCODING, PTTL, then one read per type
	cmds := make([][]string, 0, per*len(list))
	for _, k := range list {
		key := fmt.Sprint(k)
		cmds = append(cmds, []string{"TYPE", key}, []string{"OBJECT", "ENCODING", key}, []string{"PTTL", key})
		for _, typ := range readOrder {
			c := slices.Clone(reads[typ])
			if len(c) > 1 {
				c[1] = key
			} else {
				c = append(c, key)
			}
			cmds = append(cmds, c)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	replies, err := s.admin.DoMulti(ctx, cmds...)
	if err != nil {
		t.Fatalf("dump of %s: %v", s.name, err)
	}
	for i, k := range list {
		r := replies[per*i : per*(i+1)]
		typ := fmt.Sprint(r[0])
		if typ == "none" {
			continue // expired between KEYS and the reads
		}
		d := keyDump{Type: typ, Encoding: fmt.Sprint(r[1]), TTL: -1}
		if n, ok := r[2].(int64); ok {
			d.TTL = n
		}
		if j := slices.Index(readOrder, typ); j >= 0 {
			switch x := r[3+j].(type) {
			case string:
				d.Items = []string{x}
			case []any:
				for _, e := range x {
					d.Items = append(d.Items, fmt.Sprint(e))
				}
			}
		} else {
			d.Items = []string{"(type " + typ + " not read)"}
		}
		if typ == "set" {
			slices.Sort(d.Items)
		}
		if typ == "stream" && strings.HasSuffix(fmt.Sprint(k), "}:"+protocol.SuffixEvents) {
			// the entry ids of PUBLISH and of the job events are the
			// servers' clocks: compared as present, the entries' fields
			// (and the approximate trim's count) exactly. Their order is
			// not compared: PROMOTE and RECOVER publish in the order of
			// due times and deadlines, which the two clocks may order
			// otherwise (the conformance suite holds the order). So an
			// entry of several events is compared as its count and its
			// events, each rendered as an entry of one.
			entries, _ := r[3+slices.Index(readOrder, typ)].([]any)
			d.Items = eventItems(entries)
			slices.Sort(d.Items)
		}
		out[fmt.Sprint(k)] = d
	}
	return out
}

// compare returns one line per difference between the datasets of A and B,
// after these normalisations, each for a value that legitimately depends
// on when a server ran the step:
//
//   - a TTL is compared as present or absent, not by its value;
//   - in the zsets active, delayed and dead of a queue (scores are lease
//     deadlines, due times and times of death) the members must be the same
//     and each member's two scores at most window ms apart; their order is
//     not compared, since equal scores on one side may be unequal on the
//     other;
//   - in a job row (emq:{q}:job:<id>) the field at (the time of the ADD)
//     must be an integer at most window ms apart on the two sides.
//
// When B is A's replica (replica), a string's encoding is not compared:
// the replica encodes the bytes it is sent its own way.
//
// Everything else is compared exactly: types, encodings, every byte of
// every value, the order of list elements, the order of pending's members
// and its scores, and the order of a hash's fields while the hash is a
// listpack (its fields are then in the order they were first written).
func compare(a, b dataset, window int64, replica bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range append(sortedKeysOf(a), sortedKeysOf(b)...) {
		if seen[k] {
			continue
		}
		seen[k] = true
		x, inA := a[k]
		y, inB := b[k]
		switch {
		case !inA:
			out = append(out, fmt.Sprintf("%q only on B: %s", k, y.describe()))
			continue
		case !inB:
			out = append(out, fmt.Sprintf("%q only on A: %s", k, x.describe()))
			continue
		}
		// A replica makes its own string objects from the bytes of the
		// replicated command: where a 9.1 primary keeps "12345" embedded,
		// as its scripts set it, the replica stores an int. Its value is
		// still compared below.
		sameString := replica && x.Type == "string"
		if x.Type != y.Type || (x.Encoding != y.Encoding && !ignoreEncodings && !sameString) {
			out = append(out, fmt.Sprintf("%q: A is %s (%s), B is %s (%s)", k, x.Type, x.Encoding, y.Type, y.Encoding))
			continue
		}
		if x.Encoding != y.Encoding && x.Type == "hash" {
			// field order is comparable only when both are listpacks
			x.Encoding, y.Encoding = "hashtable", "hashtable"
		}
		if (x.TTL >= 0) != (y.TTL >= 0) {
			out = append(out, fmt.Sprintf("%q: PTTL A %d, B %d", k, x.TTL, y.TTL))
		}
		if d := compareItems(k, x, y, window); d != "" {
			out = append(out, fmt.Sprintf("%q (%s): %s", k, x.Type, d))
		}
	}
	return out
}

func (d keyDump) describe() string {
	return fmt.Sprintf("%s %s", d.Type, quoteAll(d.Items))
}

func quoteAll(items []string) string {
	parts := make([]string, len(items))
	for i, s := range items {
		if len(s) > 60 && !repeated(s) {
			s = s[:60] + "…"
		}
		parts[i] = quote(s)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// timeSet reports whether key is a queue's zset scored by times.
func timeSet(key string) bool {
	if !strings.HasPrefix(key, protocol.KeyPrefix+"{") {
		return false
	}
	for _, s := range []string{protocol.SuffixActive, protocol.SuffixDelayed, protocol.SuffixDead, protocol.SuffixCompleted, protocol.SuffixScheduleDue, protocol.SuffixRate} {
		if strings.HasSuffix(key, "}:"+s) {
			return true
		}
	}
	return false
}

// jobRow reports whether key is a queue's job row.
func jobRow(key string) bool {
	return strings.HasPrefix(key, protocol.KeyPrefix+"{") && strings.Contains(key, "}:"+protocol.SuffixJob) &&
		!strings.HasSuffix(key, protocol.SuffixLogs)
}

func compareItems(key string, x, y keyDump, window int64) string {
	switch {
	case x.Type == "zset" && timeSet(key):
		return compareTimeSet(x.Items, y.Items, window)
	case x.Type == "hash":
		xi, yi := x.Items, y.Items
		if x.Encoding != "listpack" {
			xi, yi = sortPairs(xi), sortPairs(yi)
		}
		if len(xi) != len(yi) {
			return fmt.Sprintf("A %s, B %s", quoteAll(xi), quoteAll(yi))
		}
		for i := 0; i+1 < len(xi); i += 2 {
			if xi[i] != yi[i] {
				return fmt.Sprintf("A %s, B %s", quoteAll(xi), quoteAll(yi))
			}
			if xi[i+1] == yi[i+1] {
				continue
			}
			if jobRow(key) && xi[i] == protocol.FieldAdded && within(xi[i+1], yi[i+1], window) {
				continue
			}
			if strings.HasSuffix(key, "}:"+protocol.SuffixSchedules) && strings.HasPrefix(xi[i], protocol.ScheduleStateField) &&
				sameState(xi[i+1], yi[i+1], window) {
				continue
			}
			return fmt.Sprintf("field %q: A %s, B %s", xi[i], quote(xi[i+1]), quote(yi[i+1]))
		}
		return ""
	}
	if !slices.Equal(x.Items, y.Items) {
		return fmt.Sprintf("A %s, B %s", quoteAll(x.Items), quoteAll(y.Items))
	}
	return ""
}

// compareTimeSet compares two zsets (member, score, …) by member, the scores
// at most window apart.
func compareTimeSet(x, y []string, window int64) string {
	mx, my := pairs(x), pairs(y)
	var diffs []string
	for _, m := range sortedKeysOf(mx) {
		sy, ok := my[m]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("member %q only on A", m))
		case !within(mx[m], sy, window):
			diffs = append(diffs, fmt.Sprintf("member %q: score A %s, B %s (more than %d ms apart)", m, mx[m], sy, window))
		}
	}
	for _, m := range sortedKeysOf(my) {
		if _, ok := mx[m]; !ok {
			diffs = append(diffs, fmt.Sprintf("member %q only on B", m))
		}
	}
	return strings.Join(diffs, "; ")
}

// within reports whether two numbers are at most window apart.
func within(a, b string, window int64) bool {
	x, errX := strconv.ParseFloat(a, 64)
	y, errY := strconv.ParseFloat(b, 64)
	return errX == nil && errY == nil && x-y <= float64(window) && y-x <= float64(window)
}

func pairs(items []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(items); i += 2 {
		m[items[i]] = items[i+1]
	}
	return m
}

func sortedKeysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sortPairs sorts field/value pairs by field.
func sortPairs(items []string) []string {
	m := pairs(items)
	out := make([]string, 0, len(items))
	for _, k := range sortedKeysOf(m) {
		out = append(out, k, m[k])
	}
	return out
}

// dial is valkeyserver.Server.Dial with the harness's timeout.
func dial(t tb, s *valkeyserver.Server) *valkeyserver.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	c, err := s.Dial(ctx)
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr(), err)
	}
	return c
}

// eventItems renders the events stream's entries without their ids: an
// entry of one event as it is, an entry of several (brand emq n <n> event
// …) as its count, then each of its events as an entry of one.
func eventItems(entries []any) []string {
	var out []string
	for _, e := range entries {
		pair, _ := e.([]any)
		if len(pair) != 2 {
			out = append(out, fmt.Sprint(e))
			continue
		}
		fields, _ := pair[1].([]any)
		if len(fields) < 4 || fields[2] != protocol.EventCountField {
			out = append(out, fmt.Sprint("[<id> ", fields, "]"))
			continue
		}
		out = append(out, fmt.Sprint("[<id> an entry of ", fields[3], " events]"))
		var ev []any
		flush := func() {
			if ev != nil {
				out = append(out, fmt.Sprint("[<id> ", append([]any{fields[0], fields[1]}, ev...), "]"))
			}
		}
		for i := 4; i+1 < len(fields); i += 2 {
			if fields[i] == protocol.EventNameField {
				flush()
				ev = []any{}
			}
			ev = append(ev, fields[i], fields[i+1])
		}
		flush()
	}
	return out
}
