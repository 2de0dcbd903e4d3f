package verdict

import (
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/protocol"
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
	protocol.FieldParent, protocol.FieldOnFail, protocol.FieldLane, protocol.FieldPriority, protocol.FieldWait,
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

// FlowOp is one write of the flows, in the order the Lua executor makes it.
type FlowOp struct {
	Kind FlowOpKind
	// P is the parent's index in FlowParents.Rows.
	P int
	// Child, Text: the child and its result or error (OpResult,
	// OpFailure, OpChildFail), the error of a parent's death (OpDie).
	Child, Text []byte
	// Val is the new deps (OpDeps), the pending score (OpRelease).
	Val int64
}

// FlowOpKind names a flow write.
type FlowOpKind uint8

// The flow writes.
const (
	// OpResult: HSET job:<p>:results <child> <result>.
	OpResult FlowOpKind = iota + 1
	// OpFailure: HSET job:<p>:failures <child> <error>.
	OpFailure
	// OpChildFail: HSET job:<p> cfail <child>.
	OpChildFail
	// OpDeps: HINCRBY job:<p> deps -1, predicted (Val).
	OpDeps
	// OpRelease: ZREM waiting <p>, HSET job:<p> state pending, ZADD pending
	// (or lane:<l>, FlowParents.Lane) Val <p>.
	OpRelease
	// OpDie: ZREM waiting <p>, HSET job:<p> state dead err <Text>, ZADD dead
	// <now> <p>, HINCRBY stats dead 1.
	OpDie
)

// FlowParent is one parent the call met.
type FlowParent struct {
	ID  []byte
	Row Reply[FlowRow]
	// the state as the call's writes leave it
	deps    int64
	cfail   []byte
	touched bool
	done    bool
}

// Lane is the parent's lane (nil: none).
func (p *FlowParent) Lane() []byte { return LaneName(p.Row.Val[fpLane]) }

// Wait is the parent's wait field (0: none).
func (p *FlowParent) Wait() int64 { return waitField(p.Row.Val[fpWait]) }

// waitField reads a wait field: a canonical 1..MaxWaitMS, else none.
func waitField(f Field) int64 {
	v := rowInt(f)
	if v < 1 || v > protocol.MaxWaitMS {
		return 0
	}
	return v
}

// WaitField is a row's wait field as FlowRun reads it (0: none).
func WaitField(f Field) int64 { return waitField(f) }

// FlowParents is the parents a call met, in order, with their reads.
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

// FlowResult is FlowRun's outcome.
type FlowResult struct {
	// Need is the index of a parent FlowRun needs read (-1: none).
	Need int
	Err  error
	Ops  []FlowOp
	// Deaths is the number of parents that died (HINCRBY stats dead).
	Deaths int64
	// Pending is the number of parents released to pending (not a lane).
	Pending int
}

// FlowRun tells the parents of events, in order, depth first up the tree:
// each event's parent, when it is waiting, records the child's outcome and
// counts it; a parent whose last child finished is released, to pending or
// its lane, or dies (its cfail set), which tells its own parent. It needs
// every parent it meets read: it returns the first that is not (Need), or
// the first refusal of a read it uses (a parent row that is not a hash, a
// deps that HINCRBY refuses). ops is the memory of the result's Ops.
func FlowRun(events []FlowEvent, fp *FlowParents, ops []FlowOp) FlowResult {
	res := FlowResult{Need: -1, Ops: ops[:0]}
	for i := range fp.Rows {
		p := &fp.Rows[i]
		p.touched, p.done, p.cfail = false, false, nil
	}
	for _, ev := range events {
		if !flowTell(ev, fp, &res) {
			return res
		}
	}
	return res
}

// flowTell applies one event and the deaths it causes up the tree; false
// when the result is final (a need or a refusal).
func flowTell(ev FlowEvent, fp *FlowParents, res *FlowResult) bool {
	for depth := 0; depth <= protocol.MaxFlowDepth+1; depth++ {
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
		if !p.touched {
			p.touched = true
			p.cfail = nil
			if row[fpCfail].Set {
				p.cfail = row[fpCfail].Bytes
			}
			if !row[fpAtt].Set || !row[fpState].Is(protocol.StateWaiting) {
				p.done = true // not waiting: not touched
			} else {
				p.deps = 0
				if row[fpDeps].Set {
					v, ok := grammar.String2LL(row[fpDeps].Bytes)
					if !ok {
						res.Err = grammar.Refusal(protocol.ErrHashNotInteger)
						return false
					}
					p.deps = v
				}
			}
		}
		if p.done {
			return true
		}
		switch ev.Kind {
		case FinishCompleted:
			if len(ev.Text) > 0 {
				res.Ops = append(res.Ops, FlowOp{Kind: OpResult, P: i, Child: ev.Child, Text: ev.Text})
			}
		case FinishDied:
			switch string(ev.Policy) {
			case protocol.OnFailIgnore:
			case protocol.OnFailContinue:
				res.Ops = append(res.Ops, FlowOp{Kind: OpFailure, P: i, Child: ev.Child, Text: ev.Text})
			default:
				if p.cfail == nil {
					p.cfail = ev.Child
					res.Ops = append(res.Ops, FlowOp{Kind: OpChildFail, P: i, Child: ev.Child})
				}
			}
		}
		if p.deps == -1<<63 {
			res.Err = grammar.Refusal(protocol.ErrOverflow)
			return false
		}
		p.deps--
		res.Ops = append(res.Ops, FlowOp{Kind: OpDeps, P: i, Val: p.deps})
		if p.deps > 0 {
			return true
		}
		p.done = true
		if p.cfail == nil {
			id, _ := grammar.Decimal(p.ID, 1, protocol.MaxJobID)
			prio := rowInt(row[fpPrio])
			if prio > protocol.MaxPriority {
				prio = 0
			}
			res.Ops = append(res.Ops, FlowOp{Kind: OpRelease, P: i, Val: protocol.PendingScore(prio, id)})
			if p.Lane() == nil {
				res.Pending++
			}
			return true
		}
		text := DeathText(p.cfail)
		res.Ops = append(res.Ops, FlowOp{Kind: OpDie, P: i, Text: text})
		res.Deaths++
		up := ChildParent(row[fpParent])
		if up == nil {
			return true
		}
		var policy []byte
		if row[fpOnFail].Set {
			policy = row[fpOnFail].Bytes
		}
		ev = FlowEvent{Parent: up, Child: p.ID, Kind: FinishDied, Policy: policy, Text: text}
	}
	return true
}

// DeathText is the err of a parent that dies for its child cfail.
func DeathText(cfail []byte) []byte {
	return append(append([]byte("child "), cfail...), " failed"...)
}

// Outcome is a waited job's outcome: c<result>, d<error> or r.
func Outcome(kind Finish, text []byte) []byte {
	switch kind {
	case FinishCompleted:
		return append([]byte{'c'}, text...)
	case FinishDied:
		return append([]byte{'d'}, text...)
	}
	return []byte{'r'}
}

// PredictField is HINCRBY's prediction on a field (its new value, or the
// server's refusal).
func PredictField(f Field, by int64) (int64, error) { return predict(f, by) }
