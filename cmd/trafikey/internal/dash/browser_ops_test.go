package dash

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// The operator's pages in Chromium: the failure rate over windows, the
// pending jobs of lanes, the lanes' pause, cap and latency, a flow removed
// from its parent, the schedules, and a queue deleted.
func TestBrowserOps(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: drives the dashboard in Chromium")
	}
	t.Parallel()
	tab := browser(t)
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	srv := startDash(t, c, Options{})

	// The failure rate: over the last minute, beside the dead count.
	mail, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/#/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="mail"]`)),
	)
	require.Equal(t, "–", pageText(tab, t, `[data-card="failure-1m"] .n`), "nothing finished: no rate, not 0 %")
	require.Eventually(t, func() bool {
		_, body, _ := get(t, srv, "/api/series?queue=mail")
		return len(decode[series](t, body).Points) >= 1
	}, 10*time.Second, 20*time.Millisecond)
	for i := range 5 {
		_, err := mail.Add(ctx, []byte("x"), &trafikey.JobOptions{MaxAttempts: 1})
		require.NoError(t, err)
		jobs, err := mail.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		if i < 2 {
			_, err = jobs[0].Fail(ctx, errors.New("smtp down"), false)
			require.NoError(t, err)
			continue
		}
		require.NoError(t, jobs[0].Complete(ctx))
	}
	waitText(tab, t, `[data-card="failure-1m"] .n`, func(s string) bool { return s == "40.0 %" })
	waitText(tab, t, `[data-card="failure-5m"] .n`, func(s string) bool { return s == "40.0 %" })
	require.Equal(t, "2", pageText(tab, t, `#totals [data-card="dead"] .n`))
	require.Contains(t, eval[string](tab, t, `document.querySelector('[data-card="failure-1m"]').title`), "2 failed attempts and 3 completions")
	// The queue's page has its own.
	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/#/queue/mail"),
		chromedp.WaitVisible(chromedp.CSS(`#counts`)),
	)
	waitText(tab, t, `#counts [data-card="failure-1m"] .n`, func(s string) bool { return s == "40.0 %" })
	require.Equal(t, "2", pageText(tab, t, `#counts [data-card="dead"] .n`))

	browseWorkers(t, tab, srv.URL, c)
	browseKinds(t, tab, srv.URL, c)
	browsePendingLanes(t, tab, srv.URL, c)
	browseLanes(t, tab, srv.URL, c)
	browseLaneLatency(t, tab, srv.URL, c)
	browseFlowRemove(t, tab, srv.URL, c)
	browseSchedules(t, tab, srv.URL, c)
	browseDelete(t, tab, srv.URL, c)

	// Read-only: the pages show none of these actions.
	ro := startDash(t, c, Options{ReadOnly: true})
	within(tab, t, 10*time.Second,
		chromedp.Navigate(ro.URL+"/#/queue/tenants"),
		chromedp.WaitVisible(chromedp.CSS(`#lanes tr[data-lane="acme"]`)),
	)
	require.Zero(t, count(tab, t, `[data-lane-act], #act-delete`))
	within(tab, t, 10*time.Second,
		chromedp.Navigate(ro.URL+"/#/schedules/cron"),
		chromedp.WaitVisible(chromedp.CSS(`#schedules tr[data-schedule="nightly"]`)),
	)
	require.Zero(t, count(tab, t, `[data-sched-act]`))
	within(tab, t, 10*time.Second,
		chromedp.Navigate(ro.URL+"/#/jobs/tenants/pending"),
		chromedp.WaitVisible(chromedp.CSS(`#pending-lanes`)),
	)
	require.Zero(t, count(tab, t, `[data-act]`))
}

// browseKinds checks that a jobs table shows each job's kind, and that the
// kind filter lists one kind's jobs.
func browseKinds(t *testing.T, tab context.Context, url string, c valkey.Client) {
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "kinds", nil)
	require.NoError(t, err)
	for i := range 40 {
		kind := "report"
		if i%4 == 0 {
			kind = "email"
		}
		_, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{Kind: kind})
		require.NoError(t, err)
	}
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/jobs/kinds/pending"),
		chromedp.WaitVisible(chromedp.CSS(`#jobs tr[data-job="2"]`)),
	)
	require.Equal(t, "email", pageText(tab, t, `#jobs tr[data-job="1"] td.kind`))
	require.Equal(t, "report", pageText(tab, t, `#jobs tr[data-job="2"] td.kind`))
	within(tab, t, 10*time.Second,
		chromedp.SetValue(chromedp.CSS(`#jobs-kind`), "email"),
		chromedp.Click(chromedp.CSS(`#jobs-kind-filter button`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#jobs tr[data-job="2"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs tr[data-job="37"]`)),
	)
	kinds := eval[[]string](tab, t, `[...document.querySelectorAll("#jobs td.kind")].map((td) => td.textContent)`)
	require.Len(t, kinds, 10, "the page of the kind: 10 email jobs of 40")
	for _, k := range kinds {
		require.Equal(t, "email", k)
	}
}

// browseWorkers checks that a queue's page lists the worker processes on it,
// with the jobs in hand linked, and none once they stopped.
func browseWorkers(t *testing.T, tab context.Context, url string, c valkey.Client) {
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "busy", nil)
	require.NoError(t, err)
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/queue/busy"),
		chromedp.WaitVisible(chromedp.CSS(`#no-workers`)),
	)
	require.Equal(t, "–", pageText(tab, t, `#counts [data-card="latency"] .n`), "no job waits")
	require.Equal(t, "No wait counted yet.", pageText(tab, t, `#no-waits`))
	id, err := q.Add(ctx, []byte("x"), nil)
	require.NoError(t, err)
	// the waiting job's age, as the page reads again
	waitText(tab, t, `#counts [data-card="latency"] .n`, func(s string) bool { return strings.HasSuffix(s, " ms") || strings.HasSuffix(s, " s") })
	release := make(chan struct{})
	// a handle whose observer takes the waits: its worker counts them
	waited, err := trafikey.Open(ctx, c, "busy", &trafikey.QueueOptions{Observer: trafikey.Observer{JobWaited: func(*trafikey.Job, time.Duration) {}}})
	require.NoError(t, err)
	w, err := trafikey.NewWorker(waited, func(context.Context, *trafikey.Job) error { <-release; return nil }, trafikey.WorkerOptions{Concurrency: 3})
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- w.Run(wctx) }()
	sel := `#workers tr[data-worker="` + w.Info().ID + `"]`
	// the page reads again every few seconds; the worker registers every 5
	waitText(tab, t, sel, func(s string) bool { return strings.Contains(s, "1 / 3") && strings.Contains(s, id) })
	require.Equal(t, "#/job/busy/"+id, eval[string](tab, t, `document.querySelector('`+sel+` a').getAttribute("href")`))
	// the job's wait, counted by the worker that started it
	waitText(tab, t, `#waits-box`, func(s string) bool { return strings.Contains(s, "1 job: p50 < ") })
	require.Equal(t, 1, eval[int](tab, t, `[...document.querySelectorAll("#waits td")].reduce((n, td) => n + Number(td.textContent), 0)`))
	require.Equal(t, 11, count(tab, t, `#waits td`))
	close(release)
	stop()
	require.NoError(t, <-ran)
	waitText(tab, t, `#workers-box`, func(s string) bool { return strings.Contains(s, "No worker runs on this queue.") })
	waitText(tab, t, `#waits-box`, func(s string) bool { return strings.Contains(s, "No wait counted yet.") })
}

// browsePendingLanes checks that a queue's pending jobs in lanes are shown:
// the count explained, each lane's jobs a click away.
func browsePendingLanes(t *testing.T, tab context.Context, url string, c valkey.Client) {
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "tenants", nil)
	require.NoError(t, err)
	var jobs []trafikey.JobSpec
	for _, lane := range []string{"", "", "acme", "acme", "acme", "b/2", "b/2"} {
		jobs = append(jobs, trafikey.JobSpec{Payload: []byte("x"), Options: trafikey.JobOptions{Lane: lane}})
	}
	ids, err := q.AddBatch(ctx, jobs)
	require.NoError(t, err)
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/jobs/tenants/pending"),
		chromedp.WaitVisible(chromedp.CSS(`#pending-lanes`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs`)),
	)
	require.Equal(t, "7", pageText(tab, t, `[data-tab="pending"] .count`))
	require.Equal(t, "7 pending: 2 jobs without a lane, 5 jobs waiting in 2 lanes.", pageText(tab, t, `#lane-sum`))
	require.Equal(t, 3, count(tab, t, `#pending-lanes tbody tr`))
	require.Equal(t, "Jobs without a lane", pageText(tab, t, `#jobs-caption`))
	require.Equal(t, 2, count(tab, t, `#jobs tbody tr`))
	clickOf(tab, t, `#pending-lanes tr[data-lane-row="b/2"] a`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#jobs[data-lane="b/2"]`)))
	require.Equal(t, []string{ids[5], ids[6]}, strings.Split(eval[string](tab, t, `Array.from(document.querySelectorAll("#jobs tbody tr"), (r) => r.dataset.job).join(",")`), ","))
	require.Equal(t, "Lane b/2: its waiting jobs", pageText(tab, t, `#jobs-caption`))

	// A queue whose pending jobs are all in lanes says so.
	only, err := trafikey.Open(ctx, c, "lanes-only", nil)
	require.NoError(t, err)
	_, err = only.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: "acme"})
	require.NoError(t, err)
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/jobs/lanes-only/pending"),
		chromedp.WaitVisible(chromedp.CSS(`#jobs-empty`)),
	)
	require.Equal(t, "No pending jobs without a lane: the 1 job waits in the lanes above.", pageText(tab, t, `#jobs-empty`))
	require.Equal(t, "1 pending: 0 jobs without a lane, 1 job waiting in 1 lane.", pageText(tab, t, `#lane-sum`))
}

// browseLanes pauses, caps and resumes a lane from the queue page, and
// finds an empty paused lane by name.
func browseLanes(t *testing.T, tab context.Context, url string, c valkey.Client) {
	ctx := t.Context()
	q := mustQueue(t, c, "tenants")
	require.NoError(t, q.Lane("idle").Pause(ctx))
	row := `#lanes tr[data-lane="acme"] `
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/queue/tenants"),
		chromedp.WaitVisible(chromedp.CSS(row+`[data-lane-act="pause"]`)),
	)
	require.Equal(t, "running", pageText(tab, t, row+`[data-col="state"]`))
	clickOf(tab, t, row+`[data-lane-act="pause"]`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(row+`[data-lane-act="resume"]`)))
	require.Equal(t, "paused", pageText(tab, t, row+`[data-col="state"]`))
	info, err := q.Lane("acme").Info(ctx)
	require.NoError(t, err)
	require.True(t, info.Paused)

	clickOf(tab, t, row+`[data-lane-act="cap"]`)
	within(tab, t, 10*time.Second,
		chromedp.WaitVisible(chromedp.CSS(`#confirm-cap`)),
		chromedp.SetValue(chromedp.CSS(`#confirm-cap`), "3"),
		chromedp.Click(chromedp.CSS(`#confirm-ok`)),
		chromedp.WaitVisible(chromedp.CSS(row+`[data-lane-act="uncap"]`)),
	)
	require.Equal(t, "3", pageText(tab, t, row+`[data-col="cap"]`))
	waitText(tab, t, `.notice`, func(s string) bool { return s == "Lane acme runs at most 3 jobs at once." })
	info, err = q.Lane("acme").Info(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, info.Cap)
	clickOf(tab, t, row+`[data-lane-act="uncap"]`)
	within(tab, t, 10*time.Second, chromedp.WaitNotPresent(chromedp.CSS(row+`[data-lane-act="uncap"]`)))
	clickOf(tab, t, row+`[data-lane-act="resume"]`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(row+`[data-lane-act="pause"]`)))
	require.Equal(t, "–", pageText(tab, t, row+`[data-col="cap"]`))
	info, err = q.Lane("acme").Info(ctx)
	require.NoError(t, err)
	require.Equal(t, trafikey.LaneInfo{Name: "acme", Waiting: 3}, info)

	// A paused lane without jobs is not listed: found by name, resumed.
	require.Zero(t, count(tab, t, `#lanes tr[data-lane="idle"]`))
	within(tab, t, 10*time.Second,
		chromedp.SendKeys(chromedp.CSS(`#lane-find`), "idle"),
		chromedp.Click(chromedp.CSS(`#lane-search button`)),
		chromedp.WaitVisible(chromedp.CSS(`#lanes tr[data-lane="idle"] [data-lane-act="resume"]`)),
	)
	require.Equal(t, "–", pageText(tab, t, `#lanes tr[data-lane="idle"] [data-col="latency"]`), "none waits in idle")
	clickOf(tab, t, `#lanes tr[data-lane="idle"] [data-lane-act="resume"]`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#lanes tr[data-lane="idle"] [data-lane-act="pause"]`)))
	info, err = q.Lane("idle").Info(ctx)
	require.NoError(t, err)
	require.False(t, info.Paused)
}

// browseFlowRemove removes a flow from its waiting parent, from the
// waiting table and from the parent's page.
func browseFlowRemove(t *testing.T, tab context.Context, url string, c valkey.Client) {
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "flows", nil)
	require.NoError(t, err)
	flow := func() trafikey.FlowIDs {
		ids, err := q.AddFlow(ctx, trafikey.JobSpec{
			Payload: []byte("report"),
			Children: []trafikey.JobSpec{
				{Payload: []byte("page 1")},
				{Payload: []byte("page 2"), Children: []trafikey.JobSpec{{Payload: []byte("chart")}}},
			},
		})
		require.NoError(t, err)
		return ids
	}
	gone := func(ids trafikey.FlowIDs) {
		for _, id := range []string{ids.ID, ids.Children[0].ID, ids.Children[1].ID, ids.Children[1].Children[0].ID} {
			_, err := q.Inspect(ctx, id)
			require.ErrorIs(t, err, trafikey.ErrNotFound, id)
		}
	}
	first := flow()
	btn := `#jobs tr[data-job="` + first.ID + `"] [data-act="remove"]`
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/jobs/flows/waiting"),
		chromedp.WaitVisible(chromedp.CSS(btn)),
	)
	require.Equal(t, "Remove flow", pageText(tab, t, btn))
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(btn)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-ok`)),
	)
	require.Equal(t, "Remove job "+first.ID+" with its flow?", pageText(tab, t, `#confirm h3`))
	require.Contains(t, pageText(tab, t, `#confirm p`), "waits for 2 children: it is removed with every job of its flow below it")
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`#confirm-ok`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs-empty`)),
	)
	waitText(tab, t, `.notice`, func(s string) bool { return s == "Removed job "+first.ID+" with its flow." })
	gone(first)

	second := flow()
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/job/flows/"+second.ID),
		chromedp.WaitVisible(chromedp.CSS(`#act-remove`)),
	)
	require.Equal(t, "Remove flow", pageText(tab, t, `#act-remove`))
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`#act-remove`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-ok`)),
		chromedp.Click(chromedp.CSS(`#confirm-ok`)),
		chromedp.WaitVisible(chromedp.CSS(`#job-missing`)),
	)
	waitText(tab, t, `.notice`, func(s string) bool { return s == "Removed with its flow: the job and every job below it." })
	gone(second)
}

// browseSchedules lists a queue's schedules with their next occurrences,
// and pauses, resumes and removes one.
func browseSchedules(t *testing.T, tab context.Context, url string, c valkey.Client) {
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "cron", nil)
	require.NoError(t, err)
	sc := q.Schedules()
	for _, def := range []trafikey.Schedule{
		{ID: "nightly", Cron: "0 3 * * *", TimeZone: "America/New_York", Payload: []byte("x")},
		{ID: "poll", Every: 30 * time.Second, Limit: 2, Payload: []byte("x")},
	} {
		_, err := sc.Set(ctx, def)
		require.NoError(t, err)
	}
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/queue/cron"),
		chromedp.WaitVisible(chromedp.CSS(`#schedules-link`)),
		chromedp.Click(chromedp.CSS(`#schedules-link`)),
		chromedp.WaitVisible(chromedp.CSS(`#schedules`)),
	)
	nightly, poll := `#schedules tr[data-schedule="nightly"] `, `#schedules tr[data-schedule="poll"] `
	require.Equal(t, "0 3 * * * (America/New_York)", pageText(tab, t, nightly+`[data-col="spec"]`))
	require.Equal(t, "every 30 s", pageText(tab, t, poll+`[data-col="spec"]`))
	require.Equal(t, nextRunsShown, count(tab, t, nightly+`.next-runs li`))
	require.Equal(t, 2, count(tab, t, poll+`.next-runs li`), "no more than its limit")
	require.Equal(t, "0 of 2", pageText(tab, t, poll+`[data-col="count"]`))
	// The page's times are the occurrences at 3:00 in New York.
	first := eval[string](tab, t, `document.querySelector('#schedules tr[data-schedule="nightly"] .next-runs li').title`)
	require.True(t, strings.HasPrefix(first, "in "), first)

	clickOf(tab, t, nightly+`[data-sched-act="pause"]`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(nightly+`[data-sched-act="resume"]`)))
	require.Equal(t, "paused", pageText(tab, t, nightly+`[data-col="state"]`))
	require.Equal(t, "–", pageText(tab, t, nightly+`[data-col="next"]`))
	info, err := sc.Get(ctx, "nightly")
	require.NoError(t, err)
	require.True(t, info.Paused)
	clickOf(tab, t, nightly+`[data-sched-act="resume"]`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(nightly+`[data-sched-act="pause"]`)))
	clickOf(tab, t, poll+`[data-sched-act="remove"]`)
	within(tab, t, 10*time.Second,
		chromedp.WaitVisible(chromedp.CSS(`#confirm-ok`)),
		chromedp.Click(chromedp.CSS(`#confirm-ok`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#schedules tr[data-schedule="poll"]`)),
	)
	waitText(tab, t, `.notice`, func(s string) bool { return s == "Removed schedule poll." })
	_, err = sc.Get(ctx, "poll")
	require.ErrorIs(t, err, trafikey.ErrNotFound)
	info, err = sc.Get(ctx, "nightly")
	require.NoError(t, err)
	require.False(t, info.Paused)
}

// browseDelete deletes a queue after its name is typed.
func browseDelete(t *testing.T, tab context.Context, url string, c valkey.Client) {
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "doomed", nil)
	require.NoError(t, err)
	_, err = q.Add(ctx, []byte("x"), nil)
	require.NoError(t, err)
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/queue/doomed"),
		chromedp.WaitVisible(chromedp.CSS(`#act-delete`)),
		chromedp.Click(chromedp.CSS(`#act-delete`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-name`)),
	)
	require.True(t, eval[bool](tab, t, `document.querySelector("#confirm-ok").disabled`), "no name typed: no delete")
	within(tab, t, 10*time.Second, chromedp.SendKeys(chromedp.CSS(`#confirm-name`), "doome"))
	require.True(t, eval[bool](tab, t, `document.querySelector("#confirm-ok").disabled`), "another name: no delete")
	within(tab, t, 10*time.Second,
		chromedp.SendKeys(chromedp.CSS(`#confirm-name`), "d"),
		chromedp.WaitEnabled(chromedp.CSS(`#confirm-ok`)),
		chromedp.Click(chromedp.CSS(`#confirm-ok`)),
		chromedp.WaitVisible(chromedp.CSS(`#queues`)),
	)
	require.Equal(t, "#/", eval[string](tab, t, `location.hash`))
	waitText(tab, t, `.notice`, func(s string) bool { return strings.HasPrefix(s, "Deleted queue doomed (") })
	require.Zero(t, count(tab, t, `tr[data-queue="doomed"]`))
	require.NotZero(t, count(tab, t, `tr[data-queue="tenants"]`))
	names, err := admin.FindQueues(ctx, c)
	require.NoError(t, err)
	require.NotContains(t, names, "doomed")
	require.Contains(t, names, "tenants")
}

// pageText reads the text of the first node matching sel in one
// evaluation ("" when there is none): the pages build some nodes again at
// each tick, which a node query could hold on to after they went.
func pageText(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	return strings.TrimSpace(eval[string](ctx, t, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel)))
}

// TestBrowserUnreachable opens the dashboard while the server is down, and
// follows it coming back, going down again and coming back.
func TestBrowserUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: drives the dashboard in Chromium")
	}
	t.Parallel()
	tab := browser(t)
	s := valkeytest.Start(t, valkeyserver.Options{Dir: t.TempDir(), AOF: true})
	require.NoError(t, s.Stop())
	addr := s.Addr()
	d, err := Dial(func() (valkey.Client, error) {
		return valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	}, Options{SampleEvery: 100 * time.Millisecond, DiscoverEvery: 200 * time.Millisecond, Where: addr})
	require.NoError(t, err)
	srv := serveDash(t, d)

	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/#/"),
		chromedp.WaitVisible(chromedp.CSS(`#unreachable`)),
	)
	require.Contains(t, pageText(tab, t, `#unreachable`), "The server is unreachable since ")
	require.Contains(t, pageText(tab, t, `#unreachable`), "Nothing has been read yet")
	require.Zero(t, count(tab, t, `#totals .card`), "no count shown, not even zeros")
	require.Zero(t, count(tab, t, `#queues`))
	require.True(t, strings.HasPrefix(pageText(tab, t, `#status`), "server unreachable"))

	require.NoError(t, s.Restart(t.Context()))
	c := valkeytest.Client(t, s)
	mail, err := trafikey.Open(t.Context(), c, "mail", nil)
	require.NoError(t, err)
	_, err = mail.AddBatch(t.Context(), []trafikey.JobSpec{{Payload: []byte("a")}, {Payload: []byte("b")}})
	require.NoError(t, err)
	within(tab, t, 15*time.Second,
		chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="mail"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#unreachable`)),
	)
	waitText(tab, t, `tr[data-queue="mail"] td[data-col="pending"]`, func(s string) bool { return s == "2" })

	// Down again: said so, the last counts kept and marked.
	require.NoError(t, s.Stop())
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#unreachable`)))
	require.Contains(t, pageText(tab, t, `#unreachable`), "The counts shown are the last read")
	require.Equal(t, "2", pageText(tab, t, `tr[data-queue="mail"] td[data-col="pending"]`))
	require.True(t, eval[bool](tab, t, `document.querySelector("#totals").classList.contains("stale")`))
	// A queue's page says so too, and follows the server's return. The
	// overview's notice may still be on screen while the queue's page is
	// built, so the test waits for the queue's own.
	within(tab, t, 10*time.Second, chromedp.Navigate(srv.URL+"/#/queue/mail"))
	waitText(tab, t, `#unreachable`, func(s string) bool { return strings.Contains(s, "The server is unreachable") })
	require.NoError(t, s.Restart(t.Context()))
	waitText(tab, t, `#counts [data-card="pending"] .n`, func(s string) bool { return s == "2" })
	require.Zero(t, count(tab, t, `#unreachable`))
}

// TestBrowserLogin opens a dashboard that asks for a token: refused
// without it, and with it once in the address, every page and the live
// stream work from its cookie.
func TestBrowserLogin(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: drives the dashboard in Chromium")
	}
	t.Parallel()
	tab := browser(t)
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	_, err := trafikey.Open(t.Context(), c, "mail", nil)
	require.NoError(t, err)
	const token = "browser-token-0123456789"
	srv := startDash(t, c, Options{Auth: Auth{Token: token}})

	within(tab, t, 10*time.Second, chromedp.Navigate(srv.URL+"/"))
	require.Contains(t, pageText(tab, t, `body`), "this dashboard asks for a login")
	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/?token="+url.QueryEscape(token)+"#/queue/mail"),
		chromedp.WaitVisible(chromedp.CSS(`#counts`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="yes"]`)),
	)
	require.Equal(t, srv.URL+"/#/queue/mail", eval[string](tab, t, `location.href`), "the token is not left in the address")
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`#act-pause`)),
		chromedp.WaitVisible(chromedp.CSS(`#act-resume`)),
	)
	st, err := mustQueue(t, c, "mail").Stats(t.Context())
	require.NoError(t, err)
	require.True(t, st.Paused)
	status := eval[int](tab, t, `fetch("api/info").then(r => r.status)`, chromedp.EvalAwaitPromise)
	require.Equal(t, http.StatusOK, status)
}

// TestBrowserBasicAuth opens a dashboard that asks for basic
// authentication, the browser answering its challenge as an operator
// answers the prompt: every page, action and the live stream then work.
// (The refusal without it is TestAuth's and TestBrowserLogin's.)
func TestBrowserBasicAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: drives the dashboard in Chromium")
	}
	t.Parallel()
	tab := browser(t)
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	_, err := trafikey.Open(t.Context(), c, "mail", nil)
	require.NoError(t, err)
	srv := startDash(t, c, Options{Auth: Auth{User: "ops", Password: "a long pass phrase"}})

	// Every request is paused by the Fetch domain, and continued; a
	// challenge is answered with the user and password.
	var prompts atomic.Int64
	events, done := make(chan any, 1024), make(chan struct{})
	require.NoError(t, chromedp.Listen(tab, func(ev any) {
		switch ev.(type) {
		case *fetch.EventRequestPaused, *fetch.EventAuthRequired:
			select {
			case events <- ev:
			case <-done:
			}
		}
	}))
	// The tab's session, for the calls made while an action (a
	// navigation) waits for them.
	var session *chromedp.Target
	handle := true
	require.NoError(t, chromedp.Do(tab, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		session = tg
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &handle})
		return err
	})))
	go func() {
		for {
			var ev any
			select {
			case ev = <-events:
			case <-done:
				return
			}
			// A request not continued fails the navigation that waits
			// for it: the calls' errors show there.
			switch e := ev.(type) {
			case *fetch.EventRequestPaused:
				_, _ = cdp.Call(tab, session, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
			case *fetch.EventAuthRequired:
				prompts.Add(1)
				resp := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: "ops", Password: "a long pass phrase"}
				_, _ = cdp.Call(tab, session, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: e.RequestID, AuthChallengeResponse: resp})
			}
		}
	}()
	t.Cleanup(func() { close(done) })

	within(tab, t, 15*time.Second,
		chromedp.Navigate(srv.URL+"/#/queue/mail"),
		chromedp.WaitVisible(chromedp.CSS(`#counts`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="yes"]`)),
		chromedp.Click(chromedp.CSS(`#act-pause`)),
		chromedp.WaitVisible(chromedp.CSS(`#act-resume`)),
	)
	st, err := mustQueue(t, c, "mail").Stats(t.Context())
	require.NoError(t, err)
	require.True(t, st.Paused)
	// One prompt: the browser sends what it was given with the pages' own
	// requests and the live stream.
	require.Equal(t, int64(1), prompts.Load())
	status := eval[int](tab, t, `fetch("api/info").then(r => r.status)`, chromedp.EvalAwaitPromise)
	require.Equal(t, http.StatusOK, status)
}
