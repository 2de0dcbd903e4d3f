package verdict

import (
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// FailuresSeen is what FAILURES.INCR reads, in one batch: the fence, GET
// <counter> (not a string: WRONGTYPE), PTTL <counter>.
type FailuresSeen struct {
	Version Reply[Field]
	Counter Reply[Field]
	PTTL    Reply[int64]
}

// FailuresVerdict is what FAILURES.INCR writes: INCR <counter>, whose reply
// must be Count, then PEXPIRE <counter> <ttl> when Expire (the counter had
// no TTL).
type FailuresVerdict struct {
	Count  int64
	Expire bool
}

// FailuresIncr decides EMQ.FAILURES.INCR: the fence, the counter's type, INCR
// predicted with the server's rules (INCR's own texts), then its TTL.
func FailuresIncr(s *FailuresSeen) (FailuresVerdict, error) {
	if err := Fence(s.Version); err != nil {
		return FailuresVerdict{}, err
	}
	if s.Counter.Err != nil {
		return FailuresVerdict{}, s.Counter.Err
	}
	n, err := grammar.PredictIncr(s.Counter.Val.Bytes, s.Counter.Val.Set)
	if err != nil {
		return FailuresVerdict{}, err
	}
	if s.PTTL.Err != nil {
		return FailuresVerdict{}, s.PTTL.Err
	}
	return FailuresVerdict{Count: n, Expire: s.PTTL.Val < 0}, nil
}
