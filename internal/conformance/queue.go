package conformance

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// queue is one scenario's queue on the shared server, with the helpers the
// scenarios are written in. Every scenario has its own queue, so scenarios
// run in parallel and a snapshot of emq:{q}:* sees only its own keys.
type queue struct {
	t    *testing.T
	env  Env
	name string
	k    protocol.Keys
}

var queueSeq atomic.Int64

// newQueue names a fresh queue after the test (for a reader of the keys) and
// a sequence number (for uniqueness). The name holds no glob character, so
// emq:{q}:* matches exactly the queue's keys.
func newQueue(t *testing.T, env Env) *queue {
	t.Helper()
	n := t.Name()
	if i := strings.IndexByte(n, '/'); i >= 0 {
		n = n[i+1:] // the Run's own test name is the same for every scenario
	}
	clean := []byte(n)
	for i, c := range clean {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '/') {
			clean[i] = '_'
		}
	}
	if len(clean) > 100 {
		clean = clean[len(clean)-100:]
	}
	name := strconv.FormatInt(queueSeq.Add(1), 10) + ":" + string(clean)
	return &queue{t: t, env: env, name: name, k: protocol.KeysOf(name)}
}

// other returns another queue on the same server, for cross-queue keys.
func (q *queue) other() *queue {
	o := newQueue(q.t, q.env)
	o.name += ".other"
	o.k = protocol.KeysOf(o.name)
	return o
}

// exec runs verb v on the queue's declared keys.
func (q *queue) exec(v *protocol.Verb, args ...string) valkey.ValkeyResult {
	return q.env.Exec.Exec(q.t.Context(), v, v.KeyNames(q.k), args)
}

// call runs verb v and renders its reply.
func (q *queue) call(v *protocol.Verb, args ...string) string {
	return Render(q.exec(v, args...))
}

// must runs verb v and fails the test on an error reply.
func (q *queue) must(v *protocol.Verb, args ...string) string {
	q.t.Helper()
	r := q.call(v, args...)
	require.False(q.t, strings.HasPrefix(r, "(error)") || strings.HasPrefix(r, "(transport)"),
		"%s %q: %s", v.Command, args, r)
	return r
}

// keys runs verb v with the keys given (a layout scenario).
func (q *queue) keys(v *protocol.Verb, keys []string, args ...string) func() valkey.ValkeyResult {
	return func() valkey.ValkeyResult { return q.env.Exec.Exec(q.t.Context(), v, keys, args) }
}

// raw runs verb v with numkeys spelled as given and rest after it.
func (q *queue) raw(v *protocol.Verb, numkeys string, rest ...string) func() valkey.ValkeyResult {
	return func() valkey.ValkeyResult { return q.env.Exec.Raw(q.t.Context(), v, numkeys, rest) }
}

// verb is exec as a deferred call, for refuse and unchanged.
func (q *queue) verb(v *protocol.Verb, args ...string) func() valkey.ValkeyResult {
	return func() valkey.ValkeyResult { return q.exec(v, args...) }
}

// cmd runs a plain server command (a read to check, or a key to plant).
func (q *queue) cmd(args ...string) valkey.ValkeyResult {
	c := q.env.Client
	return c.Do(q.t.Context(), c.B().Arbitrary(args...).Build())
}

// r runs a plain server command and renders its reply.
func (q *queue) r(args ...string) string { return Render(q.cmd(args...)) }

// do runs a plain server command and fails the test on an error.
func (q *queue) do(args ...string) {
	q.t.Helper()
	err := q.cmd(args...).Error()
	if valkey.IsValkeyNil(err) {
		err = nil
	}
	require.NoError(q.t, err, "%q", args)
}

// snapshot is the queue's dataset: every key's DUMP and whether it has a TTL.
func (q *queue) snapshot() map[string]string {
	q.t.Helper()
	return valkeytest.Snapshot(q.t, q.env.Server, "emq:{"+q.name+"}:*")
}

// unchanged runs call, requires that the queue's dataset is the same before
// and after, and returns the rendered reply.
func (q *queue) unchanged(call func() valkey.ValkeyResult) string {
	q.t.Helper()
	before := q.snapshot()
	reply := Render(call())
	valkeytest.RequireUnchanged(q.t, before, q.snapshot())
	return reply
}

// refuse runs call and requires the error reply want, exactly, and a dataset
// left as it was: a refused call writes nothing.
func (q *queue) refuse(want string, call func() valkey.ValkeyResult) {
	q.t.Helper()
	before := q.snapshot()
	reply := Render(call())
	require.Equal(q.t, Err(want), reply)
	valkeytest.RequireUnchanged(q.t, before, q.snapshot())
}

// now is the server's clock in ms.
func (q *queue) now() int64 {
	q.t.Helper()
	t, err := q.cmd("TIME").AsStrSlice()
	require.NoError(q.t, err)
	sec, _ := strconv.ParseInt(t[0], 10, 64)
	usec, _ := strconv.ParseInt(t[1], 10, 64)
	return sec*1000 + usec/1000
}

// score is a member's score in a zset, which must be there.
func (q *queue) score(key, member string) int64 {
	q.t.Helper()
	s, err := q.cmd("ZSCORE", key, member).ToString()
	require.NoError(q.t, err, "ZSCORE %s %s", key, member)
	v, err := strconv.ParseInt(s, 10, 64)
	require.NoError(q.t, err, "ZSCORE %s %s is %q", key, member, s)
	return v
}

// install stamps the queue's wire.
func (q *queue) install() {
	q.t.Helper()
	require.Equal(q.t, Int(1), q.call(protocol.Install))
}

// plant replaces key with a value of another type than want ("string",
// "hash", "zset" or "list").
func (q *queue) plant(key, want string) {
	q.t.Helper()
	q.do("DEL", key)
	if want == "string" {
		q.do("RPUSH", key, "planted")
	} else {
		q.do("SET", key, "planted")
	}
}

// job is one job of an ADD call. Empty fields take defaults: priority 0, no
// delay, 3 attempts, fixed backoff of 0 ms, no unique key (a TTL of 60 s when
// a unique key is set).
type job struct {
	data      string
	prio      string
	delay     string
	attempts  string
	backoff   string
	backoffMS string
	unique    string
	uniqueTTL string
	lane      string // empty: none
	parent    string // the 1-based index of its parent in the call; empty: none
	onfail    string // the child's policy; empty: the default
	wait      string // ms its outcome is kept; empty: none
	due       string // an absolute due time ms; empty: none
	timeout   string // ms one attempt may run; empty: none
	kind      string // its kind; empty: none
	headers   string // opaque bytes for the worker; empty: none
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// columns are ADD's option columns a call of jobs needs: lane, parent,
// onfail, wait, due, timeout, kind, headers, each when a job has a value
// for it, in that order.
func columns(jobs ...job) []string {
	var lane, parent, onfail, wait, due, timeout, kind, headers bool
	for _, j := range jobs {
		lane = lane || j.lane != ""
		parent = parent || j.parent != ""
		onfail = onfail || j.onfail != ""
		wait = wait || j.wait != ""
		due = due || j.due != ""
		timeout = timeout || j.timeout != ""
		kind = kind || j.kind != ""
		headers = headers || j.headers != ""
	}
	var out []string
	for _, c := range []struct {
		on   bool
		name string
	}{{lane, protocol.AddOptionLane}, {parent, protocol.AddOptionParent}, {onfail, protocol.AddOptionOnFail}, {wait, protocol.AddOptionWait},
		{due, protocol.AddOptionDue}, {timeout, protocol.AddOptionTimeout}, {kind, protocol.AddOptionKind}, {headers, protocol.AddOptionHeaders}} {
		if c.on {
			out = append(out, c.name)
		}
	}
	return out
}

// args is the job's group of ADD's ARGV: the 8 fixed values, then its value
// of each option column of cols.
func (j job) args(cols []string) []string {
	ttl := orDefault(j.uniqueTTL, "0")
	if j.unique != "" {
		ttl = orDefault(j.uniqueTTL, "60000")
	}
	out := []string{j.data, orDefault(j.prio, "0"), orDefault(j.delay, "0"), orDefault(j.attempts, "3"),
		orDefault(j.backoff, "fixed"), orDefault(j.backoffMS, "0"), j.unique, ttl}
	for _, c := range cols {
		switch c {
		case protocol.AddOptionLane:
			out = append(out, j.lane)
		case protocol.AddOptionParent:
			out = append(out, j.parent)
		case protocol.AddOptionOnFail:
			out = append(out, j.onfail)
		case protocol.AddOptionWait:
			out = append(out, j.wait)
		case protocol.AddOptionDue:
			out = append(out, j.due)
		case protocol.AddOptionTimeout:
			out = append(out, j.timeout)
		case protocol.AddOptionKind:
			out = append(out, j.kind)
		case protocol.AddOptionHeaders:
			out = append(out, j.headers)
		}
	}
	return out
}

// addArgs is ADD's ARGV for jobs: n, then k and the option columns any job
// uses (k = 0 for none).
func addArgs(jobs ...job) []string {
	cols := columns(jobs...)
	out := []string{strconv.Itoa(len(jobs)), strconv.Itoa(len(cols))}
	out = append(out, cols...)
	for _, j := range jobs {
		out = append(out, j.args(cols)...)
	}
	return out
}

// add adds jobs and returns their ids.
func (q *queue) add(jobs ...job) []string {
	q.t.Helper()
	ids, err := q.exec(protocol.Add, addArgs(jobs...)...).AsStrSlice()
	require.NoError(q.t, err)
	require.Len(q.t, ids, len(jobs))
	return ids
}

// addOne adds one job with data and returns its id.
func (q *queue) addOne(data string) string {
	q.t.Helper()
	return q.add(job{data: data})[0]
}

// claimed is one entry of CLAIM's reply.
type claimed struct {
	id, data string
	att      int64
}

// token is the entry's attempt as the verbs take it back.
func (c claimed) token() string { return strconv.FormatInt(c.att, 10) }

// claim claims up to count jobs with lease ms.
func (q *queue) claim(lease, count int) []claimed {
	q.t.Helper()
	entries, err := q.exec(protocol.Claim, strconv.Itoa(lease), strconv.Itoa(count)).ToArray()
	require.NoError(q.t, err)
	out := make([]claimed, len(entries))
	for i, e := range entries {
		f, err := e.ToArray()
		require.NoError(q.t, err)
		require.Len(q.t, f, 3)
		out[i].id, err = f[0].ToString()
		require.NoError(q.t, err)
		out[i].data, _ = f[1].ToString()
		out[i].att, err = f[2].AsInt64()
		require.NoError(q.t, err)
	}
	return out
}

// claimOne claims exactly one job with a long lease.
func (q *queue) claimOne() claimed {
	q.t.Helper()
	c := q.claim(600000, 1)
	require.Len(q.t, c, 1)
	return c[0]
}

// active installs the queue, adds job j and claims it.
func (q *queue) active(j job) claimed {
	q.t.Helper()
	q.install()
	q.add(j)
	return q.claimOne()
}

// dead installs the queue, adds a one-attempt job and fails it to dead.
func (q *queue) dead(j job) string {
	q.t.Helper()
	j.attempts = "1"
	c := q.active(j)
	require.Equal(q.t, Bulk(protocol.FailDead), q.call(protocol.Fail, c.id, c.token(), "1", "boom"))
	return c.id
}

// expired claims one job with a 1 ms lease and waits until it has expired.
func (q *queue) expired() claimed {
	q.t.Helper()
	c := q.claim(1, 1)
	require.Len(q.t, c, 1)
	pause(leaseWait)
	return c[0]
}

// leaseWait outlasts a lease or delay of 1 ms on the server's clock.
const leaseWait = 3 * time.Millisecond

// pause sleeps; a scenario uses it to let a lease, delay or TTL pass.
func pause(d time.Duration) { time.Sleep(d) }

// within requires lo <= v <= hi.
func within(t *testing.T, v, lo, hi int64, what string) {
	t.Helper()
	require.True(t, v >= lo && v <= hi, "%s: %d not in [%d, %d]", what, v, lo, hi)
}

// stats is STATS's reply for the given sizes, pause flag and counters (in
// protocol.StatsCounters order; missing ones are "0"), without lanes or a
// rate.
func statsReply(pending, delayed, active, dead int64, paused bool, counters ...string) string {
	return statsReplyWith(pending, delayed, active, dead, paused, [6]int64{}, counters...)
}

// statsReplyWith is statsReply with the extra integers (protocol.StatsExtras:
// lanes, lane_waiting, rate_max, rate_window, waiting, retained).
func statsReplyWith(pending, delayed, active, dead int64, paused bool, extras [6]int64, counters ...string) string {
	out := []string{
		Bulk("pending"), Int(pending), Bulk("delayed"), Int(delayed),
		Bulk("active"), Int(active), Bulk("dead"), Int(dead), Bulk("paused"),
	}
	if paused {
		out = append(out, Int(1))
	} else {
		out = append(out, Int(0))
	}
	for i, name := range protocol.StatsCounters {
		v := "0"
		if i < len(counters) {
			v = counters[i]
		}
		out = append(out, Bulk("total_"+name), Bulk(v))
	}
	for i, name := range protocol.StatsExtras {
		out = append(out, Bulk(name), Int(extras[i]))
	}
	return Arr(out...)
}

// laneCol is the option columns of a call with lanes only.
var laneCol = []string{protocol.AddOptionLane}

// notices subscribes to the queue's cancels channel and returns its
// messages, once the server has confirmed the subscription (subscribe).
func (q *queue) notices() <-chan string {
	q.t.Helper()
	return q.subscribe(q.k.Cancels())
}

// subscribe subscribes to one of the queue's sharded channels and returns
// its messages, once the server has confirmed the subscription. The
// subscription has a connection of its own: the shared one carries the
// other scenarios' calls, and a CLAIM sent on a subscribed connection does
// not block (docs/PROTOCOL.md, "Blocking claims"). A channel
// is not in the dataset, so the snapshots do not see what a verb
// publishes: the scenarios read it here. Messages come in the order the
// server published them, so a message sent after calls that should publish
// nothing, arriving first, shows that they published nothing.
func (q *queue) subscribe(channel string) <-chan string {
	q.t.Helper()
	msgs := make(chan string, 64)
	subscribed := make(chan struct{})
	var once sync.Once
	ctx, cancel := context.WithCancel(context.Background())
	hooked := valkey.WithOnSubscriptionHook(ctx, func(s valkey.PubSubSubscription) {
		if s.Kind == "ssubscribe" {
			once.Do(func() { close(subscribed) })
		}
	})
	done := make(chan error, 1)
	sub := valkeytest.Client(q.t, q.env.Server)
	go func() {
		cmd := sub.B().Ssubscribe().Channel(channel).Build()
		done <- sub.Receive(hooked, cmd, func(m valkey.PubSubMessage) { msgs <- m.Message })
	}()
	q.t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-subscribed:
	case err := <-done:
		require.NoError(q.t, err, "SSUBSCRIBE")
		q.t.Fatal("the subscription ended before it was confirmed")
	}
	return msgs
}

// nextNotice is the next message of msgs, which must come.
func (q *queue) nextNotice(msgs <-chan string) string {
	q.t.Helper()
	select {
	case m := <-msgs:
		return m
	case <-time.After(10 * time.Second):
		q.t.Fatal("no notice was published")
		return ""
	}
}
