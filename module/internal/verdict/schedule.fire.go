package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// FireArgs are SCHEDULE.FIRE's values.
type FireArgs struct {
	Rev, From, Upto, Next int64
	// Times and Jitters are the n occurrences' times and jitters.
	Times, Jitters []int64
}

// FireValues checks SCHEDULE.FIRE's values after the id (args is ARGV, its
// count checked: 6 + 2n) in order and appends the occurrences to a's
// slices: bad rev, from, upto, next, then per pair bad time (above from and
// the previous time, at most upto) and bad jitter.
func FireValues(args [][]byte, n int, a *FireArgs) error {
	bad := func(name string) error { return refusal(protocol.ErrBadArg(protocol.ScheduleFire.Name, name)) }
	var ok bool
	if a.Rev, ok = grammar.Decimal(args[1], 1, protocol.MaxScheduleLimit); !ok {
		return bad("rev")
	}
	if a.From, ok = grammar.Decimal(args[2], 0, protocol.MaxScheduleTime); !ok {
		return bad("from")
	}
	if a.Upto, ok = grammar.Decimal(args[3], a.From, protocol.MaxScheduleTime); !ok {
		return bad("upto")
	}
	if a.Next, ok = grammar.Decimal(args[4], 0, protocol.MaxScheduleTime); !ok || (a.Next != 0 && a.Next <= a.Upto) {
		return bad("next")
	}
	prev := a.From
	for i := range n {
		t, ok := grammar.Decimal(args[6+2*i], prev+1, a.Upto)
		if !ok {
			return bad("time")
		}
		j, ok := grammar.Decimal(args[7+2*i], 0, protocol.MaxScheduleJitter)
		if !ok {
			return bad("jitter")
		}
		a.Times, a.Jitters = append(a.Times, t), append(a.Jitters, j)
		prev = t
	}
	return nil
}

// FireArity is SCHEDULE.FIRE's shape of ARGV: fewer than 6 entries is the
// arity refusal, ARGV[6] not a count 0–1000 "bad count", and then anything
// other than 6 + 2n entries the arity refusal. It returns n.
func FireArity(args [][]byte) (int, error) {
	v := protocol.ScheduleFire
	if len(args) < 6 {
		return 0, refusal(protocol.ErrArity(v.Name))
	}
	n, ok := grammar.Decimal(args[5], 0, protocol.MaxScheduleFire)
	if !ok {
		return 0, refusal(protocol.ErrBadArg(v.Name, "count"))
	}
	if len(args) != 6+2*int(n) {
		return 0, refusal(protocol.ErrArity(v.Name))
	}
	return int(n), nil
}

// FireSeen is what SCHEDULE.FIRE's own reads found: the fence and HMGET
// schedules d:<id> s:<id>.
type FireSeen struct {
	Version Reply[Field]
	Fields  Reply[[2]Field]
}

// FireVerdict is SCHEDULE.FIRE's decision before the jobs' reads.
type FireVerdict struct {
	Def   Def
	State State
	// Unique: the template has a unique key, whose holder the handler
	// reads next (no job when it is held).
	Unique bool
	// Next is the schedule's next due time after the call, 0 when it is
	// finished (ZREM scheddue).
	Next int64
}

// Fire decides SCHEDULE.FIRE's own checks at server time now, in order:
// the fence, the schedule's fields (WRONGTYPE), the state (absent, paused,
// another rev or last: EMQSTALE), upto after now (not due), the definition
// (broken), the occurrences against the definition (outside). elems is
// memory for the definition's elements.
func Fire(s *FireSeen, a *FireArgs, now int64, elems [][]byte) (FireVerdict, error) {
	if err := Fence(s.Version); err != nil {
		return FireVerdict{}, err
	}
	if s.Fields.Err != nil {
		return FireVerdict{}, s.Fields.Err
	}
	st := ParseState(s.Fields.Val[1])
	if !st.Exists || st.Paused || st.Rev != a.Rev || st.Last != a.From {
		return FireVerdict{}, refusal(protocol.ErrScheduleChanged)
	}
	if a.Upto > now {
		return FireVerdict{}, refusal(protocol.ErrScheduleNotDue)
	}
	d, ok := DecodeDef(s.Fields.Val[0], elems)
	if !ok {
		return FireVerdict{}, refusal(protocol.ErrScheduleBroken)
	}
	n := int64(len(a.Times))
	if n > 0 {
		outside := d.Limit > 0 && st.Count+n > d.Limit
		for i, t := range a.Times {
			outside = outside || (d.Start > 0 && t < d.Start) || (d.End > 0 && t > d.End) || a.Jitters[i] > d.Jitter
		}
		if outside {
			return FireVerdict{}, refusal(protocol.ErrScheduleOutside)
		}
	}
	v := FireVerdict{Def: d, State: st, Unique: n > 0 && len(d.Unique()) > 0, Next: a.Next}
	if (d.Limit > 0 && st.Count+n >= d.Limit) || (d.End > 0 && a.Next > d.End) {
		v.Next = 0
	}
	v.State = State{Exists: true, Rev: st.Rev, Count: st.Count + n, Last: a.Upto, Next: v.Next}
	return v, nil
}
