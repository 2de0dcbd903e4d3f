package trafikey

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// Schedule is a periodic job of a queue: every occurrence of a cron
// expression or of a fixed interval enqueues one job, built from Payload and
// Options, exactly once, whatever the number of workers. Workers run the
// schedule step on their timer (WorkerOptions.ScheduleEvery); the server's
// clock decides when an occurrence is due (docs/PROTOCOL.md, "Schedules").
type Schedule struct {
	// ID names the schedule in its queue: 1..128 bytes of letters, digits
	// and - _ . : / @.
	ID string
	// Cron is a cron expression of the standard five fields, minute first
	// ("*/5 * * * *" is every five minutes), or of six, seconds first
	// ("*/5 * * * * *" is every five seconds), or a descriptor such as
	// "@hourly"; set it or Every, not both.
	Cron string
	// TimeZone is the IANA zone Cron is read in (empty: UTC).
	TimeZone string
	// Every is a fixed interval (whole milliseconds): from Start when set,
	// else from the schedule's creation (or its last resume).
	Every time.Duration
	// Jitter delays each occurrence's job by a duration in [0, Jitter]
	// (at most a day), the same on every worker: derived from the ID and
	// the occurrence's time.
	Jitter time.Duration
	// Start and End bound the occurrences (zero: none).
	Start, End time.Time
	// Limit caps the occurrences taken in all (0: no cap); the schedule is
	// finished when it reaches it.
	Limit int
	// Grace and CatchUp say which late occurrences a step enqueues, after
	// all workers were down. An occurrence is on time when the step runs at
	// most Grace after it (0: a minute; at most a day), else missed: all
	// on-time occurrences are enqueued, and of the missed ones the latest
	// CatchUp (0..1000; 0 skips them all); the older ones are skipped.
	Grace   time.Duration
	CatchUp int
	// Payload is each job's payload.
	Payload []byte
	// Options are each job's options, as Add takes them, but no Delay:
	// Jitter spreads the occurrences instead. With a UniqueKey, a step adds
	// at most one job for the occurrences it takes, and none while the key
	// is held. A schedule read back (Schedules.List, Schedules.Get) has the
	// stored ones, so passing it to Schedules.Set keeps its job.
	Options JobOptions
}

// defaultGrace is how late an occurrence is still on time when a
// Schedule sets no Grace: a step runs twice a second by default, and a
// worker's pause or a server failover is not downtime.
const defaultGrace = time.Minute

// ScheduleInfo is a schedule as the queue holds it.
type ScheduleInfo struct {
	// Schedule is the definition, its job's Payload and Options as
	// stored. Passing it back to Schedules.Set keeps the job.
	Schedule
	// Revision counts the definition's changes (Schedules.Set, pause and
	// resume); a step computed from an older one is refused.
	Revision int
	// Count is the occurrences taken so far.
	Count int
	// Last is the time up to which occurrences are done.
	Last time.Time
	// Next is when the next occurrence is due; zero when paused or
	// finished (past End, or Limit reached).
	Next time.Time
	// Paused reports whether the schedule is paused.
	Paused bool
}

// cronParser reads the crontab's five fields (minute first) and six
// fields (seconds first): every crontab and most job queues write five,
// and six reach below a minute.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Set creates the schedule s, or replaces the one with its ID (an
// update: the occurrences already taken stay taken, the next ones follow
// the new definition, and a paused schedule stays paused). It returns the
// schedule's new revision. The definition is checked before any I/O.
func (sc Schedules) Set(ctx context.Context, s Schedule) (int, error) {
	q := sc.q
	args, err := s.args("set schedule")
	if err != nil {
		return 0, err
	}
	rev, err := q.callInt(ctx, protocol.ScheduleSet, args...)
	return int(rev), err
}

func checkScheduleID(op, id string) error {
	if !protocol.ValidBusName([]byte(id)) {
		return invalid(op, "schedule id %s: want 1..%d bytes of letters, digits and - _ . : / @", echo(id), protocol.MaxScheduleID)
	}
	return nil
}

// args validates s and builds SCHEDULE.SET's arguments.
func (s *Schedule) args(op string) ([]string, error) {
	if err := checkScheduleID(op, s.ID); err != nil {
		return nil, err
	}
	kind, spec, tz := protocol.ScheduleCron, s.Cron, s.TimeZone
	switch {
	case s.Cron != "" && s.Every != 0:
		return nil, invalid(op, "schedule %s sets both Cron and Every", s.ID)
	case s.Cron != "":
		if _, _, err := parseCron(s.Cron, s.TimeZone); err != nil {
			return nil, invalid(op, "schedule %s: %v", s.ID, err)
		}
	case s.Every != 0:
		ms := ceilMS(s.Every)
		if s.Every < 0 || ms > protocol.MaxScheduleEvery {
			return nil, invalid(op, "schedule %s: interval %v outside 1ms..%dms", s.ID, s.Every, int64(protocol.MaxScheduleEvery))
		}
		if s.TimeZone != "" {
			return nil, invalid(op, "schedule %s: a time zone is for Cron only", s.ID)
		}
		kind, spec = protocol.ScheduleEvery, protocol.FormatInt(ms)
	default:
		return nil, invalid(op, "schedule %s sets neither Cron nor Every", s.ID)
	}
	jitter := ceilMS(s.Jitter)
	if s.Jitter < 0 || jitter > protocol.MaxScheduleJitter {
		return nil, invalid(op, "schedule %s: jitter %v outside 0..24h", s.ID, s.Jitter)
	}
	start, err := scheduleTime(op, "start", s.Start)
	if err != nil {
		return nil, err
	}
	end, err := scheduleTime(op, "end", s.End)
	if err != nil {
		return nil, err
	}
	if end > 0 && end < start {
		return nil, invalid(op, "schedule %s ends before it starts", s.ID)
	}
	if s.Limit < 0 || s.Limit > protocol.MaxScheduleLimit {
		return nil, invalid(op, "schedule %s: limit %d outside 0..%d", s.ID, s.Limit, int64(protocol.MaxScheduleLimit))
	}
	grace := s.Grace
	if grace == 0 {
		grace = defaultGrace
	}
	if grace < 0 || ceilMS(grace) > protocol.MaxScheduleGrace {
		return nil, invalid(op, "schedule %s: grace %v outside 1ms..24h", s.ID, grace)
	}
	if s.CatchUp < 0 || s.CatchUp > protocol.MaxScheduleCatch {
		return nil, invalid(op, "schedule %s: catch-up %d outside 0..%d", s.ID, s.CatchUp, protocol.MaxScheduleCatch)
	}
	tpl, err := templateArgs(op, s.Payload, &s.Options)
	if err != nil {
		return nil, err
	}
	out := []string{s.ID, kind, spec, tz, protocol.FormatInt(jitter), protocol.FormatInt(start), protocol.FormatInt(end),
		protocol.FormatInt(int64(s.Limit)), protocol.FormatInt(ceilMS(grace)), protocol.FormatInt(int64(s.CatchUp))}
	return append(out, tpl...), nil
}

func scheduleTime(op, name string, t time.Time) (int64, error) {
	if t.IsZero() {
		return 0, nil
	}
	ms := t.UnixMilli()
	if ms < 1 || ms > protocol.MaxScheduleTime {
		return 0, invalid(op, "%s %v outside the years 1970..9999", name, t)
	}
	return ms, nil
}

// templateArgs is a job template's part of SCHEDULE.SET: data priority
// attempts backoff backoff_ms unique_key unique_ttl k, then the option
// columns the options set (every ADD column but a flow's and due), name
// and value.
func templateArgs(op string, payload []byte, opts *JobOptions) ([]string, error) {
	o := opts.resolve()
	if o.delay != 0 {
		return nil, invalid(op, "a schedule's job takes no Delay (Jitter spreads its occurrences)")
	}
	group, err := o.args(op, make([]string, 0, jobArgs), payload)
	if err != nil {
		return nil, err
	}
	// the group is ADD's: data priority delay attempts backoff backoff_ms
	// unique_key unique_ttl, then the columns
	out := append([]string{group[0], group[1]}, group[3:protocol.AddArgsPerJob]...)
	var cols []string
	for c, name := range addColumns {
		v := group[protocol.AddArgsPerJob+c]
		if v == "" || name == protocol.AddOptionParent || name == protocol.AddOptionOnFail || name == protocol.AddOptionDue {
			continue
		}
		cols = append(cols, name, v)
	}
	out = append(out, strconv.Itoa(len(cols)/2))
	return append(out, cols...), nil
}

func parseCron(spec, tz string) (cron.Schedule, *time.Location, error) {
	if strings.HasPrefix(strings.TrimSpace(spec), "@every") {
		return nil, nil, errors.New("cron @every: use Every")
	}
	if strings.HasPrefix(strings.TrimSpace(spec), "TZ=") || strings.HasPrefix(strings.TrimSpace(spec), "CRON_TZ=") {
		return nil, nil, errors.New("cron time zone prefix: use TimeZone")
	}
	if len(spec) > protocol.MaxCronSpec {
		return nil, nil, fmt.Errorf("cron expression of %d bytes, at most %d", len(spec), protocol.MaxCronSpec)
	}
	if len(tz) > protocol.MaxTimeZone {
		return nil, nil, fmt.Errorf("time zone of %d bytes, at most %d", len(tz), protocol.MaxTimeZone)
	}
	sched, err := cronParser.Parse(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("cron %q: %w", spec, err)
	}
	loc := time.UTC
	if tz != "" {
		if loc, err = time.LoadLocation(tz); err != nil {
			return nil, nil, fmt.Errorf("time zone %q: %w", tz, err)
		}
	}
	return sched, loc, nil
}

// Pause stops schedule id: no occurrence is enqueued until
// ResumeSchedule, and those in between are skipped. Pausing a paused or
// absent schedule is a no-op.
func (sc Schedules) Pause(ctx context.Context, id string) error {
	q := sc.q
	if err := checkScheduleID("pause schedule", id); err != nil {
		return err
	}
	_, err := q.callInt(ctx, protocol.SchedulePause, id)
	return err
}

// Resume starts a paused schedule again from the server's time.
// Resuming a schedule that is not paused, or absent, is a no-op.
func (sc Schedules) Resume(ctx context.Context, id string) error {
	q := sc.q
	if err := checkScheduleID("resume schedule", id); err != nil {
		return err
	}
	_, err := q.callInt(ctx, protocol.ScheduleResume, id)
	return err
}

// Remove deletes schedule id; the jobs it enqueued stay. An absent
// schedule is ErrNotFound.
func (sc Schedules) Remove(ctx context.Context, id string) error {
	q := sc.q
	if err := checkScheduleID("remove schedule", id); err != nil {
		return err
	}
	n, err := q.callInt(ctx, protocol.ScheduleRemove, id)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("trafikey: remove schedule %s: %w", id, ErrNotFound)
	}
	return nil
}

// schedulesPage is how many schedules one SCHEDULE.LIST call reads.
const schedulesPage = 100

// List lists the queue's schedules in byte order of their ids, a page
// at a time as the loop goes on. The first error ends the sequence.
func (sc Schedules) List(ctx context.Context) iter.Seq2[ScheduleInfo, error] {
	q := sc.q
	return func(yield func(ScheduleInfo, error) bool) {
		after := ""
		for {
			msg, err := q.call(ctx, protocol.ScheduleList, after, strconv.Itoa(schedulesPage))
			var rows []scheduleRow
			if err == nil {
				rows, err = scheduleRows(msg.ToArray())
			}
			if err != nil {
				yield(ScheduleInfo{}, err)
				return
			}
			for _, r := range rows {
				info, err := r.info()
				if err != nil {
					err = fmt.Errorf("trafikey: schedules: %w", err)
				}
				if !yield(info, err) {
					return
				}
			}
			if len(rows) < schedulesPage {
				return
			}
			after = rows[len(rows)-1].id
		}
	}
}

// Get reads schedule id (ErrNotFound when absent). It pages through
// the schedules: for one schedule, not a loop over many.
func (sc Schedules) Get(ctx context.Context, id string) (ScheduleInfo, error) {
	q := sc.q
	if err := checkScheduleID("get schedule", id); err != nil {
		return ScheduleInfo{}, err
	}
	for s, err := range q.Schedules().List(ctx) {
		if err != nil {
			return ScheduleInfo{}, err
		}
		if s.ID == id {
			return s, nil
		}
	}
	return ScheduleInfo{}, fmt.Errorf("trafikey: get schedule %s: %w", id, ErrNotFound)
}

// scheduleRow is one [id, definition, state] of SCHEDULE.LIST or DUE.
type scheduleRow struct {
	id, def, state string
	ok             bool // both fields present
}

func scheduleRows(elems []valkey.ValkeyMessage, err error) ([]scheduleRow, error) {
	if err != nil {
		return nil, fmt.Errorf("trafikey: schedules: unexpected reply: %w", err)
	}
	out := make([]scheduleRow, 0, len(elems))
	for _, e := range elems {
		f, err := e.ToArray()
		if err != nil || len(f) != 3 {
			return nil, fmt.Errorf("trafikey: schedules: unexpected reply %v", e)
		}
		var r scheduleRow
		if r.id, err = f[0].ToString(); err != nil {
			return nil, fmt.Errorf("trafikey: schedules: unexpected reply %v", e)
		}
		d, derr := f[1].ToString()
		s, serr := f[2].ToString()
		r.def, r.state, r.ok = d, s, derr == nil && serr == nil
		out = append(out, r)
	}
	return out, nil
}

// schedState is a schedule's state field.
type schedState struct {
	rev, count, last, next int64
	paused                 bool
}

// parseState reads a state field as the server does: each part a row
// number, anything else 0.
func parseState(v string) schedState {
	parts := strings.Split(v, " ")
	n := make([]int64, 5)
	for i := 0; i < len(parts) && i < 5; i++ {
		x, err := strconv.ParseInt(parts[i], 10, 64)
		if err == nil && x >= 0 && protocol.FormatInt(x) == parts[i] && len(parts[i]) <= protocol.MaxDecimalSize {
			n[i] = x
		}
	}
	return schedState{rev: n[0], count: n[1], last: n[2], next: n[3], paused: n[4] == 1}
}

// schedDef is a decoded definition with what the step needs to compute its
// occurrences.
type schedDef struct {
	kind, spec, tz                   string
	jitter, start, end, limit, grace int64
	catchup                          int
	every                            int64
	cron                             cron.Schedule
	loc                              *time.Location
	payload                          []byte
	opts                             JobOptions
}

// parseDef decodes a stored definition.
func parseDef(v string) (*schedDef, error) {
	e, ok := protocol.DecodeList(v)
	if !ok || len(e) < protocol.ScheduleDefFixed {
		return nil, errors.New("definition does not decode")
	}
	num := func(i int) int64 {
		n, err := strconv.ParseInt(e[i], 10, 64)
		if err != nil || n < 0 {
			ok = false
		}
		return n
	}
	d := &schedDef{kind: e[0], spec: e[1], tz: e[2], jitter: num(3), start: num(4), end: num(5), limit: num(6),
		grace: num(7), catchup: int(num(8))}
	d.payload = []byte(e[9])
	d.opts = JobOptions{Priority: int(num(10)), MaxAttempts: int(num(11)),
		Backoff: BackoffKind(e[12]), BackoffBase: time.Duration(num(13)) * time.Millisecond, UniqueKey: e[14],
		UniqueTTL: time.Duration(num(15)) * time.Millisecond}
	k := int(num(16))
	if !ok || len(e) != protocol.ScheduleDefFixed+2*k {
		return nil, errors.New("definition does not decode")
	}
	for j := range k {
		if err := d.opts.setColumn(e[protocol.ScheduleDefFixed+2*j], e[protocol.ScheduleDefFixed+2*j+1]); err != nil {
			return nil, err
		}
	}
	switch d.kind {
	case protocol.ScheduleCron:
		var err error
		if d.cron, d.loc, err = parseCron(d.spec, d.tz); err != nil {
			return nil, err
		}
	case protocol.ScheduleEvery:
		d.every = num(1)
		if !ok || d.every < 1 {
			return nil, fmt.Errorf("interval %q", d.spec)
		}
	default:
		return nil, fmt.Errorf("kind %q", d.kind)
	}
	return d, nil
}

// setColumn reads one of ADD's option columns of a stored job into o: a
// stored schedule's job reads back as the JobOptions that store it again.
func (o *JobOptions) setColumn(name, v string) error {
	ms := func() (time.Duration, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("column %s %q is not whole milliseconds", name, v)
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	var err error
	switch name {
	case protocol.AddOptionLane:
		o.Lane = v
	case protocol.AddOptionWait:
		o.KeepOutcome, err = ms()
	case protocol.AddOptionTimeout:
		o.Timeout, err = ms()
	case protocol.AddOptionKind:
		o.Kind = v
	case protocol.AddOptionHeaders:
		o.Headers = decodeHeaders(v)
	default:
		err = fmt.Errorf("column %q of a stored job", name)
	}
	return err
}

func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func (r scheduleRow) info() (ScheduleInfo, error) {
	info := ScheduleInfo{Schedule: Schedule{ID: r.id}}
	if !r.ok {
		return info, fmt.Errorf("schedule %s has no definition or state", r.id)
	}
	d, err := parseDef(r.def)
	if err != nil {
		return info, fmt.Errorf("schedule %s: %w", r.id, err)
	}
	st := parseState(r.state)
	s := &info.Schedule
	if d.kind == protocol.ScheduleCron {
		s.Cron, s.TimeZone = d.spec, d.tz
	} else {
		s.Every = time.Duration(d.every) * time.Millisecond
	}
	s.Jitter = time.Duration(d.jitter) * time.Millisecond
	s.Start, s.End, s.Limit = msTime(d.start), msTime(d.end), int(d.limit)
	s.Grace, s.CatchUp = time.Duration(d.grace)*time.Millisecond, d.catchup
	s.Payload, s.Options = d.payload, d.opts
	info.Revision, info.Count, info.Paused = int(st.rev), int(st.count), st.paused
	info.Last, info.Next = msTime(st.last), msTime(st.next)
	return info, nil
}

// after is the first occurrence of d strictly after t (anchor: the grid
// origin of an interval without start), or 0 when there is none.
func (d *schedDef) after(t, anchor int64) int64 {
	var n int64
	switch d.kind {
	case protocol.ScheduleEvery:
		origin := anchor
		if d.start > 0 {
			origin = d.start
		}
		if t < origin {
			n = origin
			if d.start == 0 {
				n = origin + d.every
			}
		} else {
			n = origin + ((t-origin)/d.every+1)*d.every
		}
	default:
		if d.start > 0 && t < d.start-1 {
			t = d.start - 1
		}
		next := d.cron.Next(time.UnixMilli(t).In(d.loc))
		if next.IsZero() {
			return 0
		}
		n = next.UnixMilli()
	}
	if (d.end > 0 && n > d.end) || n > protocol.MaxScheduleTime {
		return 0
	}
	return n
}

// occurrence is one FIRE pair: a scheduled time and its jitter.
type occurrence struct{ at, jitter int64 }

// firePlan is one SCHEDULE.FIRE: the occurrences to enqueue, the new last
// fired time and the next due time.
type firePlan struct {
	occ        []occurrence
	upto, next int64
}

// jitterOf is occurrence t's jitter: FNV-1a-64 of "<id>:<t>" modulo
// jitter + 1, so every worker computes the same.
func jitterOf(id string, t, jitter int64) int64 {
	if jitter == 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(id + ":" + protocol.FormatInt(t)))
	return int64(h.Sum64() % uint64(jitter+1))
}

// plan computes the step of schedule id from state st at server time now:
// the due occurrences in (last, now], those missed beyond the policy
// skipped, at most MaxScheduleFire of them (the earliest), within the cap.
func (d *schedDef) plan(id string, st schedState, now int64) firePlan {
	p := firePlan{upto: st.last}
	bound := int64(protocol.MaxScheduleFire)
	if d.limit > 0 {
		remaining := d.limit - st.count
		if remaining <= 0 {
			return p // finished: next 0
		}
		bound = min(bound, remaining)
	}
	cutoff := now - d.grace // before it, an occurrence is missed
	var late, onTime []int64
	t := d.after(st.last, st.last)
	for t != 0 && t <= now {
		if t < cutoff {
			if d.catchup > 0 {
				if len(late) == d.catchup {
					late = late[1:]
				}
				late = append(late, t)
			}
			p.upto = t
			next := d.after(t, st.last)
			// an interval far behind: jump to its last catchup + 1 missed
			// occurrences instead of walking every one
			if d.kind == protocol.ScheduleEvery && next != 0 && next < cutoff {
				if skip := (cutoff-next)/d.every - int64(d.catchup) - 1; skip > 0 {
					next += skip * d.every
				}
			}
			t = next
			continue
		}
		if int64(len(late)+len(onTime)) >= bound {
			break // the rest is due at once: the next call takes it
		}
		onTime = append(onTime, t)
		p.upto = t
		t = d.after(t, st.last)
	}
	fired := append(late, onTime...)
	p.next = t
	if int64(len(fired)) >= bound && d.limit > 0 && bound == d.limit-st.count {
		fired = fired[:bound]
		p.upto, p.next = fired[len(fired)-1], 0 // the cap is reached
	}
	for _, at := range fired {
		p.occ = append(p.occ, occurrence{at: at, jitter: jitterOf(id, at, d.jitter)})
	}
	return p
}

// fireArgs is SCHEDULE.FIRE's ARGV for plan p of schedule id from st.
func (p firePlan) args(id string, st schedState) []string {
	out := make([]string, 0, 6+2*len(p.occ))
	out = append(out, id, protocol.FormatInt(st.rev), protocol.FormatInt(st.last), protocol.FormatInt(p.upto),
		protocol.FormatInt(p.next), strconv.Itoa(len(p.occ)))
	for _, o := range p.occ {
		out = append(out, protocol.FormatInt(o.at), protocol.FormatInt(o.jitter))
	}
	return out
}

// scheduleStepLimit is how many due schedules one SCHEDULE.DUE reads, and
// scheduleRounds how many DUE calls one RunSchedules makes at most.
const (
	scheduleStepLimit = 100
	scheduleRounds    = 10
)

// runSchedules is the schedule step: it reads the schedules due by the
// server's clock and enqueues each one's occurrences, exactly once even
// when other workers run it at the same time (one of them wins each
// occurrence; the others are refused and write nothing). It returns the
// jobs it added. The first error of a schedule is returned after the others
// were run.
func (q *Queue) runSchedules(ctx context.Context) (int, error) {
	added := 0
	var first error
	for range scheduleRounds {
		msg, err := q.call(ctx, protocol.ScheduleDue, strconv.Itoa(scheduleStepLimit))
		if err != nil {
			return added, err
		}
		elems, err := msg.ToArray()
		if err != nil || len(elems) == 0 {
			return added, fmt.Errorf("trafikey: schedule step: unexpected reply %v", msg)
		}
		now, err := elems[0].AsInt64()
		if err != nil {
			return added, fmt.Errorf("trafikey: schedule step: unexpected reply %v", msg)
		}
		rows, err := scheduleRows(elems[1:], nil)
		if err != nil {
			return added, err
		}
		progressed := false
		for _, r := range rows {
			n, err := q.fire(ctx, r, now)
			added += n
			switch {
			case err == nil:
				progressed = true
			case isClass(err, classStale):
				// another worker fired it first, or it changed meanwhile
				progressed = true
			case first == nil:
				first = err
			}
		}
		if len(rows) < scheduleStepLimit || !progressed {
			break
		}
	}
	return added, first
}

// fire runs one schedule's FIRE from its row as DUE read it at now.
func (q *Queue) fire(ctx context.Context, r scheduleRow, now int64) (int, error) {
	if !r.ok {
		return 0, fmt.Errorf("trafikey: schedule %s has no definition or state", r.id)
	}
	d, err := parseDef(r.def)
	if err != nil {
		return 0, fmt.Errorf("trafikey: schedule %s: %w", r.id, err)
	}
	st := parseState(r.state)
	plan := d.plan(r.id, st, now)
	msg, err := q.call(ctx, protocol.ScheduleFire, plan.args(r.id, st)...)
	if err != nil {
		return 0, err
	}
	ids, err := msg.AsStrSlice()
	if err != nil {
		return 0, fmt.Errorf("trafikey: schedule.fire: unexpected reply: %w", err)
	}
	q.observer.jobsAddedOfKind(q.name, d.opts.Kind, len(ids))
	return len(ids), nil
}
