package conformance

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// flowRun runs a fixed pseudo-random sequence of flows (trees of up to
// three levels, policies, lanes, retention) through every job verb, and
// checks the queue with valkeytest.QueueProblems after each call.
func (q *queue) flowRun(seed uint64) {
	t := q.t
	q.install()
	rng := rand.New(rand.NewPCG(seed, 11))
	policies := []string{"", protocol.OnFailIgnore, protocol.OnFailContinue, protocol.OnFailFail}
	pick := func(key string) string {
		ids, err := q.cmd("ZRANGE", key, "0", "-1").AsStrSlice()
		require.NoError(t, err)
		if len(ids) == 0 {
			return ""
		}
		return ids[rng.IntN(len(ids))]
	}
	token := func(id string) string {
		v, _ := q.cmd("HGET", q.k.Job(id), "att").ToString()
		return v
	}
	for step := range 200 {
		var what string
		switch op := rng.IntN(12); op {
		case 0, 1, 2:
			n := 1 + rng.IntN(6)
			jobs := make([]job, n)
			for i := range jobs {
				jobs[i] = job{data: "d", attempts: strconv.Itoa(1 + rng.IntN(2))}
				if i > 0 && rng.IntN(4) > 0 {
					p := 1 + rng.IntN(i)
					if jobs[p-1].delay == "" {
						jobs[i].parent = strconv.Itoa(p)
						jobs[i].onfail = policies[rng.IntN(len(policies))]
					}
				}
				if rng.IntN(5) == 0 {
					jobs[i].lane = "l"
				}
				if rng.IntN(6) == 0 {
					jobs[i].delay = "1"
				}
				if rng.IntN(3) == 0 {
					jobs[i].wait = "60000"
				}
			}
			what = "add"
			q.add(jobs...)
		case 3, 4:
			lease := 600000
			if rng.IntN(3) == 0 {
				lease = 1
			}
			what = "claim"
			q.claim(lease, 1+rng.IntN(4))
		case 5:
			if id := pick(q.k.Active); id != "" {
				what = "complete " + id
				q.must(protocol.Complete, id, token(id), strings.Repeat("r", rng.IntN(3)))
			}
		case 6:
			var ts []triple
			for range 1 + rng.IntN(3) {
				if id := pick(q.k.Active); id != "" && !strings.Contains(what, " "+id+" ") {
					what += " " + id + " "
					ts = append(ts, triple{id, token(id), strings.Repeat("r", rng.IntN(2))})
				}
			}
			if len(ts) > 0 {
				what = "completemany" + what
				q.must(protocol.CompleteMany, manyResults(ts...)...)
			}
		case 7:
			if id := pick(q.k.Active); id != "" {
				what = "fail " + id
				q.must(protocol.Fail, id, token(id), strconv.Itoa(rng.IntN(2)), "x")
			}
		case 8:
			pause(leaseWait)
			what = "recover and promote"
			q.must(protocol.Recover, "10")
			q.must(protocol.Promote, "10")
		case 9:
			for _, key := range []string{q.waitingKey(), q.k.Pending, q.k.Dead, q.completedKey()} {
				if id := pick(key); id != "" {
					what = "remove " + id
					r := q.call(protocol.Remove, id, "1")
					require.True(t, r == Int(1) || r == Err(protocol.ErrRemoveActive), "remove %s: %s", id, r)
					break
				}
			}
		case 10:
			if id := pick(q.k.Dead); id != "" {
				what = "requeue " + id
				q.must(protocol.Requeue, id)
			}
		case 11:
			what = "retain and trim"
			q.must(protocol.Retain, strconv.Itoa(rng.IntN(2)), strconv.Itoa(rng.IntN(3)), "0", strconv.Itoa(rng.IntN(3)), "0")
			q.must(protocol.Trim, strconv.Itoa(1+rng.IntN(3)))
		}
		problems, err := valkeytest.QueueProblems(t.Context(), q.env.Server, q.name)
		require.NoError(t, err)
		require.Empty(t, problems, "step %d: %s", step, what)
	}
}
