package dash

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/parttest"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// A partitioned queue on a cluster of three primaries, in Chromium: one
// row of the overview with its partitions' counts summed, its page's
// counts by partition and by node, which follow the jobs, and its jobs,
// whose ids carry their partition's suffix, listed, opened and requeued.
func TestBrowserPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a cluster and drives the dashboard in Chromium")
	}
	t.Parallel()
	tab := browser(t)
	cl := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3})
	c := valkeytest.ClusterClient(t, cl)
	ctx := t.Context()
	parts := parttest.Fill(t, c, "mail", 6)
	sum := parttest.Counts{}
	shards := map[string]*parttest.Counts{}
	for i := range parts {
		p := &parts[i]
		p.Node = parttest.OwnerOf(t, cl, p.Tag)
		if shards[p.Node] == nil {
			shards[p.Node] = &parttest.Counts{Node: p.Node}
		}
		for _, acc := range []*parttest.Counts{&sum, shards[p.Node]} {
			acc.Tag += "x" // counts the partitions
			acc.Pending += p.Pending
			acc.Delayed += p.Delayed
			acc.Active += p.Active
			acc.Dead += p.Dead
			acc.Completed += p.Completed
		}
	}
	require.Len(t, shards, 3, "the partitions are on every primary")
	_, err := trafikey.Open(ctx, c, "solo", nil)
	require.NoError(t, err)

	srv := startDash(t, c, Options{SampleEvery: 200 * time.Millisecond})

	// The overview: mail once, marked, its counts summed; no partition
	// listed as a queue.
	within(tab, t, 20*time.Second,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="mail"] .badge.parts`)),
	)
	require.Equal(t, 2, count(tab, t, `#queues tbody tr`), "mail and solo, no partition of mail")
	require.Equal(t, "6 partitions", textOf(tab, t, `tr[data-queue="mail"] .badge.parts`))
	require.Zero(t, count(tab, t, `tr[data-queue="solo"] .badge.parts`))
	require.Equal(t, sum.Pending, int(number(textOf(tab, t, `tr[data-queue="mail"] td[data-col="pending"]`))))
	require.Equal(t, sum.Dead, int(number(textOf(tab, t, `tr[data-queue="mail"] td[data-col="dead"]`))))
	require.Equal(t, sum.Completed, int(number(textOf(tab, t, `tr[data-queue="mail"] td[data-col="completed"]`))))

	// The queue page: every partition's counts and node, and each node's
	// sums.
	clickOf(tab, t, `tr[data-queue="mail"] td a`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#partitions tbody tr`)))
	require.Equal(t, "6 partitions", textOf(tab, t, `h1 .badge.parts`))
	require.Equal(t, sum.Pending, int(number(textOf(tab, t, `[data-card="pending"] .n`))))
	require.Equal(t, len(parts), count(tab, t, `#partitions tbody tr`))
	cell := func(table, key, col string) string {
		return pageText(tab, t, fmt.Sprintf(`#%s tr[%s] td[data-col="%s"]`, table, key, col))
	}
	checkPart := func(i int, p parttest.Counts) {
		t.Helper()
		key := fmt.Sprintf(`data-partition="%d"`, i)
		require.Equal(t, p.Tag, cell("partitions", key, "tag"))
		require.Equal(t, p.Node, cell("partitions", key, "node"))
		for col, n := range map[string]int{"pending": p.Pending, "delayed": p.Delayed, "active": p.Active, "dead": p.Dead, "completed": p.Completed} {
			require.Equal(t, strconv.Itoa(n), cell("partitions", key, col), "partition %d %s", i, col)
		}
	}
	for i, p := range parts {
		checkPart(i, p)
	}
	require.Equal(t, len(shards), count(tab, t, `#shards tbody tr`))
	checkShard := func(s parttest.Counts) {
		t.Helper()
		key := fmt.Sprintf(`data-node="%s"`, s.Node)
		for col, n := range map[string]int{"partitions": len(s.Tag), "pending": s.Pending, "delayed": s.Delayed, "active": s.Active, "dead": s.Dead, "completed": s.Completed} {
			require.Equal(t, strconv.Itoa(n), cell("shards", key, col), "node %s %s", s.Node, col)
		}
	}
	for _, s := range shards {
		checkShard(*s)
	}
	within(tab, t, 10*time.Second, chromedp.ScrollIntoView(chromedp.CSS(`#partitions-box`)))
	screenshot(tab, t, "dash-partitions.png")

	// Jobs added to partition 2 show on its row, its node's and the
	// queue's count, without a reload.
	p2 := mustQueue(t, c, parts[2].Tag)
	for range 3 {
		_, err := p2.Add(ctx, []byte("x"), nil)
		require.NoError(t, err)
	}
	want := parts[2].Pending + 3
	waitText(tab, t, `#partitions tr[data-partition="2"] td[data-col="pending"]`, func(s string) bool { return s == strconv.Itoa(want) })
	parts[2].Pending = want
	checkPart(2, parts[2])
	shards[parts[2].Node].Pending += 3
	checkShard(*shards[parts[2].Node])
	waitText(tab, t, `[data-card="pending"] .n`, func(s string) bool { return number(s) == int64(sum.Pending+3) })

	// The dead jobs, listed through every partition: ids with a suffix
	// ("<id>~<partition>") open and requeue like any other.
	mail := mustQueue(t, c, "mail")
	page, err := mail.Jobs(ctx, trafikey.StateDead, trafikey.JobsOptions{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Rows, sum.Dead)
	var suffixed string
	for _, r := range page.Rows {
		if strings.Contains(r.ID, "~") {
			suffixed = r.ID
		}
	}
	require.NotEmpty(t, suffixed, "a dead job of a partition above 0")
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`[data-card="dead"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs[data-state="dead"]`)),
	)
	waitText(tab, t, `[data-tab="dead"] .count`, func(s string) bool { return number(s) == int64(sum.Dead) })
	require.Equal(t, sum.Dead, count(tab, t, `#jobs tbody tr`))
	clickOf(tab, t, `#jobs tr[data-job="`+suffixed+`"] td a`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#act-requeue`)))
	require.Equal(t, "#/job/mail/"+suffixed, eval[string](tab, t, `location.hash`))
	require.True(t, strings.HasPrefix(textOf(tab, t, `h1`), "Job "+suffixed+"dead"), textOf(tab, t, `h1`))
	require.Equal(t, "boom", textOf(tab, t, `#job-error`))
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`#act-requeue`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-field="state"] [data-state="pending"]`)),
	)
	info, err := mail.Inspect(ctx, suffixed)
	require.NoError(t, err)
	require.Equal(t, trafikey.StatePending, info.State)
	// Found by id in its table, and opened by address.
	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/#/jobs/mail/pending"),
		chromedp.WaitVisible(chromedp.CSS(`#jobs-find`)),
		chromedp.SendKeys(chromedp.CSS(`#jobs-find`), suffixed),
		chromedp.Click(chromedp.CSS(`#jobs-search button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs-find-clear`)),
	)
	require.Equal(t, 1, count(tab, t, `#jobs tbody tr`))
	require.Equal(t, suffixed, eval[string](tab, t, `document.querySelector("#jobs tbody tr").dataset.job`))
	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/#/job/mail/"+suffixed),
		chromedp.WaitVisible(chromedp.CSS(`[data-field="state"] [data-state="pending"]`)),
	)
}
