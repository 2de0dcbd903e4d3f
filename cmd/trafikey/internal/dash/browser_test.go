package dash

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/repo"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// screenshotsEnv, set to 1, makes the browser test write the dashboard's
// screenshots into docs/.
const screenshotsEnv = "TRAFIKEY_WRITE_SCREENSHOTS"

// browser starts a headless Chromium for the test and returns a context
// of one tab in it. Without a chromium binary the test fails: the
// dashboard's browser tests never pass by not running.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Fatal("no chromium on PATH: the dashboard's browser tests need it; install it with scripts/install-chromium.sh")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox refuses to start
		chromedp.WindowSize(1280, 860),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-device-scale-factor", "1"),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// The first run starts the browser. The pages are seen as by a person
	// who asked for reduced motion: a changed value is not flashed, so a
	// screenshot shows it still.
	require.NoError(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}},
		})
		return err
	})), "start %s", bin)
	return ctx
}

// within bounds one step of the browser test.
func within(ctx context.Context, t *testing.T, d time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	stepCtx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := chromedp.Do(stepCtx, steps...); err != nil {
		// What the page showed, to tell why.
		seen, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash + " | dialog open: " + document.querySelector("#confirm").open + " focus " + (document.activeElement && document.activeElement.id) + " | " + document.querySelector("#view").innerText.slice(0, 600)`))
		t.Fatalf("%v; the page: %s", err, seen)
	}
}

// eval evaluates a JavaScript expression in the tab.
func eval[T any](ctx context.Context, t *testing.T, expr string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	stepCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(stepCtx, chromedp.Evaluate[T](expr, opts...))
	require.NoError(t, err, "evaluate %s", expr)
	return v
}

// textOf reads the text of the first node matching sel, waiting up to 10 s
// for one. It reads in one evaluation: the pages build some nodes again at
// each tick, which a node query could hold on to after they went.
func textOf(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	expr := fmt.Sprintf(`(() => { const n = document.querySelector(%q); return n ? [n.textContent] : []; })()`, sel)
	for {
		stepCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		got, err := chromedp.Run(stepCtx, chromedp.Evaluate[[]string](expr))
		cancel()
		if err == nil && len(got) == 1 {
			return strings.TrimSpace(got[0])
		}
		if time.Now().After(deadline) {
			t.Fatalf("text of %s: no such node (err %v)", sel, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// clickOf clicks the first node matching sel, waiting up to 10 s for one,
// in one evaluation, as textOf reads: a table the page builds again at each
// tick can replace the node between a query and a click.
func clickOf(ctx context.Context, t *testing.T, sel string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	expr := fmt.Sprintf(`(() => { const n = document.querySelector(%q); if (!n) return false; n.click(); return true; })()`, sel)
	for {
		stepCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		clicked, err := chromedp.Run(stepCtx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && clicked {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("click %s: no such node (err %v)", sel, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitText waits until the first node matching sel has a text for which
// ok holds, and returns it.
func waitText(ctx context.Context, t *testing.T, sel string, ok func(string) bool) string {
	t.Helper()
	var s string
	deadline := time.Now().Add(15 * time.Second)
	for {
		stepCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var err error
		s, err = chromedp.Run(stepCtx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel)))
		cancel()
		if err == nil && ok(strings.TrimSpace(s)) {
			return strings.TrimSpace(s)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: text %q never became what the test waits for (err %v)", sel, s, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func count(ctx context.Context, t *testing.T, sel string) int {
	t.Helper()
	return eval[int](ctx, t, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

func number(s string) int64 {
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// screenshot writes the tab's viewport to docs/name when screenshotsEnv is
// set.
func screenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if os.Getenv(screenshotsEnv) != "1" {
		return
	}
	root, err := repo.Root()
	require.NoError(t, err)
	stepCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(stepCtx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	path := filepath.Join(root, "docs", name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("wrote %s", path)
}

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: drives the dashboard in Chromium, which takes tens of seconds; the full run (go test ./cmd/trafikey/..., as scripts/test.sh runs it) covers it")
	}
	t.Parallel()
	tab := browser(t)
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()

	// 100 queues: mail (a worker runs it), reports (a dead job), and 98
	// tenants with a few jobs each.
	mail, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	reports, err := trafikey.Open(ctx, c, "reports", nil)
	require.NoError(t, err)
	for i := range 98 {
		q, err := trafikey.Open(ctx, c, fmt.Sprintf("tenant-%02d", i), nil)
		require.NoError(t, err)
		jobs := make([]trafikey.JobSpec, 1+i%5)
		for j := range jobs {
			jobs[j] = trafikey.JobSpec{Payload: []byte("x")}
			if j%2 == 1 {
				jobs[j].Options = trafikey.JobOptions{Lane: fmt.Sprintf("customer-%d", j)}
			}
		}
		_, err = q.AddBatch(ctx, jobs)
		require.NoError(t, err)
	}
	const mailJobs = 3000
	batch := make([]trafikey.JobSpec, mailJobs)
	for i := range batch {
		batch[i] = trafikey.JobSpec{Payload: []byte(`{"to":"user@example.com"}`)}
	}
	_, err = mail.AddBatch(ctx, batch)
	require.NoError(t, err)
	payload := `{"report":"monthly","format":"pdf","note":"<img src=x onerror=alert(1)>","pages":[1,2,3]}`
	dead := deadJob(t, reports, payload, trafikey.JobOptions{Lane: "acme", Kind: "invoice"})

	srv := startDash(t, c, Options{SampleEvery: 250 * time.Millisecond})

	// The overview, with 100 queues.
	within(tab, t, 20*time.Second,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#queues tbody tr:nth-child(100)`)),
	)
	// Measured, not asserted: the first load in a new browser, then
	// reloads, each from navigation start to the overview's table built
	// (the API calls and the DOM build apart).
	sinceNav, build := overviewTimes(tab, t)
	t.Logf("overview with 100 queues, first load in a new browser: rendered %.1f ms after navigation start (API calls and DOM build %.1f ms)", sinceNav, build)
	var navs, builds []float64
	for range overviewReloads {
		within(tab, t, 20*time.Second, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#queues tbody tr:nth-child(100)`)))
		a, b := overviewTimes(tab, t)
		navs, builds = append(navs, a), append(builds, b)
	}
	t.Logf("overview with 100 queues, %d reloads: rendered %s ms after navigation start (API calls and DOM build %s ms), median (min–max)",
		overviewReloads, spread(navs), spread(builds))
	require.Equal(t, 100, count(tab, t, `#queues tbody tr`))
	require.Equal(t, "0", textOf(tab, t, `tr[data-queue="mail"] td[data-col="completed"]`))

	// A worker runs mail's jobs slowly: the overview's counts follow.
	var ran atomic.Int64
	wctx, stopWorker := context.WithCancel(ctx)
	w, err := trafikey.NewWorker(mail, func(ctx context.Context, _ *trafikey.Job) error {
		if ran.Add(1)%7 == 0 {
			return trafikey.SkipRetry(fmt.Errorf("mailbox full"))
		}
		select {
		case <-time.After(15 * time.Millisecond):
		case <-ctx.Done():
		}
		return nil
	}, trafikey.WorkerOptions{Concurrency: 2})
	require.NoError(t, err)
	workerDone := make(chan error, 1)
	go func() { workerDone <- w.Run(wctx) }()
	first := waitText(tab, t, `tr[data-queue="mail"] td[data-col="completed"]`, func(s string) bool { return number(s) > 0 })
	waitText(tab, t, `tr[data-queue="mail"] td[data-col="completed"]`, func(s string) bool { return number(s) > number(first) })
	waitText(tab, t, `tr[data-queue="mail"] td[data-col="pending"]`, func(s string) bool { n := number(s); return n >= 0 && n < mailJobs })
	waitText(tab, t, `tr[data-queue="mail"] td[data-col="dead"]`, func(s string) bool { return number(s) > 0 })
	require.Equal(t, "1", textOf(tab, t, `tr[data-queue="reports"] td[data-col="dead"]`))
	// Let the chart gather a few seconds of the run.
	time.Sleep(2500 * time.Millisecond)
	require.Positive(t, count(tab, t, `svg.chart path.completed`))
	screenshot(tab, t, "dash-overview.png")
	stopWorker()
	require.NoError(t, <-workerDone)

	// The queue page: counts, lanes and actions.
	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/#/queue/tenant-04"),
		chromedp.WaitVisible(chromedp.CSS(`#lanes`)),
	)
	require.Equal(t, "5", textOf(tab, t, `[data-card="pending"] .n`))
	require.Equal(t, 2, count(tab, t, `#lanes tbody tr`))
	within(tab, t, 10*time.Second, chromedp.Click(chromedp.CSS(`#act-pause`)), chromedp.WaitVisible(chromedp.CSS(`#act-resume`)))
	st, err := mustQueue(t, c, "tenant-04").Stats(ctx)
	require.NoError(t, err)
	require.True(t, st.Paused)
	within(tab, t, 10*time.Second, chromedp.Click(chromedp.CSS(`#act-resume`)), chromedp.WaitVisible(chromedp.CSS(`#act-pause`)))

	browseTables(t, tab, srv.URL, c, mail)

	// The dead job, found with the search box: its payload pretty-printed
	// and escaped, its error, logs and lane.
	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/#/"),
		chromedp.WaitReady(chromedp.CSS(`#search-queue option[value="reports"]`)),
		chromedp.SetValue(chromedp.CSS(`#search-queue`), "reports"),
		chromedp.SendKeys(chromedp.CSS(`#search-id`), dead),
		chromedp.Click(chromedp.CSS(`#search button`)),
		chromedp.WaitVisible(chromedp.CSS(`#job-payload`)),
	)
	require.Equal(t, "dead", textOf(tab, t, `[data-field="state"]`))
	require.Equal(t, "acme", textOf(tab, t, `[data-field="lane"]`))
	require.Equal(t, "invoice", textOf(tab, t, `[data-field="kind"]`))
	require.Equal(t, "1 of 1", textOf(tab, t, `[data-field="attempts"]`))
	require.Contains(t, textOf(tab, t, `#job-payload`), "\"note\": \"<img src=x onerror=alert(1)>\",\n  \"pages\": [\n    1,")
	require.Equal(t, 0, count(tab, t, `#view img`), "the payload is shown as text, never as markup")
	require.Contains(t, textOf(tab, t, `#job-error`), "550 <ada@example.com>")
	require.Equal(t, "connecting to smtp.example.com", textOf(tab, t, `#job-logs li`))
	screenshot(tab, t, "dash-job.png")

	// Requeue: the job leaves the dead set.
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`#act-requeue`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-field="state"] [data-state="pending"]`)),
	)
	info, err := reports.Inspect(ctx, dead)
	require.NoError(t, err)
	require.Equal(t, trafikey.StatePending, info.State)
	require.False(t, eval[bool](tab, t, `document.querySelector("#act-cancel").disabled`), "a pending job can be cancelled")
	within(tab, t, 10*time.Second, chromedp.Navigate(srv.URL+"/#/"), chromedp.WaitVisible(chromedp.CSS(`#queues`)))
	waitText(tab, t, `tr[data-queue="reports"] td[data-col="dead"]`, func(s string) bool { return s == "0" })

	browseFlow(t, tab, srv.URL, c)

	// Read-only: no action on any page, and the API refuses them.
	dead2 := deadJob(t, reports, "\x00\x01binary", trafikey.JobOptions{})
	ro := startDash(t, c, Options{ReadOnly: true})
	within(tab, t, 10*time.Second,
		chromedp.Navigate(ro.URL+"/#/job/reports/"+dead2),
		chromedp.WaitVisible(chromedp.CSS(`#job-payload`)),
	)
	require.Contains(t, textOf(tab, t, `#job-payload`), "00 01 62 69 6e 61 72 79")
	require.Equal(t, "read-only", textOf(tab, t, `#mode`))
	require.Equal(t, 0, count(tab, t, `#act-requeue, #act-remove, #act-cancel`))
	within(tab, t, 10*time.Second, chromedp.Navigate(ro.URL+"/#/queue/reports"), chromedp.WaitVisible(chromedp.CSS(`#counts`)))
	require.Equal(t, 0, count(tab, t, `#act-pause, #act-resume, #act-promote`))
	within(tab, t, 10*time.Second, chromedp.Navigate(ro.URL+"/#/jobs/reports/dead"), chromedp.WaitVisible(chromedp.CSS(`#jobs tr[data-job="`+dead2+`"]`)))
	require.Equal(t, 0, count(tab, t, `[data-act], #bulk-requeue, #bulk-remove-old`))
	status := eval[int](tab, t, `fetch("api/queues/reports/jobs/`+dead2+`/requeue", {method: "POST", headers: {"X-Trafikey-Action": "1"}}).then(r => r.status)`, chromedp.EvalAwaitPromise)
	require.Equal(t, http.StatusForbidden, status)
	info, err = reports.Inspect(ctx, dead2)
	require.NoError(t, err)
	require.Equal(t, trafikey.StateDead, info.State)

	browseLive(t, tab, c)
}

// browseTables checks the job tables: from the overview to a queue's dead
// jobs, a dead job requeued from its page, paging, finding by id, and the
// row and bulk actions.
func browseTables(t *testing.T, tab context.Context, url string, c valkey.Client, mail *trafikey.Queue) {
	ctx := t.Context()
	st, err := mail.Stats(ctx)
	require.NoError(t, err)
	require.Greater(t, st.Dead, 1, "the worker let some jobs die")
	require.Greater(t, st.Pending, 50)

	// The overview's dead count opens the dead table, newest first.
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="mail"] td[data-col="dead"] a`)),
	)
	clickOf(tab, t, `tr[data-queue="mail"] td[data-col="dead"] a`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#jobs[data-state="dead"]`)))
	require.Equal(t, int(min(st.Dead, 25)), count(tab, t, `#jobs tbody tr`))
	require.Equal(t, "on", eval[string](tab, t, `document.querySelector('[data-tab="dead"]').className`))
	require.Contains(t, textOf(tab, t, `#jobs tbody tr:first-child .detail`), "mailbox full")
	screenshot(tab, t, "dash-jobs.png")

	// A dead job opened from the table and requeued leaves the dead set.
	first := eval[string](tab, t, `document.querySelector("#jobs tbody tr").dataset.job`)
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`#jobs tbody tr:first-child td a`)),
		chromedp.WaitVisible(chromedp.CSS(`#act-requeue`)),
	)
	require.Equal(t, "Job "+first+"dead", textOf(tab, t, `h1`)[:len("Job "+first+"dead")])
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`#act-requeue`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-field="state"] [data-state="pending"]`)),
		chromedp.Click(chromedp.CSS(`.crumbs a[href="#/jobs/mail/pending"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs[data-state="pending"]`)),
		chromedp.Navigate(url+"/#/jobs/mail/dead"),
		chromedp.WaitVisible(chromedp.CSS(`#jobs[data-state="dead"]`)),
	)
	require.Zero(t, count(tab, t, `#jobs tr[data-job="`+first+`"]`))
	waitText(tab, t, `[data-tab="dead"] .count`, func(s string) bool { return number(s) == int64(st.Dead-1) })

	// Finding by id: a dead job, then one in another state.
	other := eval[string](tab, t, `document.querySelector("#jobs tbody tr").dataset.job`)
	within(tab, t, 10*time.Second,
		chromedp.SendKeys(chromedp.CSS(`#jobs-find`), other),
		chromedp.Click(chromedp.CSS(`#jobs-search button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs-find-clear`)),
	)
	require.Equal(t, 1, count(tab, t, `#jobs tbody tr`))
	require.Equal(t, other, eval[string](tab, t, `document.querySelector("#jobs tbody tr").dataset.job`))
	within(tab, t, 10*time.Second,
		chromedp.SetValue(chromedp.CSS(`#jobs-find`), first),
		chromedp.Click(chromedp.CSS(`#jobs-search button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs-box .notice`)),
	)
	require.Contains(t, textOf(tab, t, `#jobs-box .notice`), "Job "+first+" is pending, not dead")

	// Paging the pending jobs: claim order, next and back.
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/jobs/mail/pending"),
		chromedp.WaitVisible(chromedp.CSS(`#page-next`)),
	)
	ids := `Array.from(document.querySelectorAll("#jobs tbody tr"), (r) => r.dataset.job).join(",")`
	page1 := eval[string](tab, t, ids)
	require.Len(t, strings.Split(page1, ","), 25)
	require.True(t, strings.HasPrefix(textOf(tab, t, `#page-where`), "1–25 of "))
	within(tab, t, 10*time.Second, chromedp.Click(chromedp.CSS(`#page-next`)))
	waitText(tab, t, `#page-where`, func(s string) bool { return strings.HasPrefix(s, "26–50 of ") })
	page2 := eval[string](tab, t, ids)
	require.Len(t, strings.Split(page2, ","), 25)
	p1, p2 := strings.Split(page1, ","), strings.Split(page2, ",")
	require.Less(t, number(p1[24]), number(p2[0]), "the jobs of one priority in id order")
	within(tab, t, 10*time.Second, chromedp.Click(chromedp.CSS(`#page-prev`)))
	waitText(tab, t, `#page-where`, func(s string) bool { return strings.HasPrefix(s, "1–25 of ") })
	require.Equal(t, page1, eval[string](tab, t, ids))

	// An answer that lands after a later read's is dropped: next is clicked
	// with its read held back, then previous at once, so the third page's
	// answer comes last. Every set of rows the table shows meanwhile is
	// noted: a tick's read soon shows the second page again, so only the
	// notes catch the third page's rows shown in between.
	within(tab, t, 10*time.Second, chromedp.Click(chromedp.CSS(`#page-next`)))
	waitText(tab, t, `#page-where`, func(s string) bool { return strings.HasPrefix(s, "26–50 of ") })
	require.Equal(t, page2, eval[string](tab, t, ids))
	type race struct {
		Asked []string `json:"asked"`
		Shown []string `json:"shown"`
	}
	r := eval[race](tab, t, `new Promise((done) => {
		const real = window.fetch;
		const asked = [], shown = [];
		const rows = () => Array.from(document.querySelectorAll("#jobs tbody tr"), (r) => r.dataset.job).join(",") + " " + document.querySelector("#page-where").textContent;
		const seen = new MutationObserver(() => shown.push(rows()));
		seen.observe(document.querySelector("#view"), { childList: true, subtree: true, characterData: true });
		window.fetch = (u, o) => {
			const p = real(u, o);
			if (!String(u).includes("/jobs?")) return p;
			asked.push(String(u));
			if (asked.length > 1) return p;
			// Settled, then a while for the page to take the answer or drop it.
			return p.then((r) => new Promise((ok) => setTimeout(() => {
				ok(r);
				setTimeout(() => { window.fetch = real; seen.disconnect(); done({ asked, shown }); }, 300);
			}, 1500)));
		};
		document.querySelector("#page-next").click();
		document.querySelector("#page-prev").click();
	})`, chromedp.EvalAwaitPromise)
	require.GreaterOrEqual(t, len(r.Asked), 2, "the held read and previous's")
	require.NotEqual(t, r.Asked[0], r.Asked[1], "the held read is the third page's")
	for _, s := range r.Shown {
		require.True(t, strings.HasPrefix(s, page2+" 26–50 of "), "shown after previous: %s", s)
	}
	require.Equal(t, page2, eval[string](tab, t, ids))
	within(tab, t, 10*time.Second, chromedp.Click(chromedp.CSS(`#page-prev`)))
	waitText(tab, t, `#page-where`, func(s string) bool { return strings.HasPrefix(s, "1–25 of ") })

	// Requeue every dead job, after a confirmation: first declined (with
	// Escape, which a busy page cannot misplace as a click), then given.
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/jobs/mail/dead"),
		chromedp.WaitVisible(chromedp.CSS(`#bulk-requeue`)),
		chromedp.Click(chromedp.CSS(`#bulk-requeue`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-cancel`)),
		chromedp.KeyEvent(kb.Escape),
		chromedp.WaitNotVisible(chromedp.CSS(`#confirm`)),
	)
	st2, err := mail.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, st.Dead-1, st2.Dead, "cancelled: nothing requeued")
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`#bulk-requeue`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-ok`)),
		chromedp.Click(chromedp.CSS(`#confirm-ok`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs-empty`)),
	)
	require.Equal(t, fmt.Sprintf("Requeued %d dead jobs.", st.Dead-1), textOf(tab, t, `.notice`))
	st2, err = mail.Stats(ctx)
	require.NoError(t, err)
	require.Zero(t, st2.Dead)

	// Run a delayed job now from its row.
	later, err := mail.Add(ctx, []byte(`{"at":"tomorrow"}`), &trafikey.JobOptions{Delay: 24 * time.Hour})
	require.NoError(t, err)
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/jobs/mail/delayed"),
		chromedp.WaitVisible(chromedp.CSS(`#jobs tr[data-job="`+later+`"] [data-act="retry"]`)),
	)
	clickOf(tab, t, `#jobs tr[data-job="`+later+`"] [data-act="retry"]`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#jobs-empty`)))
	info, err := mail.Inspect(ctx, later)
	require.NoError(t, err)
	require.Equal(t, trafikey.StatePending, info.State)

	// Remove the dead jobs older than an age: 0 takes them all.
	old, err := trafikey.Open(ctx, c, "cleanup", nil)
	require.NoError(t, err)
	gone := deadJob(t, old, "x", trafikey.JobOptions{})
	within(tab, t, 10*time.Second,
		chromedp.Navigate(url+"/#/jobs/cleanup/dead"),
		chromedp.WaitVisible(chromedp.CSS(`#jobs tr[data-job="`+gone+`"]`)),
		chromedp.Click(chromedp.CSS(`#bulk-remove-old`)),
		chromedp.WaitVisible(chromedp.CSS(`#confirm-age`)),
		chromedp.SetValue(chromedp.CSS(`#confirm-age`), "0"),
		chromedp.Click(chromedp.CSS(`#confirm-ok`)),
		chromedp.WaitVisible(chromedp.CSS(`#jobs-empty`)),
	)
	require.Contains(t, textOf(tab, t, `.notice`), "Removed 1 dead job")
	_, err = old.Inspect(ctx, gone)
	require.ErrorIs(t, err, trafikey.ErrNotFound)
}

// browseFlow checks a flow's pages: a parent with its children, their
// results and errors, and a retained parent's result.
func browseFlow(t *testing.T, tab context.Context, url string, c valkey.Client) {
	ctx := t.Context()
	flows, err := trafikey.Open(ctx, c, "flows", nil)
	require.NoError(t, err)
	require.NoError(t, flows.Admin().SetRetention(ctx, trafikey.RetentionPolicy{KeepCompleted: time.Hour}))
	ids, err := flows.AddFlow(ctx, trafikey.JobSpec{
		Payload: []byte(`{"invoice":7}`),
		Children: []trafikey.JobSpec{
			{Payload: []byte("render")},
			{Payload: []byte("mail"), OnFail: trafikey.ChildRecorded, Options: trafikey.JobOptions{MaxAttempts: 1}},
		},
	})
	require.NoError(t, err)
	parent, ok, bad := ids.ID, ids.Children[0].ID, ids.Children[1].ID
	for _, want := range []string{ok, bad} {
		jobs, err := flows.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		require.Equal(t, want, jobs[0].ID)
		if want == ok {
			jobs[0].SetResult([]byte(`{"pages":3}`))
			require.NoError(t, jobs[0].Complete(ctx))
			// The parent waits for the other child.
			within(tab, t, 10*time.Second,
				chromedp.Navigate(url+"/#/job/flows/"+parent),
				chromedp.WaitVisible(chromedp.CSS(`#job-children`)),
			)
			require.Equal(t, "1 child", textOf(tab, t, `[data-field="waiting for"]`))
			continue
		}
		_, err = jobs[0].Fail(ctx, errors.New("smtp down"), false)
		require.NoError(t, err)
	}
	// This queue has no events: the page is read again by a reload.
	within(tab, t, 10*time.Second,
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#job-children`)),
	)
	require.Equal(t, "pending", textOf(tab, t, `[data-field="state"]`))
	require.Contains(t, textOf(tab, t, `tr[data-child="`+ok+`"]`), "\"pages\": 3")
	require.Contains(t, textOf(tab, t, `tr[data-child="`+bad+`"]`), "smtp down")
	clickOf(tab, t, `tr[data-child="`+bad+`"] a`)
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`#job-parent`)))
	require.Equal(t, "dead", textOf(tab, t, `[data-field="state"]`))
	require.Equal(t, "job "+parent, textOf(tab, t, `#job-parent`))

	// The parent runs; retained, its page shows its result.
	jobs, err := flows.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, parent, jobs[0].ID)
	jobs[0].SetResult([]byte(`{"sent":false,"why":"<script>"}`))
	require.NoError(t, jobs[0].Complete(ctx))
	within(tab, t, 10*time.Second,
		chromedp.Click(chromedp.CSS(`#job-parent`)),
		chromedp.WaitVisible(chromedp.CSS(`#job-result`)),
	)
	require.Equal(t, "completed", textOf(tab, t, `[data-field="state"]`))
	require.Equal(t, "{\n  \"sent\": false,\n  \"why\": \"<script>\"\n}", textOf(tab, t, `#job-result`))
	require.Equal(t, "json", eval[string](tab, t, `document.querySelector("#job-result").dataset.format`))
}

// browseLive checks the live updates of a queue with job events on, on a
// dashboard that samples once an hour: whatever changes on its pages came
// by the queue's events.
func browseLive(t *testing.T, tab context.Context, c valkey.Client) {
	ctx := t.Context()
	orders, err := trafikey.Open(ctx, c, "orders", nil)
	require.NoError(t, err)
	require.NoError(t, orders.Admin().SetEvents(ctx, 10000))
	srv := startDash(t, c, Options{SampleEvery: time.Hour})
	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/#/"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="orders"] .badge.live`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="yes"]`)),
	)
	require.Equal(t, "0", textOf(tab, t, `tr[data-queue="orders"] td[data-col="pending"]`))

	// The watch starts at a discovery: jobs are added until the page
	// shows them.
	stop := make(chan struct{})
	adding := make(chan struct{})
	go func() {
		defer close(adding)
		for {
			if _, err := orders.Add(ctx, []byte(`{"sku":"A-1"}`), nil); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	waitText(tab, t, `tr[data-queue="orders"] td[data-col="pending"]`, func(s string) bool { return number(s) >= 2 })
	waitText(tab, t, `#totals [data-card="pending"] .n`, func(s string) bool { return number(s) >= 2 })
	close(stop)
	<-adding

	// The queue page lists the events as they come, and its counts follow.
	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/#/queue/orders"),
		chromedp.WaitVisible(chromedp.CSS(`#counts`)),
	)
	before := number(textOf(tab, t, `[data-card="pending"] .n`))
	id, err := orders.Add(ctx, []byte(`{"sku":"B-2"}`), nil)
	require.NoError(t, err)
	waitText(tab, t, `#events li:first-child`, func(s string) bool { return strings.Contains(s, "job "+id) && strings.Contains(s, "added") })
	waitText(tab, t, `[data-card="pending"] .n`, func(s string) bool { return number(s) == before+1 })

	// A job page reads its job again when the job's events come.
	within(tab, t, 10*time.Second,
		chromedp.Navigate(srv.URL+"/#/job/orders/"+id),
		chromedp.WaitVisible(chromedp.CSS(`[data-field="state"] [data-state="pending"]`)),
	)
	var claimed *trafikey.Job
	for claimed == nil {
		jobs, err := orders.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Len(t, jobs, 1)
		if jobs[0].ID == id {
			claimed = jobs[0]
		} else {
			require.NoError(t, jobs[0].Complete(ctx))
		}
	}
	within(tab, t, 10*time.Second, chromedp.WaitVisible(chromedp.CSS(`[data-field="state"] [data-state="active"]`)))
	require.NoError(t, claimed.Progress(ctx, "half way"))
	waitText(tab, t, `[data-field="progress"]`, func(s string) bool { return s == "half way" })
}

// overviewReloads is how many reloads the overview's render is measured
// over.
const overviewReloads = 7

// overviewTimes reads the page's marks of its first overview: when it was
// rendered after navigation start, and how long its API calls and DOM
// build took.
func overviewTimes(tab context.Context, t *testing.T) (sinceNav, build float64) {
	t.Helper()
	sinceNav = eval[float64](tab, t, `performance.getEntriesByName("trafikey:overview-rendered")[0].startTime`)
	build = eval[float64](tab, t, `performance.getEntriesByName("trafikey:overview")[0].duration`)
	return sinceNav, build
}

// spread formats the median and the range of xs.
func spread(xs []float64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("%.1f (%.1f–%.1f)", s[len(s)/2], s[0], s[len(s)-1])
}

func mustQueue(t *testing.T, c valkey.Client, name string) *trafikey.Queue {
	t.Helper()
	q, err := trafikey.Open(t.Context(), c, name, &trafikey.QueueOptions{NoInstall: true})
	require.NoError(t, err)
	return q
}
