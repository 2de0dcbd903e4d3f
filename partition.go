package trafikey

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/groupcommit"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/slots"
)

// A partitioned queue keeps its jobs in several hash slots, each an
// ordinary queue underneath (its partition), so that on Valkey Cluster it
// uses the primaries those slots are on. Every verb still runs in one
// partition; the handle routes each call (docs/PARTITIONS.md).

// maxPartitions bounds a queue's partitions.
const maxPartitions = 256

// The fields of the partitions hash emq:{q}:partitions: the tag of each
// partition by its index, and how many partitions (the first ones) keyed
// jobs are routed over.
const (
	fieldKeyed = "keyed"
)

// partitions is what the handle of a partitioned queue holds: the handle of
// each partition, in index order.
type partitions struct {
	// cur holds the partitions' handles; growing the queue (refresh)
	// replaces it with a longer slice, whose first handles are the same.
	cur atomic.Pointer[[]*Queue]
	// of, name, client and cfg build the handles of partitions added
	// later; mu makes one refresh at a time.
	of     *Queue
	name   string
	client valkey.Client
	cfg    QueueOptions
	mu     sync.Mutex
	// keyed is how many partitions, the first ones, jobs with a unique key
	// or a lane are routed over: the count the queue was created with,
	// which growing it does not change, so that a key or a lane always
	// lands in the partition it landed in before.
	keyed int
	// next starts spread's search for the partition of the next jobs
	// without a key or a lane; sent counts, by partition, the jobs it sent
	// to each, guarded by smu.
	next atomic.Uint32
	smu  sync.Mutex
	sent []int64
	// marks pass over a partition that refused adds without running them.
	marks partitionMarks
	// claimTurn is the partition Claim tries first next, in turn.
	claimTurn atomic.Uint32
	// refreshed is when spread last started reading the partitions again
	// (unix ns; the handle's opening at first).
	refreshed atomic.Int64
}

func newPartitions(of *Queue, tags []string, keyed int, cfg *QueueOptions) *partitions {
	p := &partitions{of: of, name: of.name, client: of.client, cfg: *cfg, keyed: keyed}
	list := p.handles(nil, tags)
	p.cur.Store(&list)
	p.next.Store(rand.Uint32())
	p.claimTurn.Store(rand.Uint32())
	p.refreshed.Store(time.Now().UnixNano())
	return p
}

// refreshSoon reads the partitions again, in the background, when the last
// read started partitionRefreshEvery ago: a producer's handle then spreads
// its jobs over the partitions another client added since, as a worker
// claims from them. A failed read is tried again a period later.
func (p *partitions) refreshSoon() {
	readSoon(&p.refreshed, p.cfg.refreshEvery(), p.refresh)
}

// readSoon runs read in the background, with every as its deadline, when
// the last read, started at *last (unix ns), began every ago; it claims the
// period with a compare-and-swap so that concurrent callers start one.
func readSoon(last *atomic.Int64, every time.Duration, read func(context.Context) error) {
	now := time.Now().UnixNano()
	at := last.Load()
	if now-at < int64(every) || !last.CompareAndSwap(at, now) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), every)
		defer cancel()
		_ = read(ctx)
	}()
}

// partitionsSoon reads, in the background, whether the queue of a handle
// opened unpartitioned has been partitioned since (another client grew it),
// when the last read started partitionRefreshEvery ago. From the read that
// finds partitions on, the handle is the partitioned queue's: its calls
// run on the partitions, as those of a handle opened after the growth do.
// Every verb call of the handle runs it; it costs the call a clock read.
func (q *Queue) partitionsSoon() {
	if q.opened == nil || q.client == nil || q.parts.Load() != nil {
		return
	}
	readSoon(&q.partsRead, q.opened.refreshEvery(), q.partitionedNow)
}

// partitionedNow reads the partitions of the queue of a handle opened
// unpartitioned, and when there are several now, makes the handle the
// partitioned queue's (its partitions installed, as Open does). Partition
// 0 is the queue's own keys, so the jobs the handle added, claimed or
// holds stay where they are.
func (q *Queue) partitionedNow(ctx context.Context) error {
	// a handle without a client (its verbs run by a test's runner) has
	// no partitions hash to read
	if q.opened == nil || q.client == nil || q.parts.Load() != nil {
		return nil
	}
	q.partsRead.Store(time.Now().UnixNano()) // the calls' reads wait a period
	tags, keyed, err := readPartitions(ctx, q.client, partitionsKey(q.name))
	if err != nil || len(tags) < 2 {
		return err
	}
	p := newPartitions(q, tags, keyed, q.opened)
	if !q.opened.NoInstall {
		for _, h := range p.list() {
			if _, err := h.call(ctx, protocol.Install); err != nil {
				return err
			}
		}
	}
	q.parts.CompareAndSwap(nil, p)
	return nil
}

// refreshEvery is how often a handle reads its queue's partitions again.
func (o *QueueOptions) refreshEvery() time.Duration {
	if o.partsEvery > 0 {
		return o.partsEvery
	}
	return partitionRefreshEvery
}

// handles appends to list the handles of the partitions of tags after
// those list has.
func (p *partitions) handles(list []*Queue, tags []string) []*Queue {
	for i := len(list); i < len(tags); i++ {
		h := newHandle(p.client, p.name, tags[i], &p.cfg)
		if i > 0 {
			h.idSuffix = "~" + strconv.Itoa(i)
		}
		h.of = p.of
		list = append(list, h)
	}
	return list
}

// list is the partitions' handles now.
func (p *partitions) list() []*Queue { return *p.cur.Load() }

// spread is the partition of the next job without a key or a lane.
//
// It is the partition this handle sent fewest such jobs to (the first
// after the last one chosen, in a tie), so that batches of every size fill
// the partitions evenly; a partition added since starts level with the
// fewest.
func (p *partitions) spread(n int) *Queue {
	p.refreshSoon()
	list := p.list()
	p.smu.Lock()
	defer p.smu.Unlock()
	if len(p.sent) < len(list) {
		low := int64(0)
		if len(p.sent) > 0 {
			low = slices.Min(p.sent)
		}
		for len(p.sent) < len(list) {
			p.sent = append(p.sent, low)
		}
	}
	start := int(p.next.Add(1) % uint32(len(list)))
	best := start
	for k := 1; k < len(list); k++ {
		if i := (start + k) % len(list); p.sent[i] < p.sent[best] {
			best = i
		}
	}
	p.sent[best] += int64(n)
	return list[best]
}

// moved counts n jobs spread chose from to as sent to to.
func (p *partitions) moved(from, to *Queue, n int) {
	list := p.list()
	i, j := slices.Index(list, from), slices.Index(list, to)
	p.smu.Lock()
	defer p.smu.Unlock()
	if i >= 0 && j >= 0 && i < len(p.sent) && j < len(p.sent) {
		p.sent[i] -= int64(n)
		p.sent[j] += int64(n)
	}
}

// keyedPartition is the partition of a job with unique key or lane s.
func (p *partitions) keyedPartition(s string) *Queue {
	h := fnv.New32a()
	h.Write([]byte(s))
	return p.list()[int(h.Sum32()%uint32(p.keyed))]
}

// route is the partition of a job with options o.
func (p *partitions) route(o *JobOptions) *Queue {
	switch {
	case o == nil:
	case o.Lane != "":
		// a lane is kept whole; a key with it is held in its partition
		return p.keyedPartition(o.Lane)
	case o.UniqueKey != "":
		return p.keyedPartition(o.UniqueKey)
	}
	return p.spread(1)
}

// sendAdds sends a coalesced batch of Adds to one partition, in turn: the
// batch stays one call. A partition that refuses it without running it (its
// slot is failing over, or its node cannot be reached) hands it on to the
// next, and is passed over for a while: one shard's trouble fails none of
// these adds while another takes them.
func (p *partitions) sendAdds(batch []*pendingAdd) {
	jobs, ctx, cancel := addsOf(batch)
	defer cancel()
	var ids []string
	err := p.handOn(ctx, p.spread(len(batch)), len(batch), true, func(part *Queue, call verbCall) (bool, error) {
		var err error
		ids, err = part.addJobs(ctx, jobs, len(batch), call)
		return notSent(err), err
	})
	deliverAdds(batch, ids, err)
}

// sendRouted sends a coalesced batch of the queue's handle: its jobs in a
// lane to their lane's partition, in a call per partition, and the others
// as sendAdds sends them. Only a handle that saw the queue partitioned
// after the jobs were taken has lane jobs in a batch; those of a handle
// partitioned already are routed when added.
func (p *partitions) sendRouted(batch []*pendingAdd) {
	plain := make([]*pendingAdd, 0, len(batch))
	var lanes map[*Queue][]*pendingAdd
	for _, a := range batch {
		if a.lane == "" {
			plain = append(plain, a)
			continue
		}
		if lanes == nil {
			lanes = map[*Queue][]*pendingAdd{}
		}
		h := p.keyedPartition(a.lane)
		lanes[h] = append(lanes[h], a)
	}
	if len(plain) > 0 {
		p.sendAdds(plain)
	}
	for h, b := range lanes {
		h.sendAdds(b)
	}
}

// verbCall runs a verb on a handle: its call, or its callOnce.
type verbCall = func(context.Context, *protocol.Verb, ...string) (valkey.ValkeyMessage, error)

// handOn runs send, n jobs without a key or a lane, on partition first or,
// while a partition refuses it without running it (send's first result),
// on the next one in turn, passing over those refusing lately (and first
// too when skipFirst), and returns send's last error. Each try but the
// last calls through callOnce, so that a refusal comes back at once; the
// last calls through call, which tries again while the server does not run
// it. The jobs are counted as sent to the partition that took them.
func (p *partitions) handOn(ctx context.Context, first *Queue, n int, skipFirst bool, send func(part *Queue, call verbCall) (refused bool, err error)) error {
	list := p.list()
	at := slices.Index(list, first)
	for k := range list {
		part := list[(at+k)%len(list)]
		last := k == len(list)-1
		if (k > 0 || skipFirst) && !last && p.marks.skip(part) {
			continue
		}
		call := part.callOnce
		if last {
			call = part.call
		}
		refused, err := send(part, call)
		if !last && refused && ctx.Err() == nil {
			p.marks.failed(part)
			continue
		}
		if err == nil {
			p.marks.served(part)
		}
		if part != first {
			p.moved(first, part, n)
		}
		return err
	}
	return nil
}

// notSent reports whether err is a call that surely wrote nothing: refused
// by the server without running it (a passing state, a redirect, writes
// paused), or never sent, its connection not made.
func notSent(err error) bool {
	var op *net.OpError
	return errors.Is(err, errNotRun) || errors.Is(err, errRedirected) || errors.Is(err, ErrWritePaused) ||
		(errors.As(err, &op) && op.Op == "dial")
}

// handles are the handles whose verbs make up q: its partitions', or q
// itself.
func (q *Queue) handles() []*Queue {
	if p := q.parts.Load(); p != nil {
		return p.list()
	}
	return []*Queue{q}
}

// logical is the handle of q's queue: q itself, or the partitioned queue's
// handle when q is one of its partitions.
func (q *Queue) logical() *Queue {
	if q.of != nil {
		return q.of
	}
	return q
}

// outID is the id of the job the server knows as raw, as callers see it:
// with the partition's suffix.
func (q *Queue) outID(raw string) string {
	if q.idSuffix == "" {
		return raw
	}
	return raw + q.idSuffix
}

// outIDs turns ids as outID does, in place, and returns them.
func (q *Queue) outIDs(ids []string) []string {
	if q.idSuffix != "" {
		for i := range ids {
			ids[i] += q.idSuffix
		}
	}
	return ids
}

// rawID checks id, a job id of this handle's partition (or queue), and
// returns the id the server knows it by.
func (q *Queue) rawID(op, id string) (string, error) {
	raw, ok := strings.CutSuffix(id, q.idSuffix)
	if !ok || !protocol.ValidJobID(raw) {
		return "", invalid(op, "job id %s is not a job id of this queue", echo(id))
	}
	return raw, nil
}

// partOf is the handle of the partition job id is in: q itself on an
// unpartitioned queue.
func (q *Queue) partOf(op, id string) (*Queue, error) {
	if q.parts.Load() == nil {
		return q, nil
	}
	list := q.parts.Load().list()
	i, _, ok := partitionSuffix(id, len(list))
	if !ok {
		return nil, invalid(op, "job id %s names no partition of queue %s", echo(id), echo(q.name))
	}
	return list[i], nil
}

// partitionSuffix splits s, a job id or an event's position, into the
// partition its suffix names ("~<index>", 1..n-1; none is partition 0) and
// what comes before it; ok is false for a suffix that names no partition.
func partitionSuffix(s string, n int) (index int, rest string, ok bool) {
	k := strings.LastIndexByte(s, '~')
	if k < 0 {
		return 0, s, true
	}
	i, err := strconv.Atoi(s[k+1:])
	if err != nil || i < 1 || i >= n || s[k+1:] != strconv.Itoa(i) {
		return 0, "", false
	}
	return i, s[:k], true
}

// partitionsKey is the hash of queue name's partitions.
func partitionsKey(name string) string { return protocol.Base(name) + protocol.SuffixPartitions }

// loadPartitions reads the tags of queue name's partitions and the count
// keyed jobs use, creating or growing them to want first when want is
// above the stored count. It returns no tags for a queue never
// partitioned (and want at most 1).
func loadPartitions(ctx context.Context, client valkey.Client, name string, want int, readOnly bool) (tags []string, keyed int, err error) {
	key := partitionsKey(name)
	for {
		tags, keyed, err = readPartitions(ctx, client, key)
		if err != nil {
			return nil, 0, err
		}
		n := max(len(tags), 1)
		switch {
		case want == 0 || want == n:
			return tags, keyed, nil
		case want < n:
			return nil, 0, invalid("open", "queue %s has %d partitions, more than %d: a queue's partitions are never taken away", echo(name), n, want)
		case readOnly:
			return nil, 0, invalid("open", "queue %s has %d partitions: growing it to %d writes, which NoInstall does not", echo(name), n, want)
		}
		if err := growPartitions(ctx, client, name, tags, want); err != nil {
			return nil, 0, err
		}
	}
}

// readPartitions reads the partitions hash.
func readPartitions(ctx context.Context, client valkey.Client, key string) (tags []string, keyed int, err error) {
	m, err := client.Do(ctx, client.B().Hgetall().Key(key).Build()).AsStrMap()
	if err != nil {
		return nil, 0, callError(ctx, client, "partitions", err)
	}
	if len(m) == 0 {
		return nil, 0, nil
	}
	bad := fmt.Errorf("trafikey: open: %s holds no valid partitions", key)
	keyed, err = strconv.Atoi(m[fieldKeyed])
	if err != nil || keyed < 1 || len(m)-1 < keyed || len(m)-1 > maxPartitions {
		return nil, 0, bad
	}
	tags = make([]string, len(m)-1)
	for i := range tags {
		t, ok := m[strconv.Itoa(i)]
		if !ok || !protocol.ValidQueueName(t) {
			return nil, 0, bad
		}
		tags[i] = t
	}
	return tags, keyed, nil
}

// callError is err, from a call made outside the verbs, as a call returns
// it: a reply error as an *Error, anything else a transport error (so that
// Open tries again) or a closed client's.
func callError(ctx context.Context, client valkey.Client, op string, err error) error {
	if ve, ok := valkey.IsValkeyErr(err); ok {
		return serverError(&protocol.Verb{Name: op}, ve.Error(), ve)
	}
	if ctx.Err() != nil {
		return err
	}
	if closedClient(ctx, client, err) {
		return closedError(err)
	}
	return &transportError{err: fmt.Errorf("trafikey: %s: %w", op, err)}
}

// errRaced is a growth that another client's beat: read again.
var errRaced = errors.New("partitions changed meanwhile")

// growPartitions writes the tags of partitions len(tags)..want-1 in one
// transaction that watches the hash, so that of clients growing a queue
// at once one wins and the others read what it wrote. A queue never
// partitioned becomes partition 0 of itself: its jobs stay where they are,
// and when it holds any (its wire stamp is there) keyed jobs keep going to
// it alone, so that no unique key already held is accepted again elsewhere.
func growPartitions(ctx context.Context, client valkey.Client, name string, tags []string, want int) error {
	key := partitionsKey(name)
	place, err := placement(ctx, client)
	if err != nil {
		return err
	}
	err = client.Dedicated(func(c valkey.DedicatedClient) error {
		version := protocol.KeysOf(name).Version
		res := c.DoMulti(ctx,
			c.B().Watch().Key(key).Build(),
			c.B().Hlen().Key(key).Build(),
			c.B().Exists().Key(version).Build())
		for _, r := range res {
			if err := r.Error(); err != nil {
				return err
			}
		}
		if n, _ := res[1].AsInt64(); n != int64(len(tags)+min(len(tags), 1)) {
			c.Do(ctx, c.B().Unwatch().Build())
			return errRaced
		}
		fields := c.B().Hset().Key(key).FieldValue()
		all := tags
		if len(all) == 0 {
			all = []string{name}
			keyed := want
			if n, _ := res[2].AsInt64(); n > 0 {
				keyed = 1
			}
			fields = fields.FieldValue(fieldKeyed, strconv.Itoa(keyed)).FieldValue("0", name)
		}
		for i := len(all); i < want; i++ {
			t := place.tag(name, i, all)
			all = append(all, t)
			fields = fields.FieldValue(strconv.Itoa(i), t)
		}
		res = c.DoMulti(ctx, c.B().Multi().Build(), fields.Build(), c.B().Exec().Build())
		for _, r := range res {
			if err := r.Error(); err != nil {
				if valkey.IsValkeyNil(err) {
					return errRaced
				}
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errRaced) {
		return nil
	}
	if err != nil {
		return callError(ctx, client, "partitions", err)
	}
	return nil
}

// slotOwners is which primary serves each hash slot, as an index into the
// primaries in slot order; nil outside a cluster.
type slotOwners struct {
	owner     []int // by slot; -1: none
	primaries int
}

// placement reads the cluster's slots, to place new partitions on its
// primaries in turn.
func placement(ctx context.Context, client valkey.Client) (*slotOwners, error) {
	if client.Mode() != valkey.ClientModeCluster {
		return &slotOwners{}, nil
	}
	owner, err := slots.Primaries(ctx, client)
	if err != nil {
		return nil, callError(ctx, client, "cluster slots", err)
	}
	// the primaries numbered in slot order
	o := &slotOwners{owner: make([]int, slots.Count)}
	index := map[string]int{}
	for slot, addr := range owner {
		o.owner[slot] = -1
		if addr == "" {
			continue
		}
		i, ok := index[addr]
		if !ok {
			i = len(index)
			index[addr] = i
		}
		o.owner[slot] = i
	}
	o.primaries = len(index)
	return o, nil
}

// tag picks the hash tag of partition i of queue name, given the tags of
// the partitions before it: name~i, or name~i~k for the first k that puts
// it in a slot of no earlier partition, on the primary whose turn it is
// (the primaries in turn from partition 0's, in slot order).
func (o *slotOwners) tag(name string, i int, before []string) string {
	used := map[uint16]bool{}
	for _, t := range before {
		used[hashSlot(t)] = true
	}
	want := -1
	if o.primaries > 0 {
		if first := o.owner[hashSlot(before[0])]; first >= 0 {
			want = (first + i) % o.primaries
		}
	}
	fallback := ""
	for k := 0; k < 1<<16; k++ {
		t := name + "~" + strconv.Itoa(i)
		if k > 0 {
			t += "~" + strconv.Itoa(k)
		}
		if !protocol.ValidQueueName(t) {
			break
		}
		slot := hashSlot(t)
		if used[slot] {
			continue
		}
		if want < 0 || o.owner[slot] == want {
			return t
		}
		if fallback == "" {
			fallback = t
		}
	}
	if fallback == "" {
		// a name too long for a suffix: the partition shares a slot
		fallback = name
	}
	return fallback
}

// eachPart runs f on every partition at once and returns the first error,
// or an error joining them.
func (q *Queue) eachPart(f func(i int, p *Queue) error) error {
	list := q.handles()
	if len(list) == 1 {
		return f(0, list[0])
	}
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, p := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i, p)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// expandParts lists, in a worker's queues, each partitioned queue's
// partitions in its place, with weights that keep each queue's share: the
// weights are scaled by the least common multiple of the partition counts
// (capped), and a queue's weight split evenly among its partitions.
func expandParts(queues []QueueWeight) []QueueWeight {
	// one read of each queue's partitions: a growth meanwhile waits for
	// the next refresh
	lists := make([][]*Queue, len(queues))
	scale := 1
	for i, qw := range queues {
		if p := qw.Queue.parts.Load(); p != nil {
			lists[i] = p.list()
			n := len(lists[i])
			if l := scale / gcd(scale, n) * n; l <= 1<<16 {
				scale = l
			}
		}
	}
	if scale == 1 {
		return queues
	}
	out := make([]QueueWeight, 0, len(queues))
	for i, qw := range queues {
		list := lists[i]
		if list == nil {
			out = append(out, QueueWeight{qw.Queue, qw.Weight * scale})
			continue
		}
		for _, p := range list {
			out = append(out, QueueWeight{p, max(1, qw.Weight*scale/len(list))})
		}
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Marks a worker keeps on partitions, so that its claims do not pay a round
// trip per empty partition per job: a partition found empty is passed over
// for partitionEmptyHold, or until a signal wakes the worker; one whose
// claim failed, for partitionFailedHold, doubling to partitionFailedMax
// while it keeps failing.
const (
	partitionEmptyHold  = 100 * time.Millisecond
	partitionFailedHold = 100 * time.Millisecond
	partitionFailedMax  = 5 * time.Second
)

// partitionMarks holds, per partition, until when claims pass it over.
type partitionMarks struct {
	mu    sync.Mutex
	until map[*Queue]time.Time
	// backoff is the hold of each failing partition's last failure.
	backoff map[*Queue]time.Duration
	// quiet counts the idle waits since the last sweep.
	quiet int
	// held marks the partitions with a claim in flight that the worker
	// stopped waiting for (claimPartition).
	held map[*Queue]bool
	// jobs counts the jobs claimed of each partition, for fewest.
	jobs map[*Queue]int64
	// promote and trim space out each partition's PROMOTE and TRIM calls.
	promote, trim cadence
}

// partitionSlowdown bounds how much less often than its period a worker
// promotes or trims a partition whose calls move nothing: every
// partition's PROMOTE every PromoteEvery is what an idle worker over many
// partitions would spend most of its calls on.
const partitionSlowdown = 4

// cadence spaces out a periodic call per partition: a partition whose call
// moved nothing is called half as often, down to one tick in
// partitionSlowdown; one whose call moved jobs, every tick. Its owner's
// lock guards it.
type cadence struct {
	at  map[*Queue]time.Time
	gap map[*Queue]time.Duration
}

// due reports whether q's call is due at now.
func (m *partitionMarks) due(c *cadence, q *Queue, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !now.Before(c.at[q])
}

// called is told what q's call, made at the tick at now of period every,
// moved.
func (m *partitionMarks) called(c *cadence, q *Queue, moved int, now time.Time, every time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.at == nil {
		c.at, c.gap = map[*Queue]time.Time{}, map[*Queue]time.Duration{}
	}
	gap := every
	if moved == 0 {
		gap = min(max(2*c.gap[q], every), partitionSlowdown*every)
	}
	c.gap[q] = gap
	// half a period early, so that a tick's jitter does not skip it
	c.at[q] = now.Add(gap - every/2)
}

// delayed is told that partition q has a job to promote later (a failure
// the worker reported will be retried): its PROMOTE goes back to every
// tick.
func (m *partitionMarks) delayed(q *Queue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.promote.at, q)
	delete(m.promote.gap, q)
}

func (m *partitionMarks) skip(q *Queue) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held[q] || time.Now().Before(m.until[q])
}

func (m *partitionMarks) empty(q *Queue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.until == nil {
		m.until = map[*Queue]time.Time{}
	}
	m.until[q] = time.Now().Add(partitionEmptyHold)
	delete(m.backoff, q)
}

func (m *partitionMarks) failed(q *Queue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.until == nil {
		m.until = map[*Queue]time.Time{}
	}
	if m.backoff == nil {
		m.backoff = map[*Queue]time.Duration{}
	}
	hold := min(max(2*m.backoff[q], partitionFailedHold), partitionFailedMax)
	m.backoff[q] = hold
	m.until[q] = time.Now().Add(hold)
}

// partitionSweepEvery is how many idle waits go by between two claims on
// every empty partition. A partition's announcement (readied) is what
// wakes an idle worker and has that partition tried again; the sweep finds
// a job whose announcement the worker missed: published while its
// subscription was being made again, or by a caller that may not publish.
const partitionSweepEvery = 5

// readied is told that partition q announced a signal-push: it has jobs
// now, and is tried again (unless it is failing) while the other empty
// partitions stay passed over, so an announcement costs each idle worker
// a claim on q rather than one on every partition.
func (m *partitionMarks) readied(q *Queue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.backoff[q] == 0 {
		delete(m.until, q)
	}
}

// woken is told that an idle wait ended, by a signal or after wait: the
// partitions found empty are passed over through the next wait too (those
// announced since were readied), but for one wait in partitionSweepEvery,
// which tries them all.
func (m *partitionMarks) woken(wait time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.quiet++
	sweep := m.quiet >= partitionSweepEvery
	if sweep {
		m.quiet = 0
	}
	hold := time.Now().Add(wait)
	for q := range m.until {
		switch {
		case m.backoff[q] != 0:
		case sweep:
			delete(m.until, q)
		default:
			m.until[q] = hold
		}
	}
}

// served forgets a partition's failures: its claim went through.
func (m *partitionMarks) served(q *Queue) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.backoff, q)
}

// refresh reads the queue's partitions again and adds the handles of
// those another client added since (growing the queue), installed.
func (p *partitions) refresh(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	tags, _, err := readPartitions(ctx, p.client, partitionsKey(p.name))
	if err != nil {
		return err
	}
	cur := p.list()
	if len(tags) <= len(cur) {
		return nil
	}
	list := p.handles(slices.Clone(cur), tags)
	if !p.cfg.NoInstall {
		for _, h := range list[len(cur):] {
			if _, err := h.call(ctx, protocol.Install); err != nil {
				return err
			}
		}
	}
	p.cur.Store(&list)
	return nil
}

// queueSet is what a worker claims from: its queues with partitioned
// queues' partitions in their place (expandParts), their signal lists
// grouped for the idle wait, and a completer per queue or partition, which
// reports the jobs whose handlers returned nil, many per COMPLETEMANY call.
type queueSet struct {
	queues      []QueueWeight
	totalWeight int
	signals     []signalGroup
	completers  map[*Queue]*groupcommit.Queue[*completion]
}

// newQueueSet builds the worker's queue set from its queues' partitions
// now, keeping the completers of prev's.
func (w *Worker) newQueueSet(prev *queueSet) *queueSet {
	queues := expandParts(w.given)
	set := &queueSet{queues: queues, signals: signalGroups(queues), completers: map[*Queue]*groupcommit.Queue[*completion]{}}
	for _, qw := range queues {
		c := (*groupcommit.Queue[*completion])(nil)
		if prev != nil {
			c = prev.completers[qw.Queue]
		}
		if c == nil {
			c = newCompleter(qw.Queue)
		}
		set.completers[qw.Queue] = c
		set.totalWeight += qw.Weight
	}
	if prev != nil {
		for q, c := range prev.completers {
			if _, ok := set.completers[q]; !ok {
				// a handle partitioned since: the jobs it claimed still
				// complete through it
				set.completers[q] = c
			}
		}
	}
	return set
}

// refreshParts looks for partitions added to the worker's partitioned
// queues by another client, and for its unpartitioned queues partitioned
// since, and claims from them, subscribed to their cancel notices and
// signal channels, from then on. A handle's partitions
// may have grown without this worker (its adds read them too): the
// worker's set is compared with the handles' partitions, not with what
// this read found.
func (w *Worker) refreshParts(ctx context.Context, subscribe func(q *Queue)) {
	prev := w.set.Load()
	grown := false
	for _, qw := range w.given {
		var err error
		if p := qw.Queue.parts.Load(); p != nil {
			err = p.refresh(ctx)
		} else {
			err = qw.Queue.partitionedNow(ctx)
		}
		if err != nil && ctx.Err() == nil {
			w.log.warn("trafikey: read the queue's partitions", "err", err)
		}
		p := qw.Queue.parts.Load()
		if p == nil {
			continue
		}
		for _, h := range p.list() {
			if _, ok := prev.completers[h]; !ok {
				grown = true
			}
		}
	}
	if !grown {
		return
	}
	set := w.newQueueSet(prev)
	w.set.Store(set)
	for _, qw := range set.queues {
		if _, ok := prev.completers[qw.Queue]; !ok {
			subscribe(qw.Queue)
		}
	}
	w.log.l.Info("trafikey: the queue grew; claiming from its new partitions", "partitions", len(set.queues))
}

// partitionRefreshEvery is how often a worker, and a handle that adds or
// calls, reads its queue's partitions again: to claim from or add to those
// another client added, and to see a queue partitioned since it opened.
const partitionRefreshEvery = 5 * time.Second

// refreshEvery is how often the worker reads its queues' partitions again:
// the shortest period of its queues' handles.
func (w *Worker) refreshEvery() time.Duration {
	if w.opts.refreshEvery > 0 {
		return w.opts.refreshEvery
	}
	every := partitionRefreshEvery
	for _, qw := range w.given {
		if o := qw.Queue.opened; o != nil {
			every = min(every, o.refreshEvery())
		}
	}
	return every
}

// claimHeld is how long a worker waits for a partition's CLAIM before it
// goes on without it: a shard whose calls the server holds (CLIENT PAUSE
// WRITE during a failover) or that stopped answering would otherwise hold
// every claim loop, and the other partitions would wait with it.
const claimHeld = 500 * time.Millisecond

// errClaimHeld is a claim on a partition that did not answer within
// claimHeld: it goes on in the background with the slots it was given.
var errClaimHeld = errors.New("trafikey: claim held")

// claimPartition claims up to n jobs of partition q. When q answers within
// claimHeld it returns what the claim returned; else it frees the n slots
// it was given, so the other partitions' claims take them, and returns
// errClaimHeld, and the claim goes on: when it answers, each of its jobs
// takes a slot as one frees up and starts, and until then the partition is
// passed over. A claim is never abandoned: one the server ran late would
// leave its jobs to lease recovery, and one slow only because its jobs are
// large would never get them.
func (w *Worker) claimPartition(q *Queue, n int, cs *claimState, start func(*Job)) ([]*Job, error) {
	type claimed struct {
		jobs []*Job
		err  error
	}
	done := make(chan claimed, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		jobs, err := q.Claim(ctx, w.opts.Lease, n)
		done <- claimed{jobs, err}
	}()
	timer := time.NewTimer(claimHeld)
	select {
	case r := <-done:
		timer.Stop()
		return r.jobs, r.err
	case <-timer.C:
	}
	w.parts.hold(q, true)
	for range n {
		cs.release()
	}
	cs.held.Add(1)
	go func() {
		defer cs.held.Done()
		r := <-done
		w.parts.hold(q, false)
		if _, limited := rateLimited(r.err); r.err != nil && !limited && !isClosed(r.err) {
			w.parts.failed(q)
			w.log.error("trafikey: claim", "err", r.err)
		} else if r.err == nil {
			w.parts.served(q)
		}
		for _, j := range r.jobs {
			cs.slots <- struct{}{}
			start(j)
		}
	}()
	return nil, errClaimHeld
}

// hold marks partition q as having a claim in flight that a worker stopped
// waiting for (on), or not: claims pass it over meanwhile.
func (m *partitionMarks) hold(q *Queue, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held == nil {
		m.held = map[*Queue]bool{}
	}
	if on {
		m.held[q] = true
	} else {
		delete(m.held, q)
	}
}

// fewest is the index in queues of the partition, not passed over, whose
// jobs this worker claimed fewest of (the first in a tie after a random
// start); 0 when every one is passed over. A partition new to the worker
// (the queue grew) starts level with the fewest, so it does not take every
// claim until it caught up.
func (m *partitionMarks) fewest(queues []QueueWeight) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jobs == nil {
		m.jobs = map[*Queue]int64{}
	}
	low := int64(-1)
	for _, qw := range queues {
		if n, ok := m.jobs[qw.Queue]; ok && (low < 0 || n < low) {
			low = n
		}
	}
	now := time.Now()
	best, bestN := 0, int64(-1)
	start := rand.IntN(len(queues))
	for k := range queues {
		i := (start + k) % len(queues)
		q := queues[i].Queue
		n, ok := m.jobs[q]
		if !ok {
			n = max(low, 0)
			m.jobs[q] = n
		}
		if m.held[q] || now.Before(m.until[q]) {
			continue
		}
		if bestN < 0 || n < bestN {
			best, bestN = i, n
		}
	}
	return best
}

// claimed counts n jobs claimed of partition q.
func (m *partitionMarks) claimed(q *Queue, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.jobs == nil {
		m.jobs = map[*Queue]int64{}
	}
	m.jobs[q] += int64(n)
}

// reportHeld is how long a handler's goroutine waits for the report of a
// partition's job before it leaves the report to finish in the background:
// a shard whose calls the server holds would otherwise keep every handler
// slot whose job it had, and a worker whose slots all held such jobs would
// stop serving every other partition.
const reportHeld = 500 * time.Millisecond

// reportInBackground reports a partition's job whose handler returned
// handlerErr. When the report takes longer than reportHeld, the job's slot
// is freed and the handler's goroutine goes back to the pool, and the
// report goes on: it stays in hand (the heartbeat renews its lease) until
// the report ends, and is marked done in finished then. It reports whether it left
// the report so.
func (w *Worker) reportInBackground(j *Job, r *runningJob, handlerErr error, abandoned *atomic.Bool, began time.Time, finished *sync.WaitGroup) bool {
	type reported struct {
		outcome Outcome
		err     error
	}
	ch := make(chan reported, 1)
	go func() {
		o, err := w.report(j, r, handlerErr, abandoned)
		ch <- reported{o, err}
	}()
	timer := time.NewTimer(reportHeld)
	select {
	case rep := <-ch:
		timer.Stop()
		w.reportedJob(j, r, began, handlerErr, rep.outcome, rep.err)
		finished.Done()
		return false
	case <-timer.C:
	}
	r.release() // the completion's own release is then a no-op (slotOnce)
	go func() {
		rep := <-ch
		w.reportedJob(j, r, began, handlerErr, rep.outcome, rep.err)
		finished.Done()
	}()
	return true
}

// slotOnce frees a handler slot once, whoever asks first: the worker for
// a report left in the background, or the completion that answered it.
type slotOnce struct {
	freed   atomic.Bool
	release func()
}

func (s *slotOnce) free() {
	if s.freed.CompareAndSwap(false, true) {
		s.release()
	}
}
