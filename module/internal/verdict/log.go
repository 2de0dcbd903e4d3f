package verdict

import "github.com/trafikey/trafikey/internal/protocol"

// LogRead is a read LOG's verdict asks for.
type LogRead uint8

// LOG's reads.
const (
	// LogNone: the verdict is final.
	LogNone LogRead = iota
	// LogFirst: one batch, GET version (the fence), HGET <row> att, LLEN
	// <row>:logs. The row and the logs are checked against the caller's ACL
	// first: a denial is the error of the key's read, and it is not read.
	LogFirst
)

// LogSeen is what LOG has read so far.
type LogSeen struct {
	Version Reply[Field]
	Att     Reply[Field]
	Len     Reply[int64]
}

// LogVerdict is what LOG writes and replies.
type LogVerdict struct {
	// Gone: the row is absent; reply 0 and write nothing.
	Gone bool
	// Pushed is the predicted reply of RPUSH logs <line>.
	Pushed int64
	// Trim: the list passes cap, so LTRIM logs -cap -1 follows.
	Trim bool
	// Reply is the log's length after the writes.
	Reply int64
}

// LogStep is LOG's verdict, a refusal, or the next read it needs.
type LogStep struct {
	Need    LogRead
	Err     error
	Verdict LogVerdict
}

// Log decides EMQ.LOG with the caller's token and the cap on the log's
// length, in the order of internal/lua/log.lua: the fence; the row (gone, EMQSTALE);
// the logs' type. The line is appended to the current attempt's log, which
// keeps its last cap lines.
func Log(token []byte, cap int64, s *LogSeen) LogStep {
	if !s.Version.Made {
		return LogStep{Need: LogFirst}
	}
	if err := Fence(s.Version); err != nil {
		return LogStep{Err: err}
	}
	if s.Att.Err != nil {
		return LogStep{Err: s.Att.Err}
	}
	if !s.Att.Val.Set {
		return LogStep{Verdict: LogVerdict{Gone: true}}
	}
	if string(s.Att.Val.Bytes) != string(token) {
		return LogStep{Err: refusal(protocol.ErrStale(protocol.Log.Name))}
	}
	if s.Len.Err != nil {
		return LogStep{Err: s.Len.Err}
	}
	n := s.Len.Val + 1
	if n > cap {
		return LogStep{Verdict: LogVerdict{Pushed: n, Trim: true, Reply: cap}}
	}
	return LogStep{Verdict: LogVerdict{Pushed: n, Reply: n}}
}
