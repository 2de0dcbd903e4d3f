package verify

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/executor"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/conformance"
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// tb is what the harness needs of a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// A side is one server and the executor under test on it.
type side struct {
	name   string // "lua" or "native", with the server's address
	srv    *valkeyserver.Server
	client valkey.Client
	exec   executor.Executor
	resp2  resp2Exec          // the same executor on a RESP2 connection
	admin  *valkeyserver.Conn // TIME, dumps and the settle reads
	// replica is a replica of srv, without the module: it applies the
	// effects the executor replicated, and must end up with srv's dataset.
	replica *side
	// users are the executor under test on connections of ACL users (see
	// kindAs), made on first use and closed when the test ends.
	users map[string]executor.Executor
	// cleanup registers a function to run when the test ends.
	cleanup func(func())
}

// as is the executor under test on a connection that ACL user name (with
// the password "pw") logged in.
func (s side) as(t tb, name string) executor.Executor {
	t.Helper()
	if e, ok := s.users[name]; ok {
		return e
	}
	c, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{s.srv.Addr()}, Username: name, Password: "pw", DisableCache: true})
	if err != nil {
		t.Fatalf("log in as %s on %s: %v", name, s.name, err)
	}
	s.cleanup(c.Close)
	e := executor.Executor(executor.NewLua(c))
	if s.resp2.native {
		e = executor.NewNative(c)
	}
	s.users[name] = e
	return e
}

// A pair is two servers that run the same steps: A with the Lua executor
// (the oracle), B with the executor under comparison. Every step runs on A,
// then at once on B, and the replies and the datasets are compared before
// the next step.
type pair struct {
	a, b side
	// window is the widest gap so far, in server ms, between the clock read
	// before A's call of a step and the one after B's call: the bound on how
	// far a time the two executors stored for one step can be apart.
	window int64
	// resp2 sends calls on the RESP2 connections instead of valkey-go's
	// (RESP3), from a step "resp 2" on (see kindResp).
	resp2 bool
	// as is the ACL user of the next call, from a step "as" (kindAs).
	as string
	// steps are the steps run since reset, for the corpus file of a failure.
	steps []step
	// record, when not empty, is where a failing sequence is written. Each
	// failing run overwrites it, and rapid runs the shrunk case last, so the
	// file ends up holding the minimal sequence.
	record string
	// outcomes counts the calls by verb and reply class ("claim ok",
	// "claim EMQSTALE claim token mismatch"), logged at the end of a run to
	// show which paths the sequences reached.
	outcomes map[string]int
}

// queues are the queues sequences use: a plain name, one with a NUL and
// bytes that are not UTF-8 (a name is any bytes but braces), and one of the
// longest name, 128 bytes.
var queues = []string{"q", "r\x00\xff", strings.Repeat("n", protocol.MaxQueueName-1) + "\xfe"}

// settleBand: a lease deadline, due time or key expiry this close ahead of
// the clock is waited out before a step whose outcome depends on it, so
// that both servers see it in the past; one further ahead is in the future
// for both, as long as the step's two calls end before it (checked after).
const settleBand = 500

// opTimeout bounds one call or one admin round trip.
const opTimeout = 30 * time.Second

// startSide starts a server (with the module when module is not empty) and
// the executor named by native on it.
func startSide(t *testing.T, module string, native bool) side {
	t.Helper()
	s := valkeytest.Start(t, valkeyserver.Options{Module: module, Debug: true})
	c := valkeytest.Client(t, s)
	conn, err := s.Dial(t.Context())
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr(), err)
	}
	t.Cleanup(func() { conn.Close() })
	raw, err := dialRaw(t.Context(), s.Addr())
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr(), err)
	}
	t.Cleanup(func() { raw.Close() })
	sd := side{name: "lua", srv: s, client: c, exec: executor.NewLua(c), resp2: resp2Exec{conn: raw}, admin: conn,
		users: map[string]executor.Executor{}, cleanup: t.Cleanup}
	if native {
		sd.name, sd.exec, sd.resp2.native = "native", executor.NewNative(c), true
	}
	sd.name += "@" + s.Addr()
	r := valkeytest.Start(t, valkeyserver.Options{ReplicaOf: s.Addr()})
	if err := r.WaitReplicaSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	rconn, err := r.Dial(t.Context())
	if err != nil {
		t.Fatalf("dial %s: %v", r.Addr(), err)
	}
	t.Cleanup(func() { rconn.Close() })
	sd.replica = &side{name: "replica of " + sd.name + "@" + r.Addr(), srv: r, admin: rconn}
	return sd
}

// newLuaPair is Lua on A and Lua on B: the harness's own check, which must
// find nothing.
func newLuaPair(t *testing.T) *pair {
	return &pair{a: startSide(t, "", false), b: startSide(t, "", false)}
}

// newNativePair is Lua on A and the module on B. It fails the test unless
// the module registers every job-core verb.
func newNativePair(t *testing.T) *pair {
	module := valkeytest.ModulePath(t)
	p := &pair{a: startSide(t, "", false), b: startSide(t, module, true)}
	valkeytest.RequireVerbs(t, p.b.client)
	return p
}

// reset empties both datasets and forgets the previous sequence.
func (p *pair) reset(t tb) {
	t.Helper()
	for _, s := range []side{p.a, p.b} {
		if _, err := s.do("FLUSHALL", "SYNC"); err != nil {
			t.Fatalf("FLUSHALL on %s: %v", s.name, err)
		}
	}
	for _, s := range []side{p.a, p.b} {
		// what an action left set when it was cut short
		for _, c := range [][]string{{"CONFIG", "SET", "maxmemory", "0"}, {"CLIENT", "UNPAUSE"}} {
			if _, err := s.do(c...); err != nil {
				t.Fatalf("%s on %s: %v", strings.Join(c, " "), s.name, err)
			}
		}
	}
	p.window = 0
	p.resp2 = false
	p.as = ""
	p.steps = p.steps[:0]
}

// do runs an admin command on the side's own connection.
func (s side) do(args ...string) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return s.admin.Do(ctx, args...)
}

// now is the server clock in ms, as TIME gives it (both servers run on one
// machine, so on one clock).
func (p *pair) now(t tb) int64 {
	t.Helper()
	v, err := p.a.do("TIME")
	if err != nil {
		t.Fatalf("TIME: %v", err)
	}
	parts, _ := v.([]any)
	if len(parts) != 2 {
		t.Fatalf("TIME: %#v", v)
	}
	sec, _ := strconv.ParseInt(fmt.Sprint(parts[0]), 10, 64)
	usec, _ := strconv.ParseInt(fmt.Sprint(parts[1]), 10, 64)
	return sec*1000 + usec/1000
}

// run runs one step on A, then on B, and fails t when the replies differ
// or, after the step, the datasets do.
func (p *pair) run(t tb, s step) {
	t.Helper()
	p.steps = append(p.steps, s)
	switch s.Kind {
	case kindSleep:
		time.Sleep(s.Sleep)
		t.Logf("%s", s.short())
		return
	case kindResp:
		p.resp2 = s.Args[0] == "2"
		t.Logf("%s", s.short())
		return
	case kindAs:
		p.as = s.Args[0]
		t.Logf("%s", s.short())
		return
	case kindCmd:
		ra, rb := p.a.command(s.Args), p.b.command(s.Args)
		t.Logf("%s -> %s", s.short(), shorten(ra))
		if ra != rb {
			p.fail(t, fmt.Sprintf("replies differ at step %d, %s\n%s",
				len(p.steps), s.short(), p.replyDiff(ra, rb)))
		}
	case kindCall:
		now, notAfter := p.settle(t, s.Verb)
		if key, ok := orderedSet(s); ok && !p.sameOrder(key) {
			// a set scored by the servers' clocks whose members are in
			// another order on A than on B (gen_ops_test.go)
			t.Skipf("inconclusive: %s walks %s, in another order on A than on B", s.short(), key)
		}
		if key, limit, ok := cut(s); ok {
			// Due members in score order: their scores are the times of
			// earlier steps on each server, and two set by different steps
			// can be in one order on A and in the other on B when they are
			// closer than the skew between the servers. A limit below the
			// number due then takes different jobs on each, legitimately.
			// The generator draws limits that cut nowhere ambiguous; a
			// replayed sequence can still meet one.
			a, b := p.a.due(key, now, limit), p.b.due(key, now, limit)
			if !sameMembers(a, b) {
				t.Skipf("inconclusive: %s takes %q on A and %q on B: due jobs whose order depends on when each server ran earlier steps",
					s.short(), a, b)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		t0 := p.now(t)
		var resA, resB node
		user := p.as
		p.as = ""
		if user != "" {
			resA = fromResult(p.a.as(t, user).Raw(ctx, s.Verb, s.Numkeys, s.Args))
			resB = fromResult(p.b.as(t, user).Raw(ctx, s.Verb, s.Numkeys, s.Args))
		} else if p.resp2 {
			resA = p.a.resp2.call(s.Verb, s.Numkeys, s.Args)
			resB = p.b.resp2.call(s.Verb, s.Numkeys, s.Args)
		} else {
			resA = fromResult(p.a.exec.Raw(ctx, s.Verb, s.Numkeys, s.Args))
			resB = fromResult(p.b.exec.Raw(ctx, s.Verb, s.Numkeys, s.Args))
		}
		t1 := p.now(t)
		cancel()
		p.window = max(p.window, t1-t0)
		ra, rb := p.render(s, resA, resB, t0, t1)
		p.count(s, ra)
		t.Logf("%s -> %s", s.short(), shorten(ra))
		if ra != rb {
			p.inconclusive(t, t1, notAfter)
			p.fail(t, fmt.Sprintf("replies differ at step %d, %s\n%s",
				len(p.steps), s.short(), p.replyDiff(ra, rb)))
		}
		if d := p.compareDatasets(t); len(d) > 0 {
			p.inconclusive(t, t1, notAfter)
			p.fail(t, fmt.Sprintf("datasets differ after step %d, %s (A %s, B %s):\n  %s",
				len(p.steps), s.short(), p.a.name, p.b.name, strings.Join(d, "\n  ")))
		}
		return
	}
	if d := p.compareDatasets(t); len(d) > 0 {
		p.fail(t, fmt.Sprintf("datasets differ after step %d, %s (A %s, B %s):\n  %s",
			len(p.steps), s.short(), p.a.name, p.b.name, strings.Join(d, "\n  ")))
	}
}

// count records the outcome of call s whose reply on A rendered as r.
func (p *pair) count(s step, r string) {
	if p.outcomes == nil {
		p.outcomes = map[string]int{}
	}
	class := "ok"
	if text, ok := strings.CutPrefix(r, "(error) "); ok {
		class, _ = strconv.Unquote(text)
		if strings.HasPrefix(class, "EMQWIRE wire ") && strings.HasSuffix(class, " found, 1 expected") {
			class = "EMQWIRE wire <v> found"
		}
		if strings.HasPrefix(class, "EMQLOCK add duplicate of ") {
			class = "EMQLOCK add duplicate of <id>"
		}
	} else if s.Verb == protocol.CompleteMany && strings.HasPrefix(r, "[") {
		class = "ok, outcomes " + manyOutcomes(r)
	} else if r == "[]" || r == "(integer) 0" || r == "[(integer) 0, (integer) 0]" || r == conformance.Nil {
		class = "ok, nothing (" + r + ")"
	}
	p.outcomes[s.Verb.Name+" "+class]++
}

// manyOutcomes is the set of outcomes in COMPLETEMANY's rendered reply r,
// in the order 1 0 -1 -2 ("1 -1" for a reply with completed and stale
// jobs), and how many jobs the call named: "1..10" for 1 to 10, "11+" else.
func manyOutcomes(r string) string {
	var seen []string
	for _, o := range []string{"1", "0", "-1", "-2"} {
		if strings.Contains(r, "(integer) "+o+",") || strings.Contains(r, "(integer) "+o+"]") {
			seen = append(seen, o)
		}
	}
	size := "1..10"
	if strings.Count(r, "(integer) ") > 10 {
		size = "11+"
	}
	return strings.Join(seen, " ") + " of " + size
}

// logOutcomes logs the counts of count, sorted.
func (p *pair) logOutcomes(t tb) {
	t.Helper()
	var b strings.Builder
	for _, k := range sortedKeysOf(p.outcomes) {
		fmt.Fprintf(&b, "\n  %7d  %s", p.outcomes[k], k)
	}
	t.Logf("calls by verb and outcome:%s", b.String())
}

// replyDiff shows two rendered replies that differ; long ones are cut to
// the neighbourhood of their first difference.
func (p *pair) replyDiff(ra, rb string) string {
	const context = 120
	if len(ra) > 3*context || len(rb) > 3*context {
		i := 0
		for i < len(ra) && i < len(rb) && ra[i] == rb[i] {
			i++
		}
		from := max(0, i-context)
		cut := func(r string) string {
			return fmt.Sprintf("(%d bytes, from byte %d) …%s…", len(r), from, r[from:min(len(r), i+context)])
		}
		ra, rb = cut(ra), cut(rb)
	}
	return fmt.Sprintf("  %s: %s\n  %s: %s", p.a.name, ra, p.b.name, rb)
}

// inconclusive skips the sequence when a time that settle placed in the
// future was reached before B's call returned: the server stalled for
// longer than settleBand, and the two calls may have seen different sides
// of a deadline.
func (p *pair) inconclusive(t tb, t1, notAfter int64) {
	t.Helper()
	if t1 >= notAfter {
		t.Skipf("inconclusive: a deadline %d ms ahead of the settle point passed during the step (a stall of the server or the test)", settleBand)
	}
}

// fail writes the sequence to p.record (when set) and fails t with msg.
func (p *pair) fail(t tb, msg string) {
	t.Helper()
	if p.record != "" {
		header := append([]string{"A sequence on which the executors diverged; the last step shows it:"}, strings.Split(msg, "\n")...)
		if err := writeSequence(p.record, header, p.steps); err != nil {
			t.Logf("write %s: %v", p.record, err)
		} else {
			msg += "\nsequence written to " + p.record + " (rename it to keep it in the corpus)"
		}
	}
	t.Fatalf("%s", msg)
}

// command runs a plain command on the side and renders the reply.
func (s side) command(args []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return conformance.Render(s.client.Do(ctx, s.client.B().Arbitrary(args[0]).Args(args[1:]...).Build()))
}

// shorten cuts a rendered reply for the step log.
func shorten(r string) string {
	if len(r) > 200 {
		return r[:200] + "…"
	}
	return r
}

// settle waits until no deadline that step s reads is within settleBand
// ahead of the clock, and returns the clock then (now) and the earliest
// deadline further ahead (next: the step must end before it): the lease
// deadlines in active before RECOVER, the due times in delayed before
// PROMOTE, the keys' expiries before ADD, CLAIM and FAILURES.INCR (a
// counter's window). Every other verb's outcome
// is independent of the clock.
func (p *pair) settle(t tb, v *protocol.Verb) (now, next int64) {
	t.Helper()
	var set string
	switch v {
	case protocol.Recover:
		set = protocol.SuffixActive
	case protocol.Promote:
		set = protocol.SuffixDelayed
	case protocol.ScheduleDue:
		set = protocol.SuffixScheduleDue
	case protocol.Add, protocol.Claim, protocol.FailuresIncr:
		// the unique keys' expiries, the rate log's and its entries',
		// the failure counters'
	default:
		return p.now(t), 1<<63 - 1
	}
	for {
		now = p.now(t)
		next = 1<<63 - 1
		wait := int64(0)
		see := func(at int64) {
			if at <= now+settleBand {
				wait = max(wait, at-now+1)
			} else {
				next = min(next, at)
			}
		}
		for _, sd := range []side{p.a, p.b} {
			if set != "" {
				for _, q := range queues {
					v, err := sd.do("ZRANGEBYSCORE", protocol.Base(q)+set, strconv.FormatInt(now, 10), "+inf", "WITHSCORES", "LIMIT", "0", "1")
					if elems, ok := v.([]any); err == nil && ok && len(elems) == 2 {
						f, _ := strconv.ParseFloat(fmt.Sprint(elems[1]), 64)
						see(int64(f))
					}
				}
				continue
			}
			for _, ttl := range sd.ttls(t) {
				see(now + ttl)
			}
			if v == protocol.Claim {
				for _, at := range sd.rateLeaves(t) {
					see(at)
				}
			}
		}
		if wait == 0 {
			return now, next
		}
		time.Sleep(time.Duration(wait) * time.Millisecond)
	}
}

// timeSetOf is the zset whose due members verb v takes: active for
// RECOVER, delayed for PROMOTE, scheddue for SCHEDULE.DUE, else "".
func timeSetOf(v *protocol.Verb) string {
	switch v {
	case protocol.Recover:
		return protocol.SuffixActive
	case protocol.Promote:
		return protocol.SuffixDelayed
	case protocol.ScheduleDue:
		return protocol.SuffixScheduleDue
	}
	return ""
}

// cut returns the key and limit of a well-formed RECOVER or PROMOTE call:
// the call takes the first limit members of key due before now, in score
// order (ties by member).
func cut(s step) (key string, limit int, ok bool) {
	set := timeSetOf(s.Verb)
	if set == "" || s.Numkeys != strconv.Itoa(s.Verb.NumKeys()) || len(s.Args) != s.Verb.NumKeys()+1 {
		return "", 0, false
	}
	n, err := strconv.Atoi(s.Args[len(s.Args)-1])
	if err != nil || n < 1 || n > protocol.MaxCount {
		return "", 0, false
	}
	return s.Args[0] + set, n, true
}

// due returns the members of zset key with a score below now, in the order
// ZRANGEBYSCORE gives them, at most limit.
func (s side) due(key string, now int64, limit int) []string {
	v, _ := s.do("ZRANGEBYSCORE", key, "-inf", "("+strconv.FormatInt(now, 10), "LIMIT", "0", strconv.Itoa(limit))
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, m := range list {
		out[i] = fmt.Sprint(m)
	}
	return out
}

// sameMembers reports whether a and b hold the same members.
func sameMembers(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// ttls returns the remaining TTL in ms of every key of the side that has one.
// rateLeaves is when each entry of every queue's rate log leaves its
// window: its score plus the queue's rate_window (any number the meta
// field holds; none when it holds none).
func (s side) rateLeaves(t tb) []int64 {
	t.Helper()
	var out []int64
	for _, q := range queues {
		w, err := s.do("HGET", protocol.Base(q)+protocol.SuffixMeta, protocol.MetaRateWindow)
		window, perr := strconv.ParseInt(fmt.Sprint(w), 10, 64)
		if err != nil || perr != nil {
			continue
		}
		v, err := s.do("ZRANGE", protocol.Base(q)+protocol.SuffixRate, "0", "-1", "WITHSCORES")
		elems, _ := v.([]any)
		for i := 1; err == nil && i < len(elems); i += 2 {
			f, _ := strconv.ParseFloat(fmt.Sprint(elems[i]), 64)
			out = append(out, int64(f)+window)
		}
	}
	return out
}

func (s side) ttls(t tb) []int64 {
	t.Helper()
	v, err := s.do("KEYS", "*")
	if err != nil {
		t.Fatalf("KEYS on %s: %v", s.name, err)
	}
	keys, _ := v.([]any)
	if len(keys) == 0 {
		return nil
	}
	cmds := make([][]string, len(keys))
	for i, k := range keys {
		cmds[i] = []string{"PTTL", fmt.Sprint(k)}
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	replies, err := s.admin.DoMulti(ctx, cmds...)
	if err != nil {
		t.Fatalf("PTTL on %s: %v", s.name, err)
	}
	var out []int64
	for _, r := range replies {
		if n, ok := r.(int64); ok && n >= 0 {
			out = append(out, n)
		}
	}
	return out
}

// render renders the two replies of call step s canonically (node.render:
// type and bytes, recursively), replacing the values that depend on the
// clock by a placeholder when both are as the protocol allows:
//
//   - EXTEND's deadline, when it lies within [t0 + lease, t1 + lease], t0
//     and t1 the clock read before A's call and after B's;
//   - INSPECT's at field (the time of the ADD), when the two are integers at
//     most p.window apart;
//   - JOBS' scores, next score and at fields, and the dead filters' next
//     score, when the two are integers at most p.window apart (renderOps);
//   - CLAIM's EMQRATE wait (until the rate log's first live entry leaves
//     the window), when the two waits are at most p.window apart;
//   - the wait of each job of CLAIM's extended reply (the clock less the
//     job's at, each side's own), when the two are integers at most twice
//     p.window apart;
//   - PUBLISH's entry id, when the two ids' ms are at most p.window apart;
//   - SCHEDULE.DUE's time, and the schedule states SCHEDULE.DUE and
//     SCHEDULE.LIST reply, whose last and next the servers' clocks may
//     have set (SET, RESUME): equal but for those, at most p.window apart.
//
// Anything else is compared as it is.
func (p *pair) render(s step, ra, rb node, t0, t1 int64) (string, string) {
	switch s.Verb {
	case protocol.Jobs, protocol.RequeueDead, protocol.RemoveDead:
		ra, rb = p.renderOps(s, ra, rb)
	case protocol.Extend:
		if s.Numkeys == "3" && len(s.Args) == 6 {
			if lease, err := strconv.ParseInt(s.Args[5], 10, 64); err == nil {
				return deadline(ra, t0+lease, t1+lease), deadline(rb, t0+lease, t1+lease)
			}
		}
	case protocol.Claim:
		if wa, ok := rateWait(ra); ok {
			if wb, ok := rateWait(rb); ok && p.sameTime(wa, wb) {
				return protocol.ErrRateLimited(0) + " <wait>", protocol.ErrRateLimited(0) + " <wait>"
			}
		}
		if ra.Kind == "array" && rb.Kind == "array" && len(ra.Elems) == len(rb.Elems) {
			ra, rb = cloneNode(ra), cloneNode(rb)
			for i := range ra.Elems {
				x, y := ra.Elems[i], rb.Elems[i]
				const w = protocol.ClaimWaitsReply - 1
				if len(x.Elems) != protocol.ClaimWaitsReply || len(y.Elems) != protocol.ClaimWaitsReply ||
					x.Elems[w].Kind != "int" || y.Elems[w].Kind != "int" || max(x.Elems[w].Int-y.Elems[w].Int, y.Elems[w].Int-x.Elems[w].Int) > 2*p.window {
					continue
				}
				ra.Elems[i], rb.Elems[i] = cloneNode(x), cloneNode(y)
				ra.Elems[i].Elems[w] = node{Kind: "bulk", Text: "<wait>"}
				rb.Elems[i].Elems[w] = ra.Elems[i].Elems[w]
			}
		}
	case protocol.Publish:
		// the entry id XADD * generated: the servers' clocks, then a sequence
		if ra.Kind == "bulk" && rb.Kind == "bulk" {
			ma, _, okA := strings.Cut(ra.Text, "-")
			mb, _, okB := strings.Cut(rb.Text, "-")
			if okA && okB && p.sameTime(ma, mb) {
				return `"<entry id>"`, `"<entry id>"`
			}
		}
	case protocol.ScheduleDue, protocol.ScheduleList:
		if ra.Kind == "array" && rb.Kind == "array" && len(ra.Elems) == len(rb.Elems) {
			ra, rb = cloneNode(ra), cloneNode(rb)
			for i := range ra.Elems {
				x, y := ra.Elems[i], rb.Elems[i]
				if i == 0 && s.Verb == protocol.ScheduleDue {
					if x.Kind == "int" && y.Kind == "int" && x.Int >= t0 && y.Int <= t1 {
						ra.Elems[0] = node{Kind: "bulk", Text: "<now>"}
						rb.Elems[0] = ra.Elems[0]
					}
					continue
				}
				if x.Kind == "array" && y.Kind == "array" && len(x.Elems) == 3 && len(y.Elems) == 3 &&
					x.Elems[2].Kind == "bulk" && y.Elems[2].Kind == "bulk" && p.sameState(x.Elems[2].Text, y.Elems[2].Text) {
					rb.Elems[i] = cloneNode(y)
					rb.Elems[i].Elems[2] = x.Elems[2]
				}
			}
		}
	case protocol.Inspect:
		if ra.Kind == "array" && rb.Kind == "array" && len(ra.Elems) == len(rb.Elems) {
			ra, rb = cloneNode(ra), cloneNode(rb)
			for i := 0; i+1 < len(ra.Elems); i += 2 {
				k, x, y := ra.Elems[i], ra.Elems[i+1], rb.Elems[i+1]
				if k.Kind == "bulk" && k.Text == protocol.FieldAdded && rb.Elems[i].render() == k.render() &&
					x.Kind == "bulk" && y.Kind == "bulk" && p.sameTime(x.Text, y.Text) {
					ra.Elems[i+1] = node{Kind: "bulk", Text: "<at>"}
					rb.Elems[i+1] = ra.Elems[i+1]
				}
			}
		}
	}
	return ra.render(), rb.render()
}

// rateWait is the wait of an EMQRATE refusal, as text.
func rateWait(r node) (string, bool) {
	parts := strings.Split(protocol.ErrRateLimited(0), "0")
	if r.Kind != "error" {
		return "", false
	}
	ms, ok := strings.CutPrefix(r.Text, parts[0])
	if ok {
		ms, ok = strings.CutSuffix(ms, parts[1])
	}
	return ms, ok
}

// cloneNode copies a node's top-level elements, for render to replace some.
func cloneNode(n node) node {
	n.Elems = slices.Clone(n.Elems)
	return n
}

// deadline renders an integer reply within [lo, hi] as "(integer) <deadline>".
func deadline(r node, lo, hi int64) string {
	if r.Kind == "int" && r.Int >= lo && r.Int <= hi {
		return "(integer) <deadline>"
	}
	return r.render()
}

// sameTime reports whether a and b are integers at most p.window apart: two
// readings of the clock by one step, on A and on B.
func (p *pair) sameTime(a, b string) bool {
	x, errX := strconv.ParseInt(a, 10, 64)
	y, errY := strconv.ParseInt(b, 10, 64)
	return errX == nil && errY == nil && x-y <= p.window && y-x <= p.window
}

// sameState reports whether two schedule states are the same but for their
// last and next, which may be two readings of the clock by one step.
func (p *pair) sameState(a, b string) bool {
	return sameState(a, b, p.window)
}

// sameState reports whether two schedule states (rev count last next
// paused) are equal but for last and next, at most window apart.
func sameState(a, b string, window int64) bool {
	x, y := strings.Split(a, " "), strings.Split(b, " ")
	if len(x) != 5 || len(y) != 5 {
		return a == b
	}
	for i := range x {
		if x[i] != y[i] && ((i != 2 && i != 3) || !within(x[i], y[i], window)) {
			return false
		}
	}
	return true
}

// compareDatasets dumps both servers and returns their differences. A key
// with a TTL within settleBand of expiring on either side is waited out
// first, and a dump pair that took longer than settleBand is repeated, so
// that no key expires between the two dumps.
func (p *pair) compareDatasets(t tb) []string {
	t.Helper()
	return compareSides(t, p.a, p.b, p.window, false)
}

// compareSides is compareDatasets for any two servers, times compared
// within window ms.
func compareSides(t tb, x, y side, window int64, replica bool) []string {
	t.Helper()
	for {
		start := time.Now()
		da, db := dumpSide(t, x), dumpSide(t, y)
		wait := int64(0)
		for _, d := range []dataset{da, db} {
			for _, k := range d {
				switch {
				case k.TTL >= 0 && k.TTL <= settleBand:
					wait = max(wait, k.TTL+1)
				case k.TTL == -2: // expired while it was being read
					wait = max(wait, 1)
				}
			}
		}
		if wait > 0 {
			time.Sleep(time.Duration(wait) * time.Millisecond)
			continue
		}
		if time.Since(start) > settleBand*time.Millisecond {
			continue
		}
		return compare(da, db, window, replica)
	}
}

// checkReplicas waits until each side's replica has applied every write so
// far (its replication offset reaches its primary's) and fails t unless the
// replica's dataset is its primary's, exactly (only TTL values may differ):
// what an executor replicated is what it wrote. A sequence ends with it. A
// difference is looked at again for up to a second before it fails (a key
// that expires between the two reads); a replicated effect that differs
// stays different, so the retry hides no divergence.
func (p *pair) checkReplicas(t tb) {
	t.Helper()
	for _, s := range []side{p.a, p.b} {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		err := s.replica.srv.WaitCaughtUp(ctx, s.srv)
		cancel()
		if err != nil {
			t.Fatalf("replica of %s: %v", s.name, err)
		}
		var d []string
		for try := 0; try < 10; try++ {
			if try > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			if d = compareSides(t, s, *s.replica, 0, true); len(d) == 0 {
				break
			}
		}
		if len(d) > 0 {
			p.fail(t, fmt.Sprintf("the %s differs from its primary after step %d (primary first):\n  %s",
				s.replica.name, len(p.steps), strings.Join(d, "\n  ")))
		}
	}
}
