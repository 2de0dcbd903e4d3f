package verdict

import (
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// What the schedule verbs share (docs/PROTOCOL.md, "Schedules"): a
// schedule's definition, as SCHEDULE.SET checks it and SCHEDULE.FIRE decodes
// it, and its state. A verb's own verdict is in the file named for it.

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
	if name := scheduleSpec(e); name != "" {
		return bad(name)
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

// scheduleSpec checks a definition's kind, spec and tz, in this order, and
// returns the name of the first bad one ("" when all are good): a cron
// spec of 1 to MaxCronSpec bytes with a tz of at most MaxTimeZone, or an
// every's period in ms with no tz.
func scheduleSpec(e [][]byte) string {
	switch string(e[DefKind]) {
	case protocol.ScheduleCron:
		if n := len(e[DefSpec]); n < 1 || n > protocol.MaxCronSpec {
			return "spec"
		}
		if len(e[DefTZ]) > protocol.MaxTimeZone {
			return "tz"
		}
	case protocol.ScheduleEvery:
		if _, ok := grammar.Decimal(e[DefSpec], 1, protocol.MaxScheduleEvery); !ok {
			return "spec"
		}
		if len(e[DefTZ]) != 0 {
			return "tz"
		}
	default:
		return "kind"
	}
	return ""
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
