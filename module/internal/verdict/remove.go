package verdict

import "github.com/trafikey/trafikey/internal/protocol"

// This file holds REMOVE's decisions (internal/lua/remove.lua): which jobs a call
// may take, and what each one taken does to its set, its parent, its
// waiters and the counter.

// RemoveCheck is REMOVE's verdict on a job's row as read (its state field,
// present when Set): an active job refuses the call, and a waiting parent
// refuses it without cascade (root only; a descendant is only ever reached
// with cascade).
func RemoveCheck(state Field, cascade bool) error {
	switch {
	case state.Is(protocol.StateActive):
		return removeActive
	case state.Is(protocol.StateWaiting) && !cascade:
		return removeHasChildren
	}
	return nil
}

// RemoveSet names the set a removed job leaves.
type RemoveSet int8

// The sets of a removed job, by state: RemoveNone for a state that names
// no set.
const (
	RemoveNone RemoveSet = iota - 1
	RemovePending
	RemoveDelayed
	RemoveDead
	RemoveWaiting
	RemoveCompleted
	// RemoveLane: a pending job with a lane leaves lane:<l>.
	RemoveLane
)

// RemoveJob is one job of a removal as read: its state field, lane (valid
// or nil) and parent (a canonical id or nil); InRemoval reports whether its
// parent is removed by the same call.
type RemoveJob struct {
	State     Field
	Lane      []byte
	Parent    []byte
	InRemoval bool
}

// RemoveMove is what the call does with one job.
type RemoveMove struct {
	// Set is the set it leaves (RemoveLane: its lane's, with one waiting
	// job less in the lane accounting).
	Set RemoveSet
	// Unfinished: it was pending, delayed or waiting, so it finishes now:
	// its waiters get outcome r, and Tell: its parent, waiting outside the
	// removal, is told (removed).
	Unfinished, Tell bool
}

// RemovePlan decides each job's move and the number counted in stats
// removed (a retained completed job is counted by completed already).
func RemovePlan(jobs []RemoveJob, out []RemoveMove) ([]RemoveMove, int64) {
	out = out[:0]
	n := int64(0)
	for _, j := range jobs {
		var m RemoveMove
		state := string(j.State.Bytes)
		if !j.State.Set {
			state = ""
		}
		switch state {
		case protocol.StatePending, protocol.StateDelayed, protocol.StateWaiting:
			m.Unfinished = true
			m.Tell = j.Parent != nil && !j.InRemoval
		}
		switch state {
		case protocol.StatePending:
			m.Set = RemovePending
			if j.Lane != nil {
				m.Set = RemoveLane
			}
		case protocol.StateDelayed:
			m.Set = RemoveDelayed
		case protocol.StateDead:
			m.Set = RemoveDead
		case protocol.StateWaiting:
			m.Set = RemoveWaiting
		case protocol.StateCompleted:
			m.Set = RemoveCompleted
		default:
			m.Set = RemoveNone
		}
		if state != protocol.StateCompleted {
			n++
		}
		out = append(out, m)
	}
	return out, n
}

// REMOVE's refusals of a job's state, built once.
var (
	removeActive      = refusal(protocol.ErrRemoveActive)
	removeHasChildren = refusal(protocol.ErrRemoveHasChildren)
)
