package verdict

// InspectRead is a read INSPECT's verdict asks for.
type InspectRead uint8

// INSPECT's reads.
const (
	// InspectNone: the verdict is final.
	InspectNone InspectRead = iota
	// InspectFirst: one batch, GET version (the fence), HMGET <row>
	// <protocol.InspectFields…>, LRANGE <row>:logs 0 -1. The row and the
	// logs are checked against the caller's ACL first: a denial is the error
	// of the key's read, and it is not read.
	InspectFirst
)

// InspectSeen is what INSPECT has read.
type InspectSeen struct {
	Version Reply[Field]
	Row     Reply[[]Field]
	Logs    Reply[[][]byte]
}

// InspectVerdict is INSPECT's reply: null when Gone, else the fields that
// are set, name then value in protocol.InspectFields order, then "logs" and
// the log lines.
type InspectVerdict struct {
	Gone   bool
	Fields []Field
	Logs   [][]byte
}

// InspectStep is INSPECT's verdict, a refusal, or the next read it needs.
type InspectStep struct {
	Need    InspectRead
	Err     error
	Verdict InspectVerdict
}

// inspectAtt is the index of att in protocol.InspectFields: a row is present
// when its att is.
const inspectAtt = 2

// The indexes in protocol.InspectFields of the fields a row may leave out
// at their defaults.
const (
	inspectState    = 0
	inspectMax      = 3
	inspectPriority = 4
	inspectBackoff  = 5
)

// Inspect decides EMQ.INSPECT, in the order of internal/lua/inspect.lua: the fence,
// the row (absent: null), the logs.
func Inspect(s *InspectSeen) InspectStep {
	if !s.Version.Made {
		return InspectStep{Need: InspectFirst}
	}
	if err := Fence(s.Version); err != nil {
		return InspectStep{Err: err}
	}
	if s.Row.Err != nil {
		return InspectStep{Err: s.Row.Err}
	}
	if !s.Row.Val[inspectAtt].Set {
		return InspectStep{Verdict: InspectVerdict{Gone: true}}
	}
	if s.Logs.Err != nil {
		return InspectStep{Err: s.Logs.Err}
	}
	// a field the row leaves out at its default replies as the default
	f := s.Row.Val
	f[inspectState] = RowState(f[inspectState], f[inspectAtt])
	f[inspectMax] = RowMax(f[inspectMax])
	f[inspectPriority] = RowPriority(f[inspectPriority])
	f[inspectBackoff] = RowBackoff(f[inspectBackoff])
	return InspectStep{Verdict: InspectVerdict{Fields: f, Logs: s.Logs.Val}}
}
