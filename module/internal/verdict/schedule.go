package verdict

import (
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// The schedule verbs (docs/PROTOCOL.md, "Schedules"): a schedule's
// definition, as SCHEDULE.SET checks it and SCHEDULE.FIRE decodes it, its
// state, and the verdicts of the verbs that read them.

// The elements of a definition (SCHEDULE.SET's ARGV after the id), by index.
const (
	DefKind = iota
	DefSpec
	DefTZ
	DefJitter
	DefStart
	DefEnd
	DefLimit
	DefGrace
	DefCatchup
	DefData
	DefPriority
	DefAttempts
	DefBackoff
	DefBackoffMS
	DefUnique
	DefUniqueTTL
	DefOptions // k, then k pairs name value
)

// Def is a definition whose values passed SCHEDULE.SET's checks. Elems are
// its elements (views of the bytes checked); the numbers are theirs.
type Def struct {
	Elems                                     [][]byte
	Jitter, Start, End, Limit, Grace, Catchup int64
	// Options is k, the number of option pairs.
	Options int
}

// Unique is the template's unique key, empty for none.
func (d *Def) Unique() []byte { return d.Elems[DefUnique] }

// Option is the i-th option pair's name and value.
func (d *Def) Option(i int) (name, value []byte) {
	return d.Elems[DefOptions+1+2*i], d.Elems[DefOptions+2+2*i]
}

// ScheduleID reports whether b is a schedule id: 1–128 bytes of the bus
// names' alphabet.
func ScheduleID(b []byte) bool { return len(b) <= protocol.MaxScheduleID && protocol.ValidBusName(b) }

// ScheduleValues checks a definition's elements (SCHEDULE.SET's ARGV after
// the id, whose count the shape checked: 17 + 2k) in SCHEDULE.SET's order
// and returns it, or the refusal ERR EMQ <verb> bad <name> of the first
// value out of its domain.
func ScheduleValues(verb string, e [][]byte) (Def, error) {
	bad := func(name string) (Def, error) { return Def{}, refusal(protocol.ErrBadArg(verb, name)) }
	d := Def{Elems: e}
	var ok bool
	cron := false
	switch string(e[DefKind]) {
	case protocol.ScheduleCron:
		cron = true
	case protocol.ScheduleEvery:
	default:
		return bad("kind")
	}
	if cron {
		if n := len(e[DefSpec]); n < 1 || n > protocol.MaxCronSpec {
			return bad("spec")
		}
		if len(e[DefTZ]) > protocol.MaxTimeZone {
			return bad("tz")
		}
	} else {
		if _, ok = grammar.Decimal(e[DefSpec], 1, protocol.MaxScheduleEvery); !ok {
			return bad("spec")
		}
		if len(e[DefTZ]) != 0 {
			return bad("tz")
		}
	}
	if d.Jitter, ok = grammar.Decimal(e[DefJitter], 0, protocol.MaxScheduleJitter); !ok {
		return bad("jitter")
	}
	if d.Start, ok = grammar.Decimal(e[DefStart], 0, protocol.MaxScheduleTime); !ok {
		return bad("start")
	}
	if d.End, ok = grammar.Decimal(e[DefEnd], 0, protocol.MaxScheduleTime); !ok || (d.End > 0 && d.End < d.Start) {
		return bad("end")
	}
	if d.Limit, ok = grammar.Decimal(e[DefLimit], 0, protocol.MaxScheduleLimit); !ok {
		return bad("limit")
	}
	if d.Grace, ok = grammar.Decimal(e[DefGrace], 0, protocol.MaxScheduleGrace); !ok {
		return bad("grace")
	}
	if d.Catchup, ok = grammar.Decimal(e[DefCatchup], 0, protocol.MaxScheduleCatch); !ok {
		return bad("catchup")
	}
	k, ok := grammar.Decimal(e[DefOptions], 0, protocol.MaxScheduleOption)
	if !ok {
		return bad("options")
	}
	if len(e) != DefOptions+1+2*int(k) {
		return Def{}, refusal(protocol.ErrArity(verb))
	}
	d.Options = int(k)
	// the option names (ADD's columns but parent, onfail and due, each
	// once), then the template as one job of ADD with delay 0, in ADD's
	// order
	var add [2 + 2*protocol.MaxScheduleOption + protocol.AddArgsPerJob][]byte
	args := append(add[:0], digitOne, e[DefOptions])
	for i := range d.Options {
		name, _ := d.Option(i)
		if n := string(name); n == protocol.AddOptionParent || n == protocol.AddOptionOnFail || n == protocol.AddOptionDue {
			return bad("option")
		}
		args = append(args, name)
	}
	cols, err := AddOptionsOf(verb, args[2:])
	if err != nil {
		return Def{}, err
	}
	args = append(args, e[DefData], e[DefPriority], digitZero, e[DefAttempts], e[DefBackoff], e[DefBackoffMS], e[DefUnique], e[DefUniqueTTL])
	for i := range d.Options {
		_, value := d.Option(i)
		args = append(args, value)
	}
	var job [1]AddJob
	if _, err := AddValuesOf(verb, args, 1, d.Options, cols, job[:0]); err != nil {
		return Def{}, err
	}
	return d, nil
}

var digitOne, digitZero = []byte("1"), []byte("0")

// DecodeList is protocol.EncodeList's inverse over bytes: it appends the
// elements (views of b) to elems, or reports false when b is not an
// encoding.
func DecodeList(b []byte, elems [][]byte) ([][]byte, bool) {
	for len(b) > 0 {
		colon := -1
		for i, c := range b {
			if c == ':' {
				colon = i
				break
			}
		}
		if colon <= 0 || colon > protocol.MaxDecimalSize || (b[0] == '0' && colon > 1) {
			return elems, false
		}
		n := 0
		for _, c := range b[:colon] {
			if c < '0' || c > '9' {
				return elems, false
			}
			n = n*10 + int(c-'0')
		}
		if n > len(b)-colon-1 {
			return elems, false
		}
		elems = append(elems, b[colon+1:colon+1+n:colon+1+n])
		b = b[colon+1+n:]
	}
	return elems, true
}

// DecodeDef decodes a stored definition: a list of 17 + 2k elements whose
// values pass SCHEDULE.SET's checks. elems is memory for its elements.
func DecodeDef(f Field, elems [][]byte) (Def, bool) {
	if !f.Set {
		return Def{}, false
	}
	e, ok := DecodeList(f.Bytes, elems[:0])
	if !ok || len(e) < DefOptions+1 {
		return Def{Elems: e}, false
	}
	d, err := ScheduleValues(protocol.ScheduleSet.Name, e)
	if err != nil {
		return Def{Elems: e}, false
	}
	return d, true
}

// State is a schedule's state, s:<id>: rev count last next paused, each
// part read like a row's number.
type State struct {
	// Exists: the state field is present.
	Exists                 bool
	Rev, Count, Last, Next int64
	Paused                 bool
}

// ParseState reads a state field: its parts separated by single spaces,
// each a canonical decimal of at most 15 digits or read as 0, a missing
// part 0; paused when the fifth reads as 1.
func ParseState(f Field) State {
	s := State{Exists: f.Set}
	if !f.Set {
		return s
	}
	var parts [5]int64
	b := f.Bytes
	for i := range parts {
		end := len(b)
		for j, c := range b {
			if c == ' ' {
				end = j
				break
			}
		}
		parts[i] = grammar.RowInt(b[:end], true, grammar.MaxRowInt)
		if end == len(b) {
			break
		}
		b = b[end+1:]
	}
	s.Rev, s.Count, s.Last, s.Next, s.Paused = parts[0], parts[1], parts[2], parts[3], parts[4] == 1
	return s
}

// AppendState appends a state's encoding, rev count last next paused.
func AppendState(dst []byte, s State) []byte {
	dst = strconv.AppendInt(dst, s.Rev, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, s.Count, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, s.Last, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, s.Next, 10)
	if s.Paused {
		return append(dst, " 1"...)
	}
	return append(dst, " 0"...)
}

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

// SchedulePauseSeen is what SCHEDULE.PAUSE and SCHEDULE.RESUME read: the
// fence, then in one batch HGET schedules s:<id> and the type of scheddue.
type SchedulePauseSeen struct {
	Version Reply[Field]
	State   Reply[Field]
	Due     Reply[int64]
}

// SchedulePause decides SCHEDULE.PAUSE (pause) or SCHEDULE.RESUME at server
// time now: change reports whether the state changes (reply 1), and st is
// the new state.
func SchedulePause(s *SchedulePauseSeen, pause bool, now int64) (st State, change bool, err error) {
	if err := Fence(s.Version); err != nil {
		return State{}, false, err
	}
	if s.State.Err != nil {
		return State{}, false, s.State.Err
	}
	old := ParseState(s.State.Val)
	if !old.Exists || old.Paused == pause {
		return State{}, false, nil
	}
	if s.Due.Err != nil {
		return State{}, false, s.Due.Err
	}
	st = State{Rev: old.Rev + 1, Count: old.Count, Last: old.Last, Paused: pause}
	if !pause {
		st.Last, st.Next = max(old.Last, now), now
	}
	return st, true, nil
}

// ScheduleRemoveSeen is what SCHEDULE.REMOVE reads: the fence, then in one
// batch HEXISTS schedules s:<id> and the types of scheddue and schedids.
type ScheduleRemoveSeen struct {
	Version Reply[Field]
	Exists  Reply[int64]
	Due     Reply[int64]
	IDs     Reply[int64]
}

// ScheduleRemove decides SCHEDULE.REMOVE: the reply (1 when the schedule
// existed), or the refusal. Its writes are made whatever the reply.
func ScheduleRemove(s *ScheduleRemoveSeen) (int64, error) {
	if err := Fence(s.Version); err != nil {
		return 0, err
	}
	for _, r := range [...]*Reply[int64]{&s.Exists, &s.Due, &s.IDs} {
		if r.Err != nil {
			return 0, r.Err
		}
	}
	return min(s.Exists.Val, 1), nil
}

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
