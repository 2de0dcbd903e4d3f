package verdict

import "github.com/trafikey/trafikey/internal/protocol"

// ExtendRead is a read EXTEND's verdict asks for.
type ExtendRead uint8

// EXTEND's reads.
const (
	// ExtendNone: the verdict is final.
	ExtendNone ExtendRead = iota
	// ExtendAll: one batch, GET version (the fence), HGET <row> att and
	// ZSCORE active <id>. The row is checked against the caller's ACL first;
	// a denial is the row read's error and the row is not read.
	ExtendAll
	// ExtendCancelled (the job is not in active): HGET <row> cancelled.
	ExtendCancelled
)

// ExtendSeen is what EXTEND has read so far.
type ExtendSeen struct {
	Version Reply[Field]
	Att     Reply[Field]
	Score   Reply[Field]
	// Cancelled is HGET <row> cancelled, read when the job is not active.
	Cancelled Reply[Field]
}

// ExtendStep is EXTEND's verdict, a refusal, or the next read it needs.
type ExtendStep struct {
	Need ExtendRead
	Err  error
	// Gone: the row has no att; reply 0 and write nothing. Otherwise write
	// ZADD active XX <now + lease> <id> and reply the deadline.
	Gone bool
}

// Extend decides EMQ.EXTEND for the caller's token: the fence, the row's att
// (absent: gone; not the token, compared as bytes: EMQSTALE), then the job's
// place in active (absent: EMQSTATE cancelled when the row's cancelled field
// is set, else EMQSTATE not active). ZSCORE types active, the
// one key ZADD writes.
func Extend(token []byte, s *ExtendSeen) ExtendStep {
	if !s.Version.Made {
		return ExtendStep{Need: ExtendAll}
	}
	if err := Fence(s.Version); err != nil {
		return ExtendStep{Err: err}
	}
	if s.Att.Err != nil {
		return ExtendStep{Err: s.Att.Err}
	}
	if !s.Att.Val.Set {
		return ExtendStep{Gone: true}
	}
	if string(s.Att.Val.Bytes) != string(token) {
		return ExtendStep{Err: extendStale}
	}
	if s.Score.Err != nil {
		return ExtendStep{Err: s.Score.Err}
	}
	if !s.Score.Val.Set {
		if !s.Cancelled.Made {
			return ExtendStep{Need: ExtendCancelled}
		}
		return ExtendStep{Err: NotActive(s.Cancelled, extendCancelled, extendNotActive)}
	}
	return ExtendStep{}
}

// EXTEND's refusals of a lost lease, built once: a stale worker's call is common
// and should cost no allocation.
var (
	extendStale     = refusal(protocol.ErrStale(protocol.Extend.Name))
	extendNotActive = refusal(protocol.ErrNotActive(protocol.Extend.Name))
	extendCancelled = refusal(protocol.ErrCancelled(protocol.Extend.Name))
)

// NotActive is the refusal of a job not in active (EXTEND, COMPLETE,
// FAIL): cancelled when its row's cancelled field (HGET, read only on this
// path) is set, else notActive; the read's error first.
func NotActive(field Reply[Field], cancelled, notActive error) error {
	if field.Err != nil {
		return field.Err
	}
	if field.Val.Set {
		return cancelled
	}
	return notActive
}
