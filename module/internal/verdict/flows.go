package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// This file is the flows' shared logic (docs/PROTOCOL.md, "Flows"): a
// finished child tells its waiting parent, which is released to pending
// (or its lane) or dies when its last child finished, and a parent's death
// tells its own parent in turn, up the tree. FlowRun is a pure function of
// the finished children and the parent rows read so far.

// Finish is how a child finished.
type Finish uint8

// The ways a child finishes.
const (
	FinishCompleted Finish = iota + 1 // its COMPLETE; Text is the result
	FinishDied                        // FAIL, RECOVER or a parent's death; Text is the error
	FinishRemoved                     // REMOVE
)

// FlowParentFields are the fields of a parent's read, HMGET job:<p> … in
// this order.
var FlowParentFields = [...]string{
	protocol.FieldAttempts, protocol.FieldState, protocol.FieldDeps, protocol.FieldChildFail,
	protocol.FieldParent, protocol.FieldOnFail, protocol.FieldLane, protocol.FieldPriority, protocol.FieldWait, protocol.FieldEvents,
}

// The indexes of FlowParentFields.
const (
	fpAtt = iota
	fpState
	fpDeps
	fpCfail
	fpParent
	fpOnFail
	fpLane
	fpPrio
	fpWait
	fpEv
)

// FlowRow is a parent's read.
type FlowRow = [len(FlowParentFields)]Field

// FlowEvent is a child that finished and names a parent.
type FlowEvent struct {
	Parent []byte // the parent's id (canonical)
	Child  []byte
	Kind   Finish
	Policy []byte // the child's onfail field (absent: fail)
	Text   []byte
}

// ChildParent is a row's parent field as an id, or nil when it is not one.
func ChildParent(f Field) []byte {
	if !f.Set || !grammar.ID(f.Bytes) {
		return nil
	}
	return f.Bytes
}

// FlowParent is one parent the call met, with its read and, once FlowRun
// has told it, its changes.
type FlowParent struct {
	ID  []byte
	Row Reply[FlowRow]
	// Waiting: the row is present and in state waiting (only such a parent
	// is told and written).
	Waiting bool
	// K is the number of its children this call finished (HINCRBY deps -K,
	// predicted as Deps).
	K, Deps int64
	// Results and Failures are child, text pairs, in order (one HSET each).
	Results, Failures [][]byte
	// Cfail is its first child with policy fail that died (stored or set
	// by this call: NewCfail).
	Cfail    []byte
	NewCfail bool
	// Released: its last child finished; it dies (Err, its death text) when
	// it has Cfail, else goes to its lane (Lane) or pending (Score).
	Released bool
	Err      []byte
	Score    int64
	met      bool
}

// Lane is the parent's lane (nil: none).
func (p *FlowParent) Lane() []byte { return LaneName(p.Row.Val[fpLane]) }

// Ev is the parent's ev field, its job events' bound (docs/PROTOCOL.md,
// "Job events").
func (p *FlowParent) Ev() Field { return p.Row.Val[fpEv] }

// Wait is the parent's wait field (0: none).
func (p *FlowParent) Wait() int64 { return waitField(p.Row.Val[fpWait]) }

// waitField reads a wait field: a canonical 1..MaxWaitMS, else none.
func waitField(f Field) int64 {
	return grammar.RowInt(f.Bytes, f.Set, protocol.MaxWaitMS)
}

// WaitField is a row's wait field as the flows read it (0: none).
func WaitField(f Field) int64 { return waitField(f) }

// FlowParents is the parents a call met, with their reads.
type FlowParents struct {
	Rows []FlowParent
}

// Reset empties the parents, keeping their memory.
func (fp *FlowParents) Reset() { fp.Rows = fp.Rows[:0] }

// Find is the index of parent id, or -1.
func (fp *FlowParents) Find(id []byte) int {
	for i := range fp.Rows {
		if string(fp.Rows[i].ID) == string(id) {
			return i
		}
	}
	return -1
}

// Meet adds parent id (unread) when it is not met yet, and returns its index.
func (fp *FlowParents) Meet(id []byte) int {
	if i := fp.Find(id); i >= 0 {
		return i
	}
	fp.Rows = append(fp.Rows, FlowParent{ID: id})
	return len(fp.Rows) - 1
}

// FlowDeath is a parent that died (P, its index) because of event Event.
type FlowDeath struct{ Event, P int }

// FlowResult is FlowRun's outcome.
type FlowResult struct {
	// Need is the index of a parent FlowRun needs read (-1: none).
	Need int
	Err  error
	// Told are the indexes of the parents told, in the order met: their
	// writes go in this order.
	Told []int
	// Deaths are the parents that died, in the order released.
	Deaths []FlowDeath
	// ToPending: a parent goes to pending (not a lane).
	ToPending bool
}

// FlowRun tells the parents of events, in order, depth first up the tree
// (lib.lua flow_finish): a parent is told when it is present and waiting
// and not yet released by the call; it counts the child (HINCRBY deps -k,
// predicted), records a result, a failure or its cfail by the child's
// policy, and is released when its stored deps is k: it dies when it has a
// cfail (its own parent is then told), else goes to its lane or pending. It
// needs every parent it meets read: it returns the first that is not
// (Need), or the first refusal of a read it uses. An event without a Parent
// tells nobody. told and deaths are the memory of the result's slices.
func FlowRun(events []FlowEvent, fp *FlowParents, told []int, deaths []FlowDeath) FlowResult {
	res := FlowResult{Need: -1, Told: told[:0], Deaths: deaths[:0]}
	for i := range fp.Rows {
		p := &fp.Rows[i]
		*p = FlowParent{ID: p.ID, Row: p.Row, Results: p.Results[:0], Failures: p.Failures[:0]}
	}
	for e, ev := range events {
		if ev.Parent == nil {
			continue
		}
		if !flowTell(e, ev, fp, &res) {
			return res
		}
	}
	return res
}

// flowTell applies event e and the deaths it causes up the tree; false when
// the result is final (a need or a refusal).
func flowTell(e int, ev FlowEvent, fp *FlowParents, res *FlowResult) bool {
	for range protocol.MaxCount + protocol.MaxFlowDepth {
		i := fp.Meet(ev.Parent)
		p := &fp.Rows[i]
		if !p.Row.Made {
			res.Need = i
			return false
		}
		if p.Row.Err != nil {
			res.Err = p.Row.Err
			return false
		}
		row := &p.Row.Val
		if !p.met {
			p.met = true
			p.Waiting = row[fpAtt].Set && row[fpState].Is(protocol.StateWaiting)
			if row[fpCfail].Set {
				p.Cfail = row[fpCfail].Bytes
			}
			if p.Waiting {
				res.Told = append(res.Told, i)
			}
		}
		if !p.Waiting || p.Released {
			return true
		}
		p.K++
		deps, err := predict(row[fpDeps], -p.K)
		if err != nil {
			res.Err = err
			return false
		}
		p.Deps = deps
		switch ev.Kind {
		case FinishCompleted:
			if len(ev.Text) > 0 {
				p.Results = append(p.Results, ev.Child, ev.Text)
			}
		case FinishDied:
			switch string(ev.Policy) {
			case protocol.OnFailContinue:
				p.Failures = append(p.Failures, ev.Child, ev.Text)
			case protocol.OnFailIgnore:
			default:
				if p.Cfail == nil {
					p.Cfail, p.NewCfail = ev.Child, true
				}
			}
		}
		if !row[fpDeps].Set || string(row[fpDeps].Bytes) != protocol.FormatInt(p.K) {
			return true
		}
		p.Released = true
		if p.Cfail == nil {
			id, _ := grammar.Decimal(p.ID, 1, protocol.MaxJobID)
			p.Score = protocol.PendingScore(grammar.RowInt(row[fpPrio].Bytes, row[fpPrio].Set, protocol.MaxPriority), id)
			if p.Lane() == nil {
				res.ToPending = true
			}
			return true
		}
		p.Err = DeathText(p.Cfail)
		res.Deaths = append(res.Deaths, FlowDeath{Event: e, P: i})
		up := ChildParent(row[fpParent])
		if up == nil {
			return true
		}
		var policy []byte
		if row[fpOnFail].Set {
			policy = row[fpOnFail].Bytes
		}
		ev = FlowEvent{Parent: up, Child: p.ID, Kind: FinishDied, Policy: policy, Text: p.Err}
	}
	return true
}

// DeathText is the err of a parent that dies for its child cfail.
func DeathText(cfail []byte) []byte {
	return append(append([]byte("child "), cfail...), " failed"...)
}

// PredictField is HINCRBY's prediction on a field (its new value, or the
// server's refusal).
func PredictField(f Field, by int64) (int64, error) { return predict(f, by) }
