package verdict

// ClaimRead is a read CLAIM's verdict asks for.
type ClaimRead uint8

// CLAIM's reads, in order.
const (
	// ClaimNone: the verdict is final.
	ClaimNone ClaimRead = iota
	// ClaimFirst: one batch, GET version (the fence), HGET meta paused,
	// ZRANGE pending 0 <count-1> and ZCARD active.
	ClaimFirst
	// ClaimRows: one batch, HMGET <row> att data for each member of pending
	// that is a JobMember, in order. The rows are checked against the
	// caller's ACL first; a denied row is its read's error (and it and the
	// rows after it are not read).
	ClaimRows
)

// ClaimSeen is what CLAIM has read so far.
type ClaimSeen struct {
	Version Reply[Field]
	Paused  Reply[Field]
	// Pending are the members at the head of pending, in order.
	Pending Reply[[][]byte]
	Active  Reply[int64]
	// Rows holds each member's att (HMGET's first field), one entry per
	// member of Pending; the entries of members that are not ids stay unmade.
	Rows []Reply[Field]
	// Jobs is scratch for the verdict's Jobs (its backing array is reused).
	Jobs []ClaimJob
}

// ClaimJob is one job the claim takes.
type ClaimJob struct {
	// Member is its index in ClaimSeen.Pending.
	Member int
	// Attempt is HINCRBY <row> att 1's predicted reply: the attempt token,
	// and the att the native executor writes (HSET row … att <Attempt>).
	Attempt int64
}

// ClaimVerdict is what CLAIM writes and replies.
type ClaimVerdict struct {
	// Empty: the queue is paused or nothing is pending; reply the empty
	// array and write nothing.
	Empty bool
	// Jobs are the members whose row is present, in pending order: each gets
	// att + 1, state active and a place in active. Every member of Pending is
	// popped; the others are dropped.
	Jobs []ClaimJob
}

// ClaimStep is CLAIM's verdict, a refusal, or the next read it needs.
type ClaimStep struct {
	Need    ClaimRead
	Err     error
	Verdict ClaimVerdict
}

// Claim decides EMQ.CLAIM, in the order of lua/claim.lua: the fence; the
// pause flag (exactly "1": empty); the head of pending (none: empty); each
// row in pending order (WRONGTYPE; att predicted for HINCRBY; no att: the
// member is dropped); then active typed.
func Claim(s *ClaimSeen) ClaimStep {
	if !s.Version.Made {
		return ClaimStep{Need: ClaimFirst}
	}
	if err := Fence(s.Version); err != nil {
		return ClaimStep{Err: err}
	}
	if s.Paused.Err != nil {
		return ClaimStep{Err: s.Paused.Err}
	}
	if s.Paused.Val.Is("1") {
		return ClaimStep{Verdict: ClaimVerdict{Empty: true}}
	}
	if s.Pending.Err != nil {
		return ClaimStep{Err: s.Pending.Err}
	}
	members := s.Pending.Val
	if len(members) == 0 {
		return ClaimStep{Verdict: ClaimVerdict{Empty: true}}
	}
	if len(s.Rows) < len(members) {
		return ClaimStep{Need: ClaimRows}
	}
	jobs := s.Jobs[:0]
	for i, m := range members {
		if !JobMember(m) {
			continue
		}
		row := s.Rows[i]
		if !row.Made {
			return ClaimStep{Need: ClaimRows}
		}
		if row.Err != nil {
			return ClaimStep{Err: row.Err}
		}
		if !row.Val.Set {
			continue
		}
		att, err := predict(row.Val, 1)
		if err != nil {
			return ClaimStep{Err: err}
		}
		jobs = append(jobs, ClaimJob{Member: i, Attempt: att})
	}
	if s.Active.Err != nil {
		return ClaimStep{Err: s.Active.Err}
	}
	return ClaimStep{Verdict: ClaimVerdict{Jobs: jobs}}
}
