package trafikey

import (
	"cmp"
	"context"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
)

// This file holds the calls of a partitioned queue's handle that are not
// a route to one partition: those that span them.

// addBatchParts is AddBatch on a partitioned queue: the jobs with a unique
// key or a lane go to theirs, the others together to one partition in
// turn; one AddBatch per partition touched, in the order each is first
// touched. Every job is checked before the first call.
func (q *Queue) addBatchParts(ctx context.Context, jobs []JobSpec) ([]string, error) {
	for i := range jobs {
		j := &jobs[i]
		op := "add job " + strconv.Itoa(i)
		if len(j.Children) > 0 || j.OnFail != "" {
			return nil, invalid(op, "children and a child policy are for AddFlow")
		}
		o := j.Options.resolve()
		if _, err := o.args(op, nil, j.Payload); err != nil {
			return nil, err
		}
	}
	var order []*Queue
	members := map[*Queue][]int{}
	var spread *Queue
	plain := 0
	for i := range jobs {
		if o := &jobs[i].Options; o.UniqueKey == "" && o.Lane == "" {
			plain++
		}
	}
	for i := range jobs {
		o := &jobs[i].Options
		var p *Queue
		if o.UniqueKey != "" || o.Lane != "" {
			p = q.parts.Load().route(o)
		} else {
			if spread == nil {
				spread = q.parts.Load().spread(plain)
			}
			p = spread
		}
		if _, ok := members[p]; !ok {
			order = append(order, p)
		}
		members[p] = append(members[p], i)
	}
	ids := make([]string, len(jobs))
	for _, p := range order {
		idx := members[p]
		sub := make([]JobSpec, len(idx))
		for k, i := range idx {
			sub[k] = jobs[i]
		}
		var got []string
		var err error
		if p == spread {
			got, err = q.parts.Load().addAnywhere(ctx, p, sub)
		} else {
			got, err = p.addBatch(ctx, sub, p.call)
		}
		for k, id := range got {
			ids[idx[k]] = id
		}
		if err != nil {
			return ids, err
		}
	}
	return ids, nil
}

// claimParts is Claim on a partitioned queue: from a partition drawn at
// random, or when it has nothing from the next that has, in turn. A
// partition over its rate limit, or whose claim failed (its primary failing
// over), is passed over; when none had jobs, the error is the limit of the
// limited one whose window ends first, or else the first failure.
func (q *Queue) claimParts(ctx context.Context, lease time.Duration, count int) ([]*Job, error) {
	list := q.parts.Load().list()
	first := int(q.parts.Load().claimTurn.Add(1) % uint32(len(list)))
	var limited, failed error
	var limitedWait time.Duration
	for k := range list {
		jobs, err := list[(first+k)%len(list)].Claim(ctx, lease, count)
		if wait, ok := rateLimited(err); ok {
			if limited == nil || wait < limitedWait {
				limited, limitedWait = err, wait
			}
			continue
		}
		if err != nil && !isClosed(err) && ctx.Err() == nil {
			if failed == nil {
				failed = err
			}
			continue
		}
		if err != nil || len(jobs) > 0 {
			return jobs, err
		}
	}
	if limited != nil {
		return nil, limited
	}
	return nil, failed
}

// completeManyParts is CompleteMany on a partitioned queue: one
// CompleteMany per partition the jobs were claimed from.
func (q *Queue) completeManyParts(ctx context.Context, jobs []*Job) ([]error, error) {
	errs := make([]error, len(jobs))
	members := map[*Queue][]int{}
	var order []*Queue
	for i, j := range jobs {
		switch {
		case j == nil:
			errs[i] = invalid("completemany", "job %d is nil", i)
		case j.q.of != q && j.q != q:
			// (a job of q itself was claimed before q was partitioned)
			errs[i] = invalid("completemany", "job %s was claimed from another queue handle", j.ID)
		default:
			if _, ok := members[j.q]; !ok {
				order = append(order, j.q)
			}
			members[j.q] = append(members[j.q], i)
		}
	}
	var first error
	for _, p := range order {
		idx := members[p]
		sub := make([]*Job, len(idx))
		for k, i := range idx {
			sub[k] = jobs[i]
		}
		got, err := p.completeOwn(ctx, sub)
		for k, e := range got {
			errs[idx[k]] = e
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return errs, first
}

// statsParts is Stats on a partitioned queue: the partitions' counts and
// counters summed, each partition's in Partitions.
func (q *Queue) statsParts(ctx context.Context) (Stats, error) {
	list := q.parts.Load().list()
	per := make([]Stats, len(list))
	err := q.eachPart(func(i int, p *Queue) error {
		s, err := p.Stats(ctx)
		s.Partition = p.keys.Base[len(protocol.KeyPrefix)+1 : len(p.keys.Base)-2]
		per[i] = s
		return err
	})
	if err != nil {
		return Stats{}, err
	}
	sum := Stats{Paused: true, RateWindow: per[0].RateWindow, Partitions: per}
	for _, s := range per {
		sum.Pending += s.Pending
		sum.Delayed += s.Delayed
		sum.Active += s.Active
		sum.Dead += s.Dead
		sum.Paused = sum.Paused && s.Paused
		sum.Lanes += s.Lanes
		sum.LaneWaiting += s.LaneWaiting
		sum.RateLimit += s.RateLimit
		sum.Waiting += s.Waiting
		sum.Retained += s.Retained
		sum.TotalAdded += s.TotalAdded
		sum.TotalCompleted += s.TotalCompleted
		sum.TotalFailed += s.TotalFailed
		sum.TotalRetried += s.TotalRetried
		sum.TotalDead += s.TotalDead
		sum.TotalRecovered += s.TotalRecovered
		sum.TotalRemoved += s.TotalRemoved
		sum.TotalRequeued += s.TotalRequeued
		sum.TotalTrimmed += s.TotalTrimmed
		sum.TotalCancelled += s.TotalCancelled
	}
	return sum, nil
}

// setRateParts splits a rate limit over the partitions: each gets
// limit/N claims per window, the first limit%N one more, so that together
// they never claim more than limit per window.
func (q *Queue) setRateParts(ctx context.Context, limit int, window time.Duration) error {
	n := len(q.parts.Load().list())
	if limit > 0 && limit < n {
		return invalid("set rate", "limit %d is below the queue's %d partitions: each needs at least one claim per window", limit, n)
	}
	return q.eachPart(func(i int, p *Queue) error {
		share := 0
		if limit != 0 {
			share = limit / n
			if i < limit%n {
				share++
			}
		}
		return p.Admin().SetRate(ctx, share, window)
	})
}

// maintainParts is Admin.Maintain over every partition, the counts summed.
func (q *Queue) maintainParts(ctx context.Context, limit int) (Maintenance, error) {
	var mu sync.Mutex
	var sum Maintenance
	err := q.eachPart(func(_ int, p *Queue) error {
		m, err := p.Admin().Maintain(ctx, limit)
		mu.Lock()
		defer mu.Unlock()
		sum.Promoted += m.Promoted
		sum.Recovered += m.Recovered
		sum.Expired += m.Expired
		sum.TrimmedCompleted += m.TrimmedCompleted
		sum.TrimmedDead += m.TrimmedDead
		sum.Scheduled += m.Scheduled
		return err
	})
	return sum, err
}

// sumParts runs f on every partition in turn, the counts summed, and a
// progress callback told the sum so far.
func (q *Queue) sumParts(progress func(BulkProgress), f func(p *Queue, progress func(BulkProgress)) (int, error)) (int, error) {
	total := 0
	for _, p := range q.parts.Load().list() {
		base := total
		var inner func(BulkProgress)
		if progress != nil {
			inner = func(b BulkProgress) {
				b.Done += base
				progress(b)
			}
		}
		n, err := f(p, inner)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// lanesParts lists the lanes of every partition in name order, each once:
// a lane lives in its partition (Queue.Lane), but a flow's child in that
// lane lives in its flow's, so a name found in several partitions is one
// lane, its counts summed and its cap and pause its own partition's.
func (q *Queue) lanesParts(ctx context.Context) iter.Seq2[LaneInfo, error] {
	return func(yield func(LaneInfo, error) bool) {
		lanes := map[string]*LaneInfo{}
		for _, p := range q.parts.Load().list() {
			for l, err := range p.Lanes(ctx) {
				if err != nil {
					yield(LaneInfo{}, err)
					return
				}
				at, ok := lanes[l.Name]
				if !ok {
					at = &LaneInfo{Name: l.Name}
					lanes[l.Name] = at
				}
				at.Waiting += l.Waiting
				at.Active += l.Active
				if p == q.parts.Load().keyedPartition(l.Name) {
					at.Cap, at.Paused = l.Cap, l.Paused
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(lanes)) {
			if !yield(*lanes[name], nil) {
				return
			}
		}
	}
}

// jobsParts is Jobs on a partitioned queue: each partition's page read at
// once and merged in listing order, by score, then partition, then id. The
// cursor is the last row's, "<score>:<id>" with the id's partition suffix:
// a partition before it resumes after its score, its own after it, a
// partition after it at its score.
func (q *Queue) jobsParts(ctx context.Context, state JobState, opts JobsOptions) (JobsPage, error) {
	if _, err := opts.args("jobs", state); err != nil {
		return JobsPage{}, err
	}
	limit := opts.Limit
	if limit == 0 {
		limit = defaultJobsLimit
	}
	list := q.parts.Load().list()
	// the cursor's partition and its score and raw id
	at, score, rawAt := -1, "", ""
	if opts.After != "" {
		s, member, err := parseCursor("jobs", opts.After)
		if err != nil {
			return JobsPage{}, err
		}
		p, err := q.partOf("jobs", member)
		if err != nil {
			return JobsPage{}, err
		}
		raw, err := p.rawID("jobs", member)
		if err != nil {
			return JobsPage{}, err
		}
		at, score, rawAt = slices.Index(list, p), s, raw
	}
	pages := make([]JobsPage, len(list))
	err := q.eachPart(func(i int, p *Queue) error {
		o := opts
		// Members are decimal ids: "~" sorts after each of them, "" before.
		switch {
		case at < 0:
		case i < at:
			// the partition's rows at the cursor's score came before it
			o.After = score + ":~"
		case i == at:
			o.After = score + ":" + rawAt
		default:
			// and those of a partition after it come after it
			o.After = score + ":"
		}
		page, err := p.Jobs(ctx, state, o)
		pages[i] = page
		return err
	})
	if err != nil {
		return JobsPage{}, err
	}
	type row struct {
		score int64
		part  int
		r     JobRow
	}
	var rows []row
	var out JobsPage
	more := false
	for i, page := range pages {
		out.Total += page.Total
		more = more || page.Next != ""
		for _, r := range page.Rows {
			r.ID = list[i].outID(r.ID)
			rows = append(rows, row{r.Score, i, r})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		c := cmp.Or(cmp.Compare(a.score, b.score), cmp.Compare(a.part, b.part))
		if opts.Newest {
			return -c
		}
		return c
	})
	if len(rows) > limit {
		rows, more = rows[:limit], true
	}
	for _, r := range rows {
		out.Rows = append(out.Rows, r.r)
	}
	if more && len(rows) > 0 {
		last := rows[len(rows)-1]
		out.Next = protocol.FormatInt(last.r.Score) + ":" + last.r.ID
	}
	return out, nil
}

// eventsParts is Events on a partitioned queue: every partition's stream
// read at once, its events yielded as they come. Events of one partition
// (so of one job, and of one flow) come in their order; those of
// different partitions in no set order. An event's ID ends with its
// partition's suffix ("~<index>", none for partition 0). Resuming from it,
// its partition resumes after it and every other partition from the
// millisecond before its entry's, so an event of another partition around
// that time may be yielded again: events across partitions are delivered at
// least once.
func (q *Queue) eventsParts(ctx context.Context, from string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		list := q.parts.Load().list()
		froms := make([]string, len(list))
		for i := range froms {
			froms[i] = from
		}
		if from != "" && from != "$" && from != "0" {
			at, pos, ok := partitionSuffix(from, len(list))
			if !ok {
				yield(Event{}, invalid("events", "position %q names no partition of queue %s", echo(from), echo(q.name)))
				return
			}
			ms, _, _ := strings.Cut(pos, "-")
			ms, _, _ = strings.Cut(ms, ".")
			n, err := strconv.ParseUint(ms, 10, 64)
			if err != nil {
				yield(Event{}, invalid("events", "position %q is not a stream id or an event's ID", echo(from)))
				return
			}
			for i := range froms {
				froms[i] = strconv.FormatUint(max(n, 1)-1, 10)
			}
			froms[at] = pos
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type item struct {
			ev  Event
			err error
		}
		items := make(chan item, 64)
		for i, p := range list {
			go func() {
				for ev, err := range p.Events(ctx, froms[i]) {
					ev.ID += p.idSuffix
					if ev.JobID != "" {
						ev.JobID = p.outID(ev.JobID)
					}
					select {
					case items <- item{ev, err}:
					case <-ctx.Done():
						return
					}
					if err != nil {
						return
					}
				}
			}()
		}
		for {
			select {
			case it := <-items:
				if !yield(it.ev, it.err) || it.err != nil {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}
}

// addAnywhere adds jobs without a key or a lane to partition first, or,
// when it refuses their first call without running it, to the next
// partition that takes it, as coalesced adds do (partitions.sendAdds).
func (p *partitions) addAnywhere(ctx context.Context, first *Queue, jobs []JobSpec) ([]string, error) {
	var got []string
	err := p.handOn(ctx, first, len(jobs), false, func(part *Queue, call verbCall) (bool, error) {
		var err error
		got, err = part.addBatch(ctx, jobs, call)
		return len(got) == 0 && notSent(err), err
	})
	return got, err
}
