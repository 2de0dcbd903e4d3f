package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// AddJob is one job of an ADD, its values checked.
type AddJob struct {
	// Arg is the index in ARGV of the job's first argument (its data); its
	// others follow in ADD's order.
	Arg int
	// Priority and Delay are the job's values; the others are written as
	// the caller spelled them, which the checks proved canonical.
	Priority, Delay int64
	// Unique is the job's unique key, empty for none.
	Unique []byte
	// Lane is the job's lane, nil for none.
	Lane []byte
	// Parent is the index in the call of the job's parent, -1 for none;
	// Kids the number of its own children (a parent waits for them).
	Parent, Kids int
	// OnFail is the policy stored (nil: fail, or no parent); Wait the wait
	// stored (nil: none).
	OnFail, Wait []byte
	// Due is the due column's value (0: none); the handler folds it into
	// Delay once the clock is read (AddDue). Kind, Timeout and Headers are
	// the row fields stored (nil: none).
	Due                    int64
	Kind, Timeout, Headers []byte
	depth                  int
}

// IsParent reports whether the job is named as a parent in its call.
func (j AddJob) IsParent() bool { return j.Kids > 0 }

// The offsets of a job's arguments after its data, in ADD's order.
const (
	AddData = iota
	AddPriority
	AddDelay
	AddAttempts
	AddBackoff
	AddBackoffMS
	AddUnique
	AddUniqueTTL
)

// AddColumns are the indexes among ADD's options of its known columns, -1
// for a column the call does not name.
type AddColumns struct {
	Lane, Parent, OnFail, Wait  int
	Due, Timeout, Kind, Headers int
}

// noColumns is AddColumns of a call that names none.
var noColumns = AddColumns{-1, -1, -1, -1, -1, -1, -1, -1}

// AddOptions checks ADD's option names (ARGV[3 … 2+k]): each a known option
// (lane, parent, onfail, wait, due, timeout, kind, headers), named once,
// else "bad option". It returns the columns' indexes among the options.
func AddOptions(names [][]byte) (AddColumns, error) { return AddOptionsOf(protocol.Add.Name, names) }

// AddOptionsOf is AddOptions for a verb that adds jobs as ADD does (a
// schedule's template): its refusal names verb.
func AddOptionsOf(verb string, names [][]byte) (AddColumns, error) {
	cols := noColumns
	for i, name := range names {
		var col *int
		switch string(name) {
		case protocol.AddOptionLane:
			col = &cols.Lane
		case protocol.AddOptionParent:
			col = &cols.Parent
		case protocol.AddOptionOnFail:
			col = &cols.OnFail
		case protocol.AddOptionWait:
			col = &cols.Wait
		case protocol.AddOptionDue:
			col = &cols.Due
		case protocol.AddOptionTimeout:
			col = &cols.Timeout
		case protocol.AddOptionKind:
			col = &cols.Kind
		case protocol.AddOptionHeaders:
			col = &cols.Headers
		}
		if col == nil || *col >= 0 {
			return noColumns, refusal(protocol.ErrBadArg(verb, "option"))
		}
		*col = i
	}
	return cols, nil
}

// AddValues checks the values of ADD's n jobs of k option columns (args is
// ARGV, whose count the shape already checked; lane is the lane column,
// AddOptions), job by job and in ADD's order, and appends them to jobs:
// "bad priority", "bad delay", "bad attempts", "bad backoff", "bad
// backoff_ms", "bad unique_key", "bad unique_ttl" (which must be at least 1
// when there is a unique key), then "bad lane" (0..128 bytes, empty for
// none), "bad parent", "bad onfail", "bad wait", then the job options:
// "bad due", "bad timeout", "bad kind", "bad headers". data is any bytes.
func AddValues(args [][]byte, n, k int, cols AddColumns, jobs []AddJob) ([]AddJob, error) {
	return AddValuesOf(protocol.Add.Name, args, n, k, cols, jobs)
}

// AddValuesOf is AddValues for a verb that adds jobs as ADD does (a
// schedule's template): its refusals name verb.
func AddValuesOf(verb string, args [][]byte, n, k int, cols AddColumns, jobs []AddJob) ([]AddJob, error) {
	first := len(jobs)
	per := protocol.AddArgsPerJob + k
	for i := range n {
		a := 2 + k + per*i
		j := args[a : a+per]
		job, err := addJobValues(verb, j, a)
		if err != nil {
			return jobs, err
		}
		if err := addJobFlow(verb, j, cols, jobs[first:], i, &job); err != nil {
			return jobs, err
		}
		if err := addJobOptions(verb, j, cols, &job); err != nil {
			return jobs, err
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// addJobValues checks a job's columns j, at a among the arguments: the
// priority, the delay, the attempts, the backoff and its ms, the unique key
// and its ttl, in this order.
func addJobValues(verb string, j [][]byte, a int) (AddJob, error) {
	bad := func(name string) error { return refusal(protocol.ErrBadArg(verb, name)) }
	prio, ok := grammar.Decimal(j[AddPriority], 0, protocol.MaxPriority)
	if !ok {
		return AddJob{}, bad("priority")
	}
	delay, ok := grammar.Decimal(j[AddDelay], 0, protocol.MaxDelayMS)
	if !ok {
		return AddJob{}, bad("delay")
	}
	if _, ok := grammar.Decimal(j[AddAttempts], 1, protocol.MaxAttempts); !ok {
		return AddJob{}, bad("attempts")
	}
	if b := string(j[AddBackoff]); b != protocol.BackoffFixed && b != protocol.BackoffExponential {
		return AddJob{}, bad("backoff")
	}
	if _, ok := grammar.Decimal(j[AddBackoffMS], 0, protocol.MaxBackoffMS); !ok {
		return AddJob{}, bad("backoff_ms")
	}
	if len(j[AddUnique]) > protocol.MaxUniqueKey {
		return AddJob{}, bad("unique_key")
	}
	if ttl, ok := grammar.Decimal(j[AddUniqueTTL], 0, protocol.MaxDelayMS); !ok || (ttl == 0 && len(j[AddUnique]) > 0) {
		return AddJob{}, bad("unique_ttl")
	}
	return AddJob{Arg: a, Priority: prio, Delay: delay, Unique: j[AddUnique], Parent: -1, depth: 1}, nil
}

// addJobFlow checks job i's option columns j of lane, parent (an earlier
// job of the call's, in earlier), onfail and wait, in this order.
func addJobFlow(verb string, j [][]byte, cols AddColumns, earlier []AddJob, i int, job *AddJob) error {
	bad := func(name string) error { return refusal(protocol.ErrBadArg(verb, name)) }
	if cols.Lane >= 0 {
		l := j[protocol.AddArgsPerJob+cols.Lane]
		if len(l) > protocol.MaxLaneName {
			return bad("lane")
		}
		if len(l) > 0 {
			job.Lane = l
		}
	}
	if cols.Parent >= 0 {
		if p := j[protocol.AddArgsPerJob+cols.Parent]; len(p) > 0 {
			x, ok := grammar.Decimal(p, 1, int64(i))
			if !ok {
				return bad("parent")
			}
			pj := &earlier[int(x)-1]
			if pj.Delay > 0 || pj.Due > 0 || pj.depth >= protocol.MaxFlowDepth {
				return bad("parent")
			}
			job.Parent, job.depth = int(x)-1, pj.depth+1
			pj.Kids++
		}
	}
	if cols.OnFail >= 0 {
		switch o := j[protocol.AddArgsPerJob+cols.OnFail]; string(o) {
		case "", protocol.OnFailFail:
		case protocol.OnFailIgnore, protocol.OnFailContinue:
			if job.Parent >= 0 {
				job.OnFail = o
			}
		default:
			return bad("onfail")
		}
	}
	if cols.Wait >= 0 {
		if w := j[protocol.AddArgsPerJob+cols.Wait]; len(w) > 0 {
			x, ok := grammar.Decimal(w, 0, protocol.MaxWaitMS)
			if !ok {
				return bad("wait")
			}
			if x > 0 {
				job.Wait = w
			}
		}
	}
	return nil
}

// addJobOptions checks a job's option values (docs/PROTOCOL.md, "Job
// options"), in this order whatever the columns' order: due, timeout, kind,
// headers; its refusals name verb.
func addJobOptions(verb string, j [][]byte, cols AddColumns, job *AddJob) error {
	bad := func(name string) error { return refusal(protocol.ErrBadArg(verb, name)) }
	if cols.Due >= 0 {
		if d := j[protocol.AddArgsPerJob+cols.Due]; len(d) > 0 {
			x, ok := grammar.Decimal(d, 0, protocol.MaxDueMS)
			if !ok {
				return bad("due")
			}
			job.Due = x
		}
	}
	if cols.Timeout >= 0 {
		if t := j[protocol.AddArgsPerJob+cols.Timeout]; len(t) > 0 {
			x, ok := grammar.Decimal(t, 0, protocol.MaxTimeoutMS)
			if !ok {
				return bad("timeout")
			}
			if x > 0 {
				job.Timeout = t
			}
		}
	}
	if cols.Kind >= 0 {
		k := j[protocol.AddArgsPerJob+cols.Kind]
		if len(k) > protocol.MaxKind {
			return bad("kind")
		}
		if len(k) > 0 {
			job.Kind = k
		}
	}
	if cols.Headers >= 0 {
		h := j[protocol.AddArgsPerJob+cols.Headers]
		if len(h) > protocol.MaxHeaders {
			return bad("headers")
		}
		if len(h) > 0 {
			job.Headers = h
		}
	}
	return nil
}

// AddDue folds each job's due time into its delay, for the server's clock
// now: a job runs at max(now + delay, due), so its delay becomes that time
// minus now; a due time not above now leaves the delay as it is (a job of
// delay 0 stays one).
func AddDue(jobs []AddJob, now int64) {
	for i := range jobs {
		if j := &jobs[i]; j.Due > now+j.Delay {
			j.Delay = j.Due - now
		}
	}
}

// AddLaneArg is the offset of a job's lane value after its data, for the
// lane column lane.
func AddLaneArg(lane int) int { return protocol.AddArgsPerJob + lane }

// Waits reports whether the job waits in its lane now: it has a lane and no
// delay.
func (j AddJob) Waits() bool { return j.Lane != nil && j.Delay == 0 && j.Kids == 0 }

// Ready reports whether the job goes to pending now: no lane, no delay, not
// a parent.
func (j AddJob) Ready() bool { return j.Lane == nil && j.Delay == 0 && j.Kids == 0 }

// AddRead is a read ADD's verdict asks for.
type AddRead uint8

// ADD's reads, in order.
const (
	// AddNone: the verdict is final.
	AddNone AddRead = iota
	// AddFirst: one batch, GET version (the fence), HGET meta seq, HGET stats
	// added, ZCARD pending, ZCARD delayed and LLEN signal.
	AddFirst
	// AddLanes: the lane accounting of the lanes of the jobs that wait in a
	// lane now (a lane and no delay), each job counted in its lane's
	// waiting jobs.
	AddLanes
	// AddKeys (once the new ids are known, AddVerdict.First): one batch, GET
	// unique:<key> for each job with a unique key, in order, then EXISTS of
	// every new row. These keys are checked against the caller's ACL first;
	// a denied key is its read's error (and it and the keys after it are not
	// read).
	AddKeys
)

// AddSeen is what ADD has read so far.
type AddSeen struct {
	Version Reply[Field]
	Seq     Reply[Field]
	Added   Reply[Field]
	Pending Reply[int64]
	Delayed Reply[int64]
	Signal  Reply[int64]
	// Holders has one entry per job: GET unique:<key>, unmade for a job
	// without a unique key.
	Holders []Reply[Field]
	// Rows is EXISTS of the new rows.
	Rows Reply[int64]
	// Lanes is the lane accounting of the jobs that wait in a lane now.
	Lanes Reply[struct{}]
	// Waiting is ZCARD waiting, read (after its ACL check) when the call
	// has parents; Keep is meta's keep_done and keep_done_max.
	Waiting Reply[int64]
	Keep    [2]Field
}

// AddVerdict is what ADD writes and replies.
type AddVerdict struct {
	// First is the first new id; the jobs get First, First+1, … in order.
	First int64
	// Seq and Added are the predicted replies of HINCRBY meta seq n and
	// HINCRBY stats added n.
	Seq, Added int64
	// Signal: pending was empty and a job goes to it (the lane
	// accounting may signal too).
	Signal bool
	// Keep: the jobs are retained when they complete (keep 1).
	Keep bool
}

// AddStep is ADD's verdict, a refusal, or the next read it needs. With Need
// AddKeys, Verdict.First is already set: the keys to read derive from it.
type AddStep struct {
	Need    AddRead
	Err     error
	Verdict AddVerdict
}

// addDuplicateScan is how many unique keys a batch may hold before the
// duplicate check uses a map rather than comparing each pair.
const addDuplicateScan = 32

// Add decides EMQ.ADD of jobs, in the order of internal/lua/add.lua: the fence; meta
// seq, predicted for HINCRBY meta seq n (the new ids must stay in
// 1..MaxJobID: EMQSTATE add id space exhausted); each job's unique key in
// order (a repeat in the batch: EMQLOCK duplicate in batch; WRONGTYPE; held:
// EMQLOCK duplicate of the stored holder); the new rows (one exists: EMQSTATE
// add id exists); stats added, typed and predicted; pending, delayed and
// signal typed.
func Add(jobs []AddJob, s *AddSeen) AddStep {
	if !s.Version.Made {
		return AddStep{Need: AddFirst}
	}
	if err := Fence(s.Version); err != nil {
		return AddStep{Err: err}
	}
	if s.Seq.Err != nil {
		return AddStep{Err: s.Seq.Err}
	}
	n := int64(len(jobs))
	var v AddVerdict
	var err error
	if v.Seq, err = predict(s.Seq.Val, n); err != nil {
		return AddStep{Err: err}
	}
	v.First = v.Seq - n + 1
	v.Keep = rowInt(s.Keep[0]) > 0 || rowInt(s.Keep[1]) > 0
	if v.First < 1 || v.Seq > protocol.MaxJobID {
		return AddStep{Err: refusal(protocol.ErrAddIDSpace)}
	}
	if len(s.Holders) < len(jobs) {
		return AddStep{Need: AddKeys, Verdict: v}
	}
	if ok, err := addUnique(jobs, s.Holders); err != nil {
		return AddStep{Err: err}
	} else if !ok {
		return AddStep{Need: AddKeys, Verdict: v}
	}
	if !s.Rows.Made {
		return AddStep{Need: AddKeys, Verdict: v}
	}
	if s.Rows.Err != nil {
		return AddStep{Err: s.Rows.Err}
	}
	if s.Rows.Val != 0 {
		return AddStep{Err: refusal(protocol.ErrAddIDExists)}
	}
	for _, j := range jobs {
		if j.Waits() {
			if !s.Lanes.Made {
				return AddStep{Need: AddLanes, Verdict: v}
			}
			if s.Lanes.Err != nil {
				return AddStep{Err: s.Lanes.Err}
			}
			break
		}
	}
	if err := addCounters(jobs, s, &v); err != nil {
		return AddStep{Err: err}
	}
	return AddStep{Verdict: v}
}

// addCounters predicts stats added, checks the types read (pending,
// delayed, signal, waiting) and sets the signal: pending was empty and a
// job is ready.
func addCounters(jobs []AddJob, s *AddSeen, v *AddVerdict) error {
	if s.Added.Err != nil {
		return s.Added.Err
	}
	var err error
	if v.Added, err = predict(s.Added.Val, int64(len(jobs))); err != nil {
		return err
	}
	for _, r := range [...]*Reply[int64]{&s.Pending, &s.Delayed, &s.Signal} {
		if r.Err != nil {
			return r.Err
		}
	}
	if s.Waiting.Err != nil {
		return s.Waiting.Err
	}
	if s.Pending.Val == 0 {
		for _, j := range jobs {
			if j.Ready() {
				v.Signal = true
				break
			}
		}
	}
	return nil
}

// addUnique is the unique keys' verdict, job by job: a key repeated in the
// batch, the holder's read error, a holder. ok is false when a holder it
// needs has not been read.
func addUnique(jobs []AddJob, holders []Reply[Field]) (ok bool, err error) {
	var seen map[string]struct{}
	keys := 0
	for i, j := range jobs {
		if len(j.Unique) == 0 {
			continue
		}
		keys++
		if keys > addDuplicateScan && seen == nil {
			seen = make(map[string]struct{}, len(jobs))
			for _, e := range jobs[:i] {
				if len(e.Unique) > 0 {
					seen[string(e.Unique)] = struct{}{}
				}
			}
		}
		if seen != nil {
			if _, dup := seen[string(j.Unique)]; dup {
				return true, refusal(protocol.ErrAddDuplicateInBatch)
			}
			seen[string(j.Unique)] = struct{}{}
		} else {
			for _, e := range jobs[:i] {
				if len(e.Unique) > 0 && string(e.Unique) == string(j.Unique) {
					return true, refusal(protocol.ErrAddDuplicateInBatch)
				}
			}
		}
		h := holders[i]
		switch {
		case !h.Made:
			return false, nil
		case h.Err != nil:
			return true, h.Err
		case h.Val.Set:
			return true, refusal(grammar.Clip(protocol.ErrAddDuplicate(string(h.Val.Bytes))))
		}
	}
	return true, nil
}

// AddRowDefaults reports which of job j's max, prio and bo fields hold their
// defaults (protocol.DefaultMax, DefaultPriority, DefaultBackoff), which ADD
// leaves out of the row, from the job's arguments args (ADD's ARGV, checked
// canonical, so the bytes decide).
func AddRowDefaults(args [][]byte, j AddJob) (maxDefault, prioDefault, boDefault bool) {
	maxDefault = string(args[j.Arg+AddAttempts]) == protocol.DefaultMax
	prioDefault = j.Priority == 0
	boDefault = string(args[j.Arg+AddBackoff]) == protocol.BackoffExponential &&
		string(args[j.Arg+AddBackoffMS]) == defaultBackoffMS
	return maxDefault, prioDefault, boDefault
}

// defaultBackoffMS is the ms of protocol.DefaultBackoff.
const defaultBackoffMS = "1000"
