package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// ScheduleSetSeen is what SCHEDULE.SET reads: the fence, then in one batch
// HMGET schedules d:<id> s:<id> and the types of scheddue and schedids
// (ZCARD).
type ScheduleSetSeen struct {
	Version Reply[Field]
	Fields  Reply[[2]Field]
	Due     Reply[int64]
	IDs     Reply[int64]
}

// ScheduleSet decides SCHEDULE.SET at server time now: the refusal, or the
// new state (paused: no ZADD scheddue).
func ScheduleSet(s *ScheduleSetSeen, now int64) (State, error) {
	if err := Fence(s.Version); err != nil {
		return State{}, err
	}
	if s.Fields.Err != nil {
		return State{}, s.Fields.Err
	}
	for _, r := range [...]*Reply[int64]{&s.Due, &s.IDs} {
		if r.Err != nil {
			return State{}, r.Err
		}
	}
	old := ParseState(s.Fields.Val[1])
	if !old.Exists {
		return State{Rev: 1, Last: now, Next: now}, nil
	}
	st := State{Rev: old.Rev + 1, Count: old.Count, Last: old.Last, Next: now}
	if old.Paused {
		st.Next, st.Paused = 0, true
	}
	return st, nil
}

// ScheduleSetArity is SCHEDULE.SET's shape of ARGV: fewer than 18 entries
// is the arity refusal, ARGV[18] not a decimal 0–8 "bad options", then
// anything other than 18 + 2k entries the arity refusal.
func ScheduleSetArity(args [][]byte) error {
	v := protocol.ScheduleSet
	if len(args) < protocol.ScheduleSetFixed {
		return refusal(protocol.ErrArity(v.Name))
	}
	k, ok := grammar.Decimal(args[protocol.ScheduleSetFixed-1], 0, protocol.MaxScheduleOption)
	if !ok {
		return refusal(protocol.ErrBadArg(v.Name, "options"))
	}
	if len(args) != protocol.ScheduleSetFixed+2*int(k) {
		return refusal(protocol.ErrArity(v.Name))
	}
	return nil
}
