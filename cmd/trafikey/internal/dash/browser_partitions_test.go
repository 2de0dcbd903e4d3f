package dash

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// partCounts are the jobs a test put in one partition, and the primary
// that holds it.
type partCounts struct {
	tag                                       string
	node                                      string
	pending, delayed, active, dead, completed int
}

// fillPartitions makes queue name with n partitions and puts jobs in each
// through a handle on that partition alone, so that each holds counts of
// its own: partition i has i+1 pending, i%2 delayed, 1 active when
// i%3 == 1, 1 dead when i%3 == 0, and i completed. Partition 0's jobs are
// put in before the queue is partitioned (its keys are the queue's own,
// which growing keeps), the others' through a handle on their tag.
func fillPartitions(t *testing.T, c valkey.Client, name string, n int) []partCounts {
	t.Helper()
	ctx := t.Context()
	out := make([]partCounts, n)
	fill := func(i int, p *trafikey.Queue) {
		want := partCounts{tag: p.Name(), pending: i + 1, delayed: i % 2, completed: i}
		claimOne := func() *trafikey.Job {
			_, err := p.Add(ctx, []byte("x"), &trafikey.JobOptions{MaxAttempts: 1})
			require.NoError(t, err)
			jobs, err := p.Claim(ctx, time.Minute, 1)
			require.NoError(t, err)
			require.Len(t, jobs, 1)
			return jobs[0]
		}
		for range want.completed {
			require.NoError(t, claimOne().Complete(ctx))
		}
		if i%3 == 0 {
			want.dead = 1
			_, err := claimOne().Fail(ctx, errors.New("boom"), true)
			require.NoError(t, err)
		}
		if i%3 == 1 {
			want.active = 1
			claimOne()
		}
		for range want.pending {
			_, err := p.Add(ctx, []byte("x"), nil)
			require.NoError(t, err)
		}
		for range want.delayed {
			_, err := p.Add(ctx, []byte("x"), &trafikey.JobOptions{Delay: time.Hour})
			require.NoError(t, err)
		}
		out[i] = want
	}
	first, err := trafikey.Open(ctx, c, name, nil)
	require.NoError(t, err)
	fill(0, first)
	_, err = trafikey.Open(ctx, c, name, &trafikey.QueueOptions{Partitions: n})
	require.NoError(t, err)
	tags, err := c.Do(ctx, c.B().Hgetall().Key("emq:{"+name+"}:partitions").Build()).AsStrMap()
	require.NoError(t, err)
	require.Equal(t, name, tags["0"])
	for i := 1; i < n; i++ {
		fill(i, mustQueue(t, c, tags[strconv.Itoa(i)]))
	}
	return out
}

// ownerOf finds the primary holding tag's keys by asking each primary for
// its version key: the others answer MOVED.
func ownerOf(t *testing.T, cl *valkeyserver.Cluster, tag string) string {
	t.Helper()
	owner := ""
	for _, p := range cl.Primaries() {
		if n, ok := valkeytest.Reply(t, p, "EXISTS", "emq:{"+tag+"}:version").(int64); ok && n == 1 {
			require.Empty(t, owner, "two primaries hold %s", tag)
			owner = p.Addr()
		}
	}
	require.NotEmpty(t, owner, "no primary holds %s", tag)
	return owner
}

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
	parts := fillPartitions(t, c, "mail", 6)
	sum := partCounts{}
	shards := map[string]*partCounts{}
	for i := range parts {
		p := &parts[i]
		p.node = ownerOf(t, cl, p.tag)
		if shards[p.node] == nil {
			shards[p.node] = &partCounts{node: p.node}
		}
		for _, acc := range []*partCounts{&sum, shards[p.node]} {
			acc.tag += "x" // counts the partitions
			acc.pending += p.pending
			acc.delayed += p.delayed
			acc.active += p.active
			acc.dead += p.dead
			acc.completed += p.completed
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
	require.Equal(t, sum.pending, int(number(textOf(tab, t, `tr[data-queue="mail"] td[data-col="pending"]`))))
	require.Equal(t, sum.dead, int(number(textOf(tab, t, `tr[data-queue="mail"] td[data-col="dead"]`))))
	require.Equal(t, sum.completed, int(number(textOf(tab, t, `tr[data-queue="mail"] td[data-col="completed"]`))))

	// The queue page: every partition's counts and node, and each node's
	// sums.
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`tr[data-queue="mail"] td a`)),
		chromedp.WaitVisible(chromedp.CSS(`#partitions tbody tr`)),
	)
	require.Equal(t, "6 partitions", textOf(tab, t, `h1 .badge.parts`))
	require.Equal(t, sum.pending, int(number(textOf(tab, t, `[data-card="pending"] .n`))))
	require.Equal(t, len(parts), count(tab, t, `#partitions tbody tr`))
	cell := func(table, key, col string) string {
		return pageText(tab, t, fmt.Sprintf(`#%s tr[%s] td[data-col="%s"]`, table, key, col))
	}
	checkPart := func(i int, p partCounts) {
		t.Helper()
		key := fmt.Sprintf(`data-partition="%d"`, i)
		require.Equal(t, p.tag, cell("partitions", key, "tag"))
		require.Equal(t, p.node, cell("partitions", key, "node"))
		for col, n := range map[string]int{"pending": p.pending, "delayed": p.delayed, "active": p.active, "dead": p.dead, "completed": p.completed} {
			require.Equal(t, strconv.Itoa(n), cell("partitions", key, col), "partition %d %s", i, col)
		}
	}
	for i, p := range parts {
		checkPart(i, p)
	}
	require.Equal(t, len(shards), count(tab, t, `#shards tbody tr`))
	checkShard := func(s partCounts) {
		t.Helper()
		key := fmt.Sprintf(`data-node="%s"`, s.node)
		for col, n := range map[string]int{"partitions": len(s.tag), "pending": s.pending, "delayed": s.delayed, "active": s.active, "dead": s.dead, "completed": s.completed} {
			require.Equal(t, strconv.Itoa(n), cell("shards", key, col), "node %s %s", s.node, col)
		}
	}
	for _, s := range shards {
		checkShard(*s)
	}
	within(tab, t, 10*time.Second, chromedp.ScrollIntoView(chromedp.CSS(`#partitions-box`)))
	screenshot(tab, t, "dash-partitions.png")

	// Jobs added to partition 2 show on its row, its node's and the
	// queue's count, without a reload.
	p2 := mustQueue(t, c, parts[2].tag)
	for range 3 {
		_, err := p2.Add(ctx, []byte("x"), nil)
		require.NoError(t, err)
	}
	want := parts[2].pending + 3
	waitText(tab, t, `#partitions tr[data-partition="2"] td[data-col="pending"]`, func(s string) bool { return s == strconv.Itoa(want) })
	parts[2].pending = want
	checkPart(2, parts[2])
	shards[parts[2].node].pending += 3
	checkShard(*shards[parts[2].node])
	waitText(tab, t, `[data-card="pending"] .n`, func(s string) bool { return number(s) == int64(sum.pending+3) })

	// The dead jobs, listed through every partition: ids with a suffix
	// ("<id>~<partition>") open and requeue like any other.
	mail := mustQueue(t, c, "mail")
	page, err := mail.Jobs(ctx, trafikey.StateDead, trafikey.JobsOptions{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Rows, sum.dead)
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
	waitText(tab, t, `[data-tab="dead"] .count`, func(s string) bool { return number(s) == int64(sum.dead) })
	require.Equal(t, sum.dead, count(tab, t, `#jobs tbody tr`))
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`#jobs tr[data-job="`+suffixed+`"] td a`)),
		chromedp.WaitVisible(chromedp.CSS(`#act-requeue`)),
	)
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
