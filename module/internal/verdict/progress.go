package verdict

import "github.com/trafikey/trafikey/internal/protocol"

// ProgressRead is a read PROGRESS's verdict asks for.
type ProgressRead uint8

// PROGRESS's reads.
const (
	// ProgressNone: the verdict is final.
	ProgressNone ProgressRead = iota
	// ProgressFirst: one batch, GET version (the fence), then HGET <row> att
	// (the row is checked against the caller's ACL first: a denial is this
	// read's error, and the row is not read).
	ProgressFirst
)

// ProgressSeen is what PROGRESS has read so far.
type ProgressSeen struct {
	Version Reply[Field]
	Att     Reply[Field]
}

// ProgressVerdict is what PROGRESS writes and replies.
type ProgressVerdict struct {
	// Gone: the row is absent; reply 0 and write nothing. Otherwise HSET
	// <row> prog <value> and reply 1.
	Gone bool
}

// ProgressStep is PROGRESS's verdict, a refusal, or the next read it needs.
type ProgressStep struct {
	Need    ProgressRead
	Err     error
	Verdict ProgressVerdict
}

// Progress decides EMQ.PROGRESS with the caller's token: the fence, then the
// row (gone, EMQSTALE). HGET types the row HSET writes.
func Progress(token []byte, s *ProgressSeen) ProgressStep {
	if !s.Version.Made {
		return ProgressStep{Need: ProgressFirst}
	}
	if err := Fence(s.Version); err != nil {
		return ProgressStep{Err: err}
	}
	if s.Att.Err != nil {
		return ProgressStep{Err: s.Att.Err}
	}
	if !s.Att.Val.Set {
		return ProgressStep{Verdict: ProgressVerdict{Gone: true}}
	}
	if string(s.Att.Val.Bytes) != string(token) {
		return ProgressStep{Err: refusal(protocol.ErrStale(protocol.Progress.Name))}
	}
	return ProgressStep{}
}
