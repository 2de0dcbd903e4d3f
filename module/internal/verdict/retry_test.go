package verdict

import (
	"errors"
	"testing"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

type retryScript struct {
	version         Reply[Field]
	row             Reply[[]Field] // att state prio lane
	due             Reply[Field]
	pending, signal Reply[int64]
	lanes           Reply[struct{}]
}

func (sc retryScript) run(t *testing.T) ([]RetryRead, RetryStep) {
	t.Helper()
	var s RetrySeen
	needs := drive(t, func() RetryRead { return Retry(7, &s).Need }, func(n RetryRead) {
		switch n {
		case RetryFirst:
			s.Version, s.Row, s.Due, s.Pending, s.Signal = wire(sc.version), sc.row, sc.due, sc.pending, sc.signal
			s.Row.Made, s.Due.Made, s.Pending.Made, s.Signal.Made = true, true, true, true
		case RetryLanes:
			s.Lanes = sc.lanes
			s.Lanes.Made = true
		default:
			t.Fatalf("unknown read %d", n)
		}
	})
	return needs, Retry(7, &s)
}

func TestRetry(t *testing.T) {
	t.Parallel()
	delayed := Got([]Field{Str("1"), Str("delayed"), Str("900"), {}})
	due := Got(Str("1700000000000"))
	wrong := errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")
	notDelayed := protocol.ErrRetryNotDelayed
	for name, c := range map[string]struct {
		sc   retryScript
		err  string
		gone bool
		lane bool
		sig  bool
	}{
		"to pending, signalled": {sc: retryScript{row: delayed, due: due}, sig: true},
		"to a lane": {sc: retryScript{row: Got([]Field{Str("1"), Str("delayed"), {}, Str("l1")}), due: due,
			pending: Got(int64(0))}, lane: true},
		"gone":             {sc: retryScript{row: Got([]Field{{}, Str("delayed")}), due: due}, gone: true},
		"not delayed":      {sc: retryScript{row: Got([]Field{Str("1"), Str("pending"), {}, {}}), due: due}, err: notDelayed},
		"not in delayed":   {sc: retryScript{row: delayed}, err: notDelayed},
		"row wrong type":   {sc: retryScript{row: Failed[[]Field](wrong), due: due}, err: wrong.Error()},
		"delayed wrong":    {sc: retryScript{row: delayed, due: Failed[Field](wrong)}, err: wrong.Error()},
		"pending wrong":    {sc: retryScript{row: delayed, due: due, pending: Failed[int64](wrong)}, err: wrong.Error()},
		"state before due": {sc: retryScript{row: Got([]Field{Str("1"), Str("dead"), {}, {}}), due: Failed[Field](wrong)}, err: notDelayed},
		"lane refusal first": {sc: retryScript{row: Got([]Field{Str("1"), Str("delayed"), {}, Str("l1")}), due: due,
			pending: Failed[int64](wrong), lanes: Failed[struct{}](errors.New("NOPERM No permissions to access a key"))},
			err: "NOPERM No permissions to access a key"},
	} {
		_, step := c.sc.run(t)
		switch {
		case c.err != "":
			if step.Err == nil || step.Err.Error() != c.err {
				t.Errorf("%s: got %v, want %s", name, step.Err, c.err)
			}
		case step.Err != nil:
			t.Errorf("%s: refused %v", name, step.Err)
		case step.Verdict.Gone != c.gone || (step.Verdict.Lane != nil) != c.lane || step.Verdict.Signal != c.sig:
			t.Errorf("%s: verdict %+v", name, step.Verdict)
		case !c.gone && step.Verdict.Score != protocol.PendingScore(grammar.RowInt(c.sc.row.Val[2].Bytes, c.sc.row.Val[2].Set, protocol.MaxPriority), 7):
			t.Errorf("%s: score %d", name, step.Verdict.Score)
		}
	}
}
