package conformance

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testLaneInvariants: a fixed pseudo-random run of every verb over a few
// lanes and pending, checking after each call what the lane keys must
// hold: laneinfo's active counts are the lanes' claimed jobs, lanes holds
// exactly the lanes with waiting or active jobs, turns exactly the ready
// lanes, and meta lanewait the jobs waiting in lanes.
func testLaneInvariants(t *testing.T, env Env) {
	for seed := uint64(1); seed <= 4; seed++ {
		scenario(t, env, "seed "+strconv.FormatUint(seed, 10), func(t *testing.T, q *queue) {
			q.install()
			rng := rand.New(rand.NewPCG(seed, 7))
			lanes := []string{"a", "b", "c\x00", ""}
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
			for step := range 150 {
				var what string
				switch op := rng.IntN(12); op {
				case 0, 1, 2:
					n := 1 + rng.IntN(3)
					jobs := make([]job, n)
					for i := range jobs {
						jobs[i] = job{data: "d", lane: lanes[rng.IntN(len(lanes))], prio: strconv.Itoa(rng.IntN(3))}
						if rng.IntN(4) == 0 {
							jobs[i].delay = "1"
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
						q.must(protocol.Complete, id, token(id), "")
					}
				case 6:
					if id := pick(q.k.Active); id != "" {
						what = "fail " + id
						q.must(protocol.Fail, id, token(id), strconv.Itoa(rng.IntN(2)), "x")
					}
				case 7:
					pause(leaseWait)
					what = "recover and promote"
					q.must(protocol.Recover, "10")
					q.must(protocol.Promote, "10")
				case 8:
					l := lanes[rng.IntN(len(lanes)-1)]
					if id := pick(q.laneKey(l)); id != "" {
						what = "remove " + id
						q.must(protocol.Remove, id, "0")
					} else if id := pick(q.k.Dead); id != "" {
						what = "requeue " + id
						q.must(protocol.Requeue, id)
					}
				case 9:
					l := lanes[rng.IntN(len(lanes)-1)]
					what = "lanecap " + l
					q.must(protocol.LaneCap, l, strconv.Itoa(rng.IntN(3)))
				case 10:
					l := lanes[rng.IntN(len(lanes)-1)]
					what = "lanepause " + l
					q.must(protocol.LanePause, l)
				case 11:
					l := lanes[rng.IntN(len(lanes)-1)]
					what = "laneresume " + l
					q.must(protocol.LaneResume, l)
				}
				q.laneInvariants(lanes[:len(lanes)-1], "step "+strconv.Itoa(step)+": "+what)
			}
		})
	}
}

// laneInvariants checks the lane keys against the jobs of the queue.
func (q *queue) laneInvariants(lanes []string, where string) {
	q.t.Helper()
	active, err := q.cmd("ZRANGE", q.k.Active, "0", "-1").AsStrSlice()
	require.NoError(q.t, err)
	claimed := map[string]int64{}
	for _, id := range active {
		l, err := q.cmd("HGET", q.k.Job(id), "lane").ToString()
		if err == nil {
			claimed[l]++
		}
	}
	info := map[string]string{}
	fields := q.laneinfo()
	for i := 0; i+1 < len(fields); i += 2 {
		info[fields[i]] = fields[i+1]
	}
	var waiting int64
	var wantLanes, wantTurns []string
	for _, l := range lanes {
		w, err := q.cmd("ZCARD", q.laneKey(l)).AsInt64()
		require.NoError(q.t, err)
		waiting += w
		a := claimed[l]
		if a > 0 {
			require.Equal(q.t, strconv.FormatInt(a, 10), info[protocol.FieldLaneActive+l], "%s: active:%q", where, l)
		} else {
			require.NotContains(q.t, info, protocol.FieldLaneActive+l, "%s: active:%q absent at 0", where, l)
		}
		c, _ := strconv.ParseInt(info[protocol.FieldLaneCap+l], 10, 64)
		paused := info[protocol.FieldLanePaused+l] == "1"
		if w+a > 0 {
			wantLanes = append(wantLanes, l)
		}
		if !paused && w > 0 && (c == 0 || a < c) {
			wantTurns = append(wantTurns, l)
		}
	}
	gotLanes, err := q.cmd("ZRANGE", q.fixed(protocol.SuffixLanes), "0", "-1").AsStrSlice()
	require.NoError(q.t, err)
	require.ElementsMatch(q.t, wantLanes, gotLanes, "%s: lanes", where)
	gotTurns, err := q.cmd("ZRANGE", q.fixed(protocol.SuffixTurns), "0", "-1").AsStrSlice()
	require.NoError(q.t, err)
	require.ElementsMatch(q.t, wantTurns, gotTurns, "%s: turns", where)
	lw, err := q.cmd("HGET", q.k.Meta, protocol.MetaLaneWait).ToString()
	if err != nil {
		lw = "0"
	}
	require.Equal(q.t, strconv.FormatInt(waiting, 10), lw, "%s: lanewait", where)
	q.laneSetsInvariant(where)
}

// laneSetsInvariant checks meta lanesets: it reads (absent: 0) as the
// number of lanes with a cap or a pause in laneinfo.
func (q *queue) laneSetsInvariant(where string) {
	q.t.Helper()
	v, err := q.cmd("HGET", q.k.Meta, protocol.MetaLaneSets).ToString()
	if valkey.IsValkeyNil(err) {
		v, err = "0", nil
	}
	require.NoError(q.t, err)
	require.Equal(q.t, strconv.Itoa(q.lanesWithSettings()), v, "%s: lanesets", where)
}

// lanesWithSettings counts the lanes laneinfo gives a cap above 0 or a
// pause.
func (q *queue) lanesWithSettings() int {
	q.t.Helper()
	fields := q.laneinfo()
	set := map[string]bool{}
	for i := 0; i+1 < len(fields); i += 2 {
		f, v := fields[i], fields[i+1]
		if l, ok := strings.CutPrefix(f, protocol.FieldLaneCap); ok {
			if c, err := strconv.ParseInt(v, 10, 64); err == nil && c > 0 {
				set[l] = true
			}
		} else if l, ok := strings.CutPrefix(f, protocol.FieldLanePaused); ok && v == "1" {
			set[l] = true
		}
	}
	return len(set)
}
