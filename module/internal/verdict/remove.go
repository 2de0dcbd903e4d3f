package verdict

import (
	"github.com/trafikey/trafikey/protocol"
)

// RemoveRead is a read REMOVE's verdict asks for.
type RemoveRead uint8

// REMOVE's reads, in order.
const (
	// RemoveNone: the verdict is final.
	RemoveNone RemoveRead = iota
	// RemoveFirst: one batch, GET version (the fence), then HMGET <row> att
	// state uniq (the row is checked against the caller's ACL first: a
	// denial is this read's error, and the row is not read).
	RemoveFirst
	// RemoveRest: one batch. GET unique:<RemoveStep.Unique> when the row
	// has a unique key (checked against the caller's ACL first, a denial
	// being this read's error); HGET stats removed; ZCARD <RemoveStep.Set>
	// when the state names a set.
	RemoveRest
	// RemoveLanes: for a pending job with a lane (RemoveStep.Lane), the
	// lane accounting of its lane, one waiting job less; its lane:<l> is the
	// set it leaves, typed by the accounting.
	RemoveLanes
)

// StateSet names the set a job's state puts it in.
type StateSet uint8

// The sets a row's state names.
const (
	// NoSet: a state other than pending, delayed or dead.
	NoSet StateSet = iota
	// InPending, InDelayed, InDead: the state pending, delayed, dead.
	InPending
	InDelayed
	InDead
)

// SetOf is the set a row's state names.
func SetOf(state Field) StateSet {
	if !state.Set {
		return NoSet
	}
	switch string(state.Bytes) {
	case protocol.StatePending:
		return InPending
	case protocol.StateDelayed:
		return InDelayed
	case protocol.StateDead:
		return InDead
	}
	return NoSet
}

// RemoveSeen is what REMOVE has read so far.
type RemoveSeen struct {
	Version Reply[Field]
	Row     Reply[[]Field] // att state uniq lane
	Holder  Reply[Field]   // GET unique:<uniq>
	Removed Reply[Field]   // HGET stats removed
	Set     Reply[int64]   // ZCARD of the state's set
	// Lanes is the lane accounting's outcome.
	Lanes Reply[struct{}]
}

// RemoveVerdict is what REMOVE writes and replies.
type RemoveVerdict struct {
	// Gone: the row is absent; reply 0 and write nothing.
	Gone bool
	// Set is the set to ZREM the id from (NoSet: none).
	Set StateSet
	// Unique: the unique key holds this id, so DEL it.
	Unique bool
	// Removed is the predicted reply of HINCRBY stats removed 1.
	Removed int64
	// Lane: the job is pending in this lane; it leaves lane:<l>, not
	// pending.
	Lane []byte
}

// RemoveStep is REMOVE's verdict, a refusal, or the next read it needs.
type RemoveStep struct {
	Need RemoveRead
	// With RemoveRest: the row's unique key (nil when it has none) and the
	// set its state names; Lane, for a pending job with a lane, its lane
	// (the set is then lane:<l>, not pending).
	Unique  []byte
	Set     StateSet
	Lane    []byte
	Err     error
	Verdict RemoveVerdict
}

// Remove decides EMQ.REMOVE of job id: a job no worker holds is deleted with
// its logs, and its unique key when the key still names it.
func Remove(id []byte, s *RemoveSeen) RemoveStep {
	if !s.Version.Made {
		return RemoveStep{Need: RemoveFirst}
	}
	if err := Fence(s.Version); err != nil {
		return RemoveStep{Err: err}
	}
	if s.Row.Err != nil {
		return RemoveStep{Err: s.Row.Err}
	}
	att, state, uniq := s.Row.Val[0], s.Row.Val[1], s.Row.Val[2]
	if !att.Set {
		return RemoveStep{Verdict: RemoveVerdict{Gone: true}}
	}
	if state.Is(protocol.StateActive) {
		return RemoveStep{Err: refusal(protocol.ErrRemoveActive)}
	}
	set := SetOf(state)
	var lane []byte
	if set == InPending {
		lane = LaneName(at(s.Row.Val, 3))
	}
	if !s.Removed.Made {
		return RemoveStep{Need: RemoveRest, Unique: unique(uniq), Set: set, Lane: lane}
	}
	v := RemoveVerdict{Set: set, Lane: lane}
	if uniq.Set {
		if s.Holder.Err != nil {
			return RemoveStep{Err: s.Holder.Err}
		}
		v.Unique = s.Holder.Val.Is(string(id))
	}
	if lane != nil {
		if !s.Lanes.Made {
			return RemoveStep{Need: RemoveLanes, Set: set, Lane: lane}
		}
		if s.Lanes.Err != nil {
			return RemoveStep{Err: s.Lanes.Err}
		}
	}
	if s.Removed.Err != nil {
		return RemoveStep{Err: s.Removed.Err}
	}
	var err error
	if v.Removed, err = predict(s.Removed.Val, 1); err != nil {
		return RemoveStep{Err: err}
	}
	if set != NoSet && lane == nil && s.Set.Err != nil {
		return RemoveStep{Err: s.Set.Err}
	}
	return RemoveStep{Verdict: v}
}

// unique is the unique key a row's uniq field names: set means named, even
// when empty, so the key to read is never nil then.
func unique(uniq Field) []byte {
	if !uniq.Set {
		return nil
	}
	if uniq.Bytes == nil {
		return []byte{}
	}
	return uniq.Bytes
}
