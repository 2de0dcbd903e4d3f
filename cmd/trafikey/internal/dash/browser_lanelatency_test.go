package dash

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
)

// latencyMS reads a latency as the pages show it ("640 ms", "1.5 s") in
// ms; -1 for anything else ("–": none waits).
func latencyMS(s string) int64 {
	if n, ok := strings.CutSuffix(s, " ms"); ok {
		if v, err := strconv.ParseInt(n, 10, 64); err == nil {
			return v
		}
	}
	if n, ok := strings.CutSuffix(s, " s"); ok {
		if v, err := strconv.ParseFloat(n, 64); err == nil {
			return int64(v * 1000)
		}
	}
	return -1
}

// browseLaneLatency checks the latency column of a queue page's lanes, on
// a queue and on a partitioned one: a lane whose next job was added
// earlier shows a larger latency than one added later, a lane with only an
// active job shows "–", and the latencies grow at each read while the rows
// stay (a button under the pointer keeps its click).
func browseLaneLatency(t *testing.T, tab context.Context, url string, c valkey.Client) {
	ctx := t.Context()
	for _, parts := range []int{0, 3} {
		name := "latency-" + strconv.Itoa(parts)
		q, err := trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Partitions: parts})
		require.NoError(t, err)
		// busy: one job, claimed.
		_, err = q.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: "busy"})
		require.NoError(t, err)
		claimed, err := q.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Len(t, claimed, 1)
		// older's job, and a while later newer's: by the server's clock,
		// older's was added more than 200 ms before.
		older, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: "older"})
		require.NoError(t, err)
		time.Sleep(300 * time.Millisecond)
		newer, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: "newer"})
		require.NoError(t, err)
		o, err := q.Inspect(ctx, older)
		require.NoError(t, err)
		n, err := q.Inspect(ctx, newer)
		require.NoError(t, err)
		require.Greater(t, n.AddedAt.Sub(o.AddedAt), 200*time.Millisecond)
		if parts > 0 {
			require.NotEqual(t, partitionOf(older), partitionOf(newer), "the lanes are in different partitions")
		}

		cell := func(lane string) string { return `#lanes tr[data-lane="` + lane + `"] [data-col="latency"]` }
		within(tab, t, 10*time.Second,
			chromedp.Navigate(url+"/#/queue/"+name),
			chromedp.WaitVisible(chromedp.CSS(`#lanes tr[data-lane="newer"]`)),
		)
		require.Equal(t, "latency", pageText(tab, t, `#lanes thead th:nth-child(3)`))
		// The three cells of one read, at once.
		shown := eval[[]string](tab, t, `["older", "newer", "busy"].map((l) => document.querySelector('#lanes tr[data-lane="' + l + '"] [data-col="latency"]').textContent)`)
		olderMS, newerMS := latencyMS(shown[0]), latencyMS(shown[1])
		require.Positive(t, newerMS, "newer: %q", shown[1])
		require.Greater(t, olderMS, newerMS, "older %q, newer %q", shown[0], shown[1])
		require.Equal(t, "–", shown[2], "none waits in busy")
		require.Equal(t, "1", pageText(tab, t, `#lanes tr[data-lane="busy"] [data-col="active"]`))

		// At the next reads the latencies grow, in rows that stayed.
		eval[bool](tab, t, `document.querySelector('#lanes tr[data-lane="older"]').kept = true`)
		waitText(tab, t, cell("older"), func(s string) bool { return latencyMS(s) > olderMS })
		require.True(t, eval[bool](tab, t, `document.querySelector('#lanes tr[data-lane="older"]').kept === true`), "the row was built again")
	}
}
