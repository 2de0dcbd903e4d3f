package verdict

import (
	"slices"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// completeManyIndexBits is how many low bits of a CompleteManyValues key hold
// the pair's index; the id sits above them.
const completeManyIndexBits = 10

// Both halves of a key fit: an index below MaxCount and an id up to MaxJobID
// (a constant overflow, or a negative array length, fails the build).
var (
	_ [1<<completeManyIndexBits - protocol.MaxCount]struct{}
	_ = uint64(protocol.MaxJobID) << completeManyIndexBits
)

// CompleteManyValues checks COMPLETEMANY's n (id, token, result) triples in
// args (ARGV, whose count the shape checked), triple by triple as
// internal/lua/completemany.lua does: "bad id", then an id already named earlier in
// the call (ErrCompleteManyRepeated), then a result over protocol.MaxResult
// ("bad result"), whichever triple comes first. keys is memory for the
// check, returned for the next call: the ids are sorted with their index
// rather than put in a map, so a call allocates nothing.
func CompleteManyValues(args [][]byte, n int, keys []uint64) ([]uint64, error) {
	keys = keys[:0]
	bad := n // the first triple whose id is not one
	for i := range n {
		id, ok := grammar.Decimal(args[1+3*i], 1, protocol.MaxJobID)
		if !ok {
			bad = i
			break
		}
		keys = append(keys, uint64(id)<<completeManyIndexBits|uint64(i))
	}
	badResult := n // the first triple whose result is too long
	for i := range bad {
		if len(args[3+3*i]) > protocol.MaxResult {
			badResult = i
			break
		}
	}
	// equal ids sort together, by index: the first repeat of an id is the
	// second key of its run, and the call's first repeat the least of those
	slices.Sort(keys)
	repeat := bad
	for k := 1; k < len(keys); k++ {
		if keys[k]>>completeManyIndexBits == keys[k-1]>>completeManyIndexBits {
			repeat = min(repeat, int(keys[k]&(1<<completeManyIndexBits-1)))
		}
	}
	switch {
	case badResult < repeat && badResult < bad:
		return keys, completeManyBadResult
	case repeat < bad:
		return keys, completeManyRepeated
	case bad < n:
		return keys, completeManyBadID
	}
	return keys, nil
}

// CompleteManyRead is a read COMPLETEMANY's verdict asks for.
type CompleteManyRead uint8

// COMPLETEMANY's reads, in order.
const (
	// CompleteManyNone: the verdict is final.
	CompleteManyNone CompleteManyRead = iota
	// CompleteManyFirst: one batch, GET version (the fence); for each job in
	// order HMGET <row> att uniq lane parent keep wait and ZSCORE active
	// <id>; HGET stats
	// completed. The rows and their logs are checked against the caller's
	// ACL first: a denied row is its read's error (it and the jobs after it
	// are not read), denied logs are the job's CompleteManyJob.Logs.
	CompleteManyFirst
	// CompleteManyCancelledRows: HGET <row> cancelled of each job in
	// CompleteManyVerdict.Cancelled (its token matches, it is not in
	// active), in one batch: the row was read as a hash already.
	CompleteManyCancelledRows
	// CompleteManyHolders: GET unique:<uniq> of each job in
	// CompleteManyVerdict.Holders, in order. The keys are checked against
	// the caller's ACL first; a denied key is its read's error (it and the
	// keys after it are not read).
	CompleteManyHolders
	// CompleteManyResultMax: HGET meta result_max, when a job found in
	// active has a result that is not empty (meta checked against the
	// caller's ACL first).
	CompleteManyResultMax
	// CompleteManyFlow: the caller's ACL on completed at the first job
	// retained, then the flow accounting of the jobs completed, in argument
	// order, up to CompleteManyVerdict.Limit: each one's outcome and its
	// parent. Its refusal is the first of these in job order.
	CompleteManyFlow
	// CompleteManyLanes: the lane accounting of the lanes of the jobs
	// completed (CompleteManyVerdict.Outcomes), in argument order, one active
	// job less each, then of the parents released to a lane.
	CompleteManyLanes
	// CompleteManyFlowTypes: the flow accounting's types, when a job
	// completed names a parent, is retained or is waited for.
	CompleteManyFlowTypes
)

// CompleteManyJob is one (id, token, result) triple and what COMPLETEMANY has read for
// it.
type CompleteManyJob struct {
	// ID, Token and Result are the triple's arguments.
	ID, Token, Result []byte
	// Row is HMGET <row> att uniq lane parent keep wait.
	Row Reply[[6]Field]
	// Score is ZSCORE active <id>, which counts only for a job whose token
	// matches.
	Score Reply[Field]
	// Logs is the caller's ACL on <row>:logs and, for a parent (a row with
	// deps), its kids, results and failures, which only DEL touches: nil,
	// or NOPERM, refused after every other read when the job completes.
	Logs error
	// Holder is GET unique:<uniq>, made for a job found in active whose row
	// has uniq.
	Holder Reply[Field]
	// Cancelled is HGET <row> cancelled, made for a job whose token matches
	// and that is not in active.
	Cancelled Reply[Field]
}

// CompleteManySeen is what COMPLETEMANY has read so far.
type CompleteManySeen struct {
	Version Reply[Field]
	// Jobs has one entry per pair, in argument order.
	Jobs      []CompleteManyJob
	Completed Reply[Field]
	// ResultMax is HGET meta result_max.
	ResultMax Reply[Field]
	// Flow and FlowTypes are the flow accounting's outcomes.
	Flow, FlowTypes Reply[struct{}]
	// Lanes is the lane accounting's outcome.
	Lanes Reply[struct{}]
	// Outcomes and Holders are memory the verdict may fill with its own: a
	// handler keeps them from one call to the next, so a steady load
	// allocates nothing.
	Outcomes  []CompleteManyOutcome
	Holders   []int
	Cancelled []int
}

// A job's outcome, its integer in the reply (protocol's).
const (
	CompleteManyDone      = protocol.CompleteManyDone
	CompleteManyGone      = protocol.CompleteManyGone
	CompleteManyStale     = protocol.CompleteManyStale
	CompleteManyNotActive = protocol.CompleteManyNotActive
	CompleteManyTooLarge  = protocol.CompleteManyTooLarge
	CompleteManyCancelled = protocol.CompleteManyCancelled
)

// CompleteManyOutcome is one job's outcome.
type CompleteManyOutcome struct {
	// Reply is the job's integer in the reply: CompleteManyDone, …Gone,
	// …Stale, …NotActive, …TooLarge or …Cancelled. Only a done job is
	// written.
	Reply int64
	// Release: the job is done and its unique key holds its id; DEL it too.
	Release bool
	// Keep: the job is done and retained; Wait its wait (0: none); Parent
	// its parent (nil: none).
	Keep   bool
	Wait   int64
	Parent []byte
}

// CompleteManyVerdict is what COMPLETEMANY writes and replies.
type CompleteManyVerdict struct {
	// Outcomes has one entry per job, in argument order.
	Outcomes []CompleteManyOutcome
	// Done is the number of jobs completed; with none, nothing is written.
	Done int64
	// Completed is HINCRBY stats completed <Done>'s predicted reply.
	Completed int64
	// Limit is the number of jobs, from the first, whose retained set and
	// parents CompleteManyFlow reads: all, or those before the first
	// refusal.
	Limit int
	// Holders, with Need CompleteManyHolders, are the indexes of the jobs
	// whose unique key to read: every job before the first refusal of the
	// first batch found in active with uniq set and its holder not read.
	Holders []int
	// Cancelled, with Need CompleteManyCancelledRows, are the indexes of the
	// jobs whose cancelled field to read.
	Cancelled []int
}

// CompleteManyStep is COMPLETEMANY's verdict, a refusal, or the next read it
// needs.
type CompleteManyStep struct {
	Need    CompleteManyRead
	Err     error
	Verdict CompleteManyVerdict
}

// CompleteMany decides EMQ.COMPLETEMANY of s.Jobs, in the order of
// internal/lua/completemany.lua: the fence; then job by job, the row (gone, stale),
// its place in active (not active), its unique key's holder (WRONGTYPE); with
// a job completed, stats completed, typed and predicted with +Done; last, the
// logs of the completed jobs (NOPERM). ZSCORE types active and HMGET the
// rows; DEL takes any type.
func CompleteMany(s *CompleteManySeen) CompleteManyStep {
	if !s.Version.Made {
		return CompleteManyStep{Need: CompleteManyFirst}
	}
	if err := Fence(s.Version); err != nil {
		return CompleteManyStep{Err: err}
	}
	v := CompleteManyVerdict{Outcomes: zeroed(&s.Outcomes, len(s.Jobs))}
	first, ok := completeManyJobs(s, &v)
	if !ok {
		return CompleteManyStep{Need: CompleteManyFirst}
	}
	if len(first.cancelled) > 0 {
		s.Cancelled = first.cancelled
		v.Cancelled = first.cancelled
		return CompleteManyStep{Need: CompleteManyCancelledRows, Verdict: v}
	}
	if len(first.holders) > 0 {
		s.Holders = first.holders
		v.Holders = first.holders
		return CompleteManyStep{Need: CompleteManyHolders, Verdict: v}
	}
	// the results, up to the first refusal: too large is the job's outcome
	// -3; the bound's refusal stops the jobs at the first with a result
	v.Limit = first.at
	boundErr, need := completeManyBound(s, &v)
	if need {
		return CompleteManyStep{Need: CompleteManyResultMax, Verdict: v}
	}
	// the retained set and the parents of the jobs before both refusals
	flow, lanes := completeManyFlows(s, &v)
	if flow && !s.Flow.Made {
		return CompleteManyStep{Need: CompleteManyFlow, Verdict: v}
	}
	switch {
	case s.Flow.Err != nil:
		return CompleteManyStep{Err: s.Flow.Err}
	case boundErr != nil:
		return CompleteManyStep{Err: boundErr}
	case first.err != nil:
		return CompleteManyStep{Err: first.err}
	}
	if v.Done == 0 {
		return CompleteManyStep{Verdict: v}
	}
	return completeManyRest(s, v, flow, lanes)
}

// completeManyFirst is what the first pass over the jobs found: the first
// refusal of the first batch's replies (or of a holder) and its job, and
// the jobs whose cancelled field or unique key's holder is still to read.
type completeManyFirst struct {
	err                error
	at                 int
	holders, cancelled []int
}

// completeManyJobs judges the jobs, job by job, up to the first refusal:
// the jobs before it are still read through, as
// internal/lua/completemany.lua does, so their own later reads (the
// result's bound, the retained set, the parents) may refuse first. ok is
// false while the first batch is to read.
func completeManyJobs(s *CompleteManySeen, v *CompleteManyVerdict) (first completeManyFirst, ok bool) {
	first = completeManyFirst{at: len(s.Jobs), holders: s.Holders[:0], cancelled: s.Cancelled[:0]}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if !j.Row.Made {
			return first, false
		}
		if err := completeManyJob(j, &v.Outcomes[i], i, &first); err != nil {
			first.err, first.at = err, i
			break
		}
		if v.Outcomes[i].Reply == CompleteManyDone {
			v.Done++
		}
	}
	return first, true
}

// completeManyJob judges job i: its outcome o, the reads it still needs
// (in first), or the refusal that stops the jobs there.
func completeManyJob(j *CompleteManyJob, o *CompleteManyOutcome, i int, first *completeManyFirst) error {
	if j.Row.Err != nil {
		return j.Row.Err
	}
	att, uniq := j.Row.Val[0], j.Row.Val[1]
	switch {
	case !att.Set:
		o.Reply = CompleteManyGone
		return nil
	case string(att.Bytes) != string(j.Token):
		o.Reply = CompleteManyStale
		return nil
	}
	if j.Score.Err != nil {
		return j.Score.Err
	}
	if !j.Score.Val.Set {
		o.Reply = CompleteManyNotActive
		switch {
		case !j.Cancelled.Made:
			first.cancelled = append(first.cancelled, i)
		case j.Cancelled.Err != nil:
			return j.Cancelled.Err
		case j.Cancelled.Val.Set:
			o.Reply = CompleteManyCancelled
		}
		return nil
	}
	if uniq.Set {
		switch {
		case !j.Holder.Made:
			first.holders = append(first.holders, i)
		case len(first.holders) > 0:
			// an earlier holder is still to read: its refusal would win
		case j.Holder.Err != nil:
			return j.Holder.Err
		default:
			o.Release = j.Holder.Val.Set && string(j.Holder.Val.Bytes) == string(j.ID)
		}
	}
	o.Reply = CompleteManyDone
	return nil
}

// completeManyBound judges the results of the jobs done before v.Limit
// against meta result_max: too large is the job's outcome; the bound's
// refusal stops the jobs at the first with a result (v.Limit). need is
// true while result_max is to read.
func completeManyBound(s *CompleteManySeen, v *CompleteManyVerdict) (boundErr error, need bool) {
	for i := range v.Outcomes[:v.Limit] {
		o := &v.Outcomes[i]
		if o.Reply != CompleteManyDone || len(s.Jobs[i].Result) == 0 {
			continue
		}
		if !s.ResultMax.Made {
			return nil, true
		}
		if s.ResultMax.Err != nil {
			v.Limit = i
			return s.ResultMax.Err, false
		}
		if int64(len(s.Jobs[i].Result)) > ResultMax(s.ResultMax.Val) {
			o.Reply, o.Release = CompleteManyTooLarge, false
			v.Done--
		}
	}
	return nil, false
}

// completeManyFlows sets the parent, keep and wait of the jobs done before
// v.Limit, and reports whether any has a flow accounting (a parent, kept,
// waited for) or a lane.
func completeManyFlows(s *CompleteManySeen, v *CompleteManyVerdict) (flow, lanes bool) {
	for i := range v.Outcomes[:v.Limit] {
		o := &v.Outcomes[i]
		if o.Reply != CompleteManyDone {
			continue
		}
		row := &s.Jobs[i].Row.Val
		o.Parent, o.Keep, o.Wait = ChildParent(row[3]), row[4].Is("1"), waitField(row[5])
		lanes = lanes || LaneName(row[2]) != nil
		flow = flow || o.Parent != nil || o.Keep || o.Wait > 0
	}
	return flow, lanes
}

// completeManyRest is the verdict's last looks, with a job done: the lanes,
// stats completed predicted, the flows' types, the logs.
func completeManyRest(s *CompleteManySeen, v CompleteManyVerdict, flow, lanes bool) CompleteManyStep {
	if lanes || s.Flow.Made {
		if !s.Lanes.Made {
			return CompleteManyStep{Need: CompleteManyLanes, Verdict: v}
		}
		if s.Lanes.Err != nil {
			return CompleteManyStep{Err: s.Lanes.Err}
		}
	}
	if s.Completed.Err != nil {
		return CompleteManyStep{Err: s.Completed.Err}
	}
	var err error
	if v.Completed, err = predict(s.Completed.Val, v.Done); err != nil {
		return CompleteManyStep{Err: err}
	}
	if flow {
		if !s.FlowTypes.Made {
			return CompleteManyStep{Need: CompleteManyFlowTypes, Verdict: v}
		}
		if s.FlowTypes.Err != nil {
			return CompleteManyStep{Err: s.FlowTypes.Err}
		}
	}
	for i, o := range v.Outcomes {
		if o.Reply == CompleteManyDone && !o.Keep && s.Jobs[i].Logs != nil {
			return CompleteManyStep{Err: s.Jobs[i].Logs}
		}
	}
	return CompleteManyStep{Verdict: v}
}

// zeroed returns n zeroed elements in *buf's array, growing it when short.
func zeroed[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	out := (*buf)[:n]
	clear(out)
	return out
}

// COMPLETEMANY's value refusals, built once.
var (
	completeManyRepeated  = refusal(protocol.ErrCompleteManyRepeated)
	completeManyBadID     = refusal(protocol.ErrBadArg(protocol.CompleteMany.Name, "id"))
	completeManyBadResult = refusal(protocol.ErrBadArg(protocol.CompleteMany.Name, "result"))
)
