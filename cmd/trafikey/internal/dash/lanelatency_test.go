package dash

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// pageLanes reads the queue page of name and returns its lanes by name,
// with the times just before and after the read: a lane's latency_ms is
// its next job's age at some moment between.
func pageLanes(t *testing.T, srv *httptest.Server, name string) (lanes map[string]laneRow, before, after time.Time) {
	t.Helper()
	before = time.Now()
	code, body, _ := get(t, srv, "/api/queues/"+name)
	after = time.Now()
	require.Equal(t, http.StatusOK, code, body)
	lanes = map[string]laneRow{}
	for _, l := range decode[queueReply](t, body).Lanes {
		lanes[l.Name] = l
	}
	return lanes, before, after
}

// requireAge checks that ms is the age of a job added at added, read
// between before and after (the dashboard's clock, which is this process's,
// against the server's add time, in whole ms).
func requireAge(t *testing.T, ms int64, added, before, after time.Time, what string) {
	t.Helper()
	require.GreaterOrEqual(t, ms, before.Sub(added).Milliseconds(), "%s: younger than its next job", what)
	require.LessOrEqual(t, ms, after.Sub(added).Milliseconds(), "%s: older than its next job", what)
}

// partitionOf is the partition index a job id names: its suffix after
// "~", none for partition 0.
func partitionOf(id string) string {
	_, part, _ := strings.Cut(id, "~")
	return part
}

// testSample is the sample interval of TestLaneLatencyAPI's dashboard.
const testSample = 100 * time.Millisecond

// The queue page's lanes carry their latency: how long each lane's next
// job to be claimed has waited since it was added (its AddedAt), 0 for a
// lane none waits in, on a queue and on a partitioned one, whose lanes
// live in different partitions; the metrics' per-lane latency is of the
// same jobs. The heads are read at most once per
// sample: a page read again meanwhile shows the heads read before, and
// reads only a lane not read yet.
func TestLaneLatencyAPI(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, o valkeyserver.Options) {
		s := valkeytest.Start(t, o)
		c := valkeytest.Client(t, s)
		ctx := t.Context()
		plain, err := trafikey.Open(ctx, c, "plain", nil)
		require.NoError(t, err)
		parted, err := trafikey.Open(ctx, c, "parted", &trafikey.QueueOptions{Partitions: 3})
		require.NoError(t, err)
		srv := startDash(t, c, Options{SampleEvery: testSample, MetricsLanes: 10})
		// a sample each hour: every read of a page comes within one
		slow := startDash(t, c, Options{SampleEvery: time.Hour})

		lanes := []string{"tenant-a", "tenant-b", "tenant-c"}
		for _, q := range []*trafikey.Queue{plain, parted} {
			t.Run(q.Name(), func(t *testing.T) {
				// "busy": listed for its active job, none waiting.
				_, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: "busy"})
				require.NoError(t, err)
				claimed, err := q.Claim(ctx, time.Minute, 1)
				require.NoError(t, err)
				require.Len(t, claimed, 1)
				// Each lane's next job, and later another behind it: the two
				// ages differ by more than a read takes.
				heads := map[string]string{}
				added := map[string]time.Time{}
				parts := map[string]bool{}
				for _, lane := range lanes {
					id, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: lane})
					require.NoError(t, err)
					info, err := q.Inspect(ctx, id)
					require.NoError(t, err)
					heads[lane], added[lane] = id, info.AddedAt
					parts[partitionOf(id)] = true
				}
				if q == parted {
					require.Len(t, parts, 3, "the lanes are in every partition")
				}
				time.Sleep(50 * time.Millisecond)
				for _, lane := range lanes {
					_, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: lane})
					require.NoError(t, err)
				}

				got, before, after := pageLanes(t, srv, q.Name())
				require.Len(t, got, len(lanes)+1)
				for _, lane := range lanes {
					require.Equal(t, 2, got[lane].Waiting)
					requireAge(t, got[lane].LatencyMS, added[lane], before, after, lane)
					require.Positive(t, got[lane].LatencyMS, lane)
				}
				require.Equal(t, 1, got["busy"].Active)
				require.Zero(t, got["busy"].LatencyMS, "none waits in busy")
				// The metrics' per-lane latency is of the same jobs.
				before = time.Now()
				code, metrics, _ := get(t, srv, "/metrics")
				after = time.Now()
				require.Equal(t, http.StatusOK, code)
				for _, lane := range append(lanes, "busy") {
					series := fmt.Sprintf(`trafikey_lane_latency_seconds{lane="%s",queue="%s"} `, lane, q.Name())
					i := strings.Index(metrics, series)
					require.GreaterOrEqual(t, i, 0, "no %s", series)
					line, _, _ := strings.Cut(metrics[i+len(series):], "\n")
					v, err := strconv.ParseFloat(line, 64)
					require.NoError(t, err, series)
					if lane == "busy" {
						require.Zero(t, v, series)
						continue
					}
					require.GreaterOrEqual(t, v, before.Sub(added[lane]).Seconds(), series)
					require.LessOrEqual(t, v, after.Sub(added[lane]).Seconds(), series)
				}

				// Read once a sample: the heads read first are shown again, the
				// one of a lane newly listed is read.
				_, before, after = pageLanes(t, slow, q.Name())
				require.NoError(t, q.Admin().Remove(ctx, heads["tenant-a"]))
				id, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: "tenant-d"})
				require.NoError(t, err)
				info, err := q.Inspect(ctx, id)
				require.NoError(t, err)
				got, _, after2 := pageLanes(t, slow, q.Name())
				require.Equal(t, 1, got["tenant-a"].Waiting, "the lanes' counts are read at each request")
				requireAge(t, got["tenant-a"].LatencyMS, added["tenant-a"], before, after2, "tenant-a, its head read before its removal")
				requireAge(t, got["tenant-d"].LatencyMS, info.AddedAt, after, after2, "tenant-d, listed since")
				// A sample later, the removal shows: tenant-a's next job is
				// the one behind it.
				page, err := q.Jobs(ctx, trafikey.StatePending, trafikey.JobsOptions{Lane: "tenant-a", Limit: 1})
				require.NoError(t, err)
				require.Len(t, page.Rows, 1)
				require.NotEqual(t, heads["tenant-a"], page.Rows[0].ID)
				time.Sleep(testSample)
				got, before, after = pageLanes(t, srv, q.Name())
				requireAge(t, got["tenant-a"].LatencyMS, page.Rows[0].AddedAt, before, after, "tenant-a's next job")
			})
		}
	})
}
