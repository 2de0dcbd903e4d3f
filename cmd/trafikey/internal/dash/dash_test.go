package dash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// startDash serves a dashboard over client on a free loopback port,
// sampling every 100 ms, until the test ends.
func startDash(t *testing.T, client valkey.Client, o Options) *httptest.Server {
	t.Helper()
	if o.SampleEvery == 0 {
		o.SampleEvery = 100 * time.Millisecond
	}
	o.DiscoverEvery = 200 * time.Millisecond
	o.Where = "test"
	d, err := New(client, o)
	require.NoError(t, err)
	return serveDash(t, d)
}

// serveDash runs d on a free loopback port until the test ends.
func serveDash(t *testing.T, d *Server) *httptest.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	srv := httptest.NewServer(d.Handler())
	t.Cleanup(func() {
		// Stopping the dashboard ends its live streams, which Close
		// would wait for.
		cancel()
		<-done
		srv.Close()
	})
	return srv
}

// deadJob adds a job with one attempt to q and fails it, so it is dead.
func deadJob(t *testing.T, q *trafikey.Queue, payload string, opts trafikey.JobOptions) string {
	t.Helper()
	ctx := t.Context()
	opts.MaxAttempts, opts.Priority = 1, 1000
	id, err := q.Add(ctx, []byte(payload), &opts)
	require.NoError(t, err)
	jobs, err := q.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, id, jobs[0].ID, "the job of top priority")
	require.NoError(t, jobs[0].Log(ctx, "connecting to smtp.example.com"))
	require.NoError(t, jobs[0].Progress(ctx, "40%"))
	retrying, err := jobs[0].Fail(ctx, errors.New("smtp: 550 <ada@example.com>: no such user"), true)
	require.NoError(t, err)
	require.False(t, retrying)
	return id
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string, http.Header) {
	t.Helper()
	res, err := srv.Client().Get(srv.URL + path)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b), res.Header
}

func post(t *testing.T, srv *httptest.Server, path string, header bool) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, nil)
	require.NoError(t, err)
	if header {
		req.Header.Set(actionHeader, "1")
	}
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// eventually polls get of path until body contains want.
func eventually(t *testing.T, srv *httptest.Server, path, want string) string {
	t.Helper()
	var body string
	require.Eventually(t, func() bool {
		_, body, _ = get(t, srv, path)
		return strings.Contains(body, want)
	}, 10*time.Second, 20*time.Millisecond, "GET %s never held %s", path, want)
	return body
}

func TestAPI(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	mail, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	slashed, err := trafikey.Open(ctx, c, "team/a", nil)
	require.NoError(t, err)
	_, err = slashed.Add(ctx, []byte("x"), &trafikey.JobOptions{Lane: "tenant-1"})
	require.NoError(t, err)
	id := deadJob(t, mail, `{"to":"<b>ada</b>"}`, trafikey.JobOptions{})
	srv := startDash(t, c, Options{})

	code, body, h := get(t, srv, "/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `<script src="app.js"></script>`)
	require.Contains(t, h.Get("Content-Security-Policy"), "default-src 'none'")
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	code, _, h = get(t, srv, "/app.js")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, h.Get("Content-Type"), "javascript")

	body = eventually(t, srv, "/api/queues", `"name":"team/a"`)
	require.Contains(t, body, `"name":"mail","paused":false,"pending":0,"delayed":0,"active":0,"dead":1`)

	code, body, _ = get(t, srv, "/api/queues/"+url.PathEscape("team/a"))
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"lanes":[{"name":"tenant-1","waiting":1,"active":0,"cap":0,"paused":false,"latency_ms":`)

	code, body, _ = get(t, srv, "/api/queues/mail/jobs/"+id)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"state":"dead"`)
	require.Contains(t, body, `"payload_format":"json"`)
	require.Contains(t, body, `"payload_text":"{\n  \"to\": \"\u003cb\u003eada\u003c/b\u003e\"\n}"`)
	require.Contains(t, body, `"logs":["connecting to smtp.example.com"]`)
	require.Contains(t, body, `"progress":"40%"`)

	code, body, _ = get(t, srv, "/api/queues/mail/jobs/12345")
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, `"code":"not_found"`)
	code, _, _ = get(t, srv, "/api/queues/nosuch")
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, int64(0), valkeytest.Do(t, s, "EXISTS", "emq:{nosuch}:version"), "reads write nothing")
	code, _, _ = get(t, srv, "/api/queues/"+url.PathEscape("a{b}"))
	require.Equal(t, http.StatusBadRequest, code)

	// Actions need the dashboard's header.
	code, body = post(t, srv, "/api/queues/mail/pause", false)
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, `"code":"forbidden"`)
	code, _ = post(t, srv, "/api/queues/mail/pause", true)
	require.Equal(t, http.StatusOK, code)
	st, err := mail.Stats(ctx)
	require.NoError(t, err)
	require.True(t, st.Paused)
	code, _ = post(t, srv, "/api/queues/mail/resume", true)
	require.Equal(t, http.StatusOK, code)
	code, body = post(t, srv, "/api/queues/mail/promote", true)
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"promoted":0}`, body)
	code, _ = post(t, srv, "/api/queues/mail/explode", true)
	require.Equal(t, http.StatusBadRequest, code)

	code, body = post(t, srv, "/api/queues/mail/jobs/"+id+"/requeue", true)
	require.Equal(t, http.StatusOK, code, body)
	code, body = post(t, srv, "/api/queues/mail/jobs/"+id+"/requeue", true)
	require.Equal(t, http.StatusConflict, code, "a pending job is not requeued")
	require.Contains(t, body, `"code":"refused"`)
	code, body = post(t, srv, "/api/queues/mail/jobs/"+id+"/cancel", true)
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"cancelled":"`+id+`"}`, body)
	code, _ = post(t, srv, "/api/queues/mail/jobs/"+id+"/cancel", true)
	require.Equal(t, http.StatusConflict, code, "a dead job is not cancelled")
	code, _ = post(t, srv, "/api/queues/mail/jobs/"+id+"/remove", true)
	require.Equal(t, http.StatusOK, code)
	code, _ = post(t, srv, "/api/queues/mail/jobs/"+id+"/remove", true)
	require.Equal(t, http.StatusNotFound, code)

	// The overview shows an action at once: the action samples again.
	_, body, _ = get(t, srv, "/api/queues")
	require.Contains(t, body, `"name":"mail","paused":false,"pending":0,"delayed":0,"active":0,"dead":0`)

	code, body, _ = get(t, srv, "/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `trafikey_queue_jobs{queue="team/a",state="pending"} 1`)
	require.Contains(t, body, `trafikey_queue_removed_total{queue="mail"} 1`)
	require.Contains(t, body, `trafikey_queue_requeued_total{queue="mail"} 1`)

	eventually(t, srv, "/api/series", `"points":[{`)
	eventually(t, srv, "/api/series?queue=mail", `"queue":"mail","sample_ms":100,"points":[{`)
}

func TestReadOnlyAPI(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	mail, err := trafikey.Open(t.Context(), c, "mail", nil)
	require.NoError(t, err)
	id := deadJob(t, mail, "x", trafikey.JobOptions{})
	srv := startDash(t, c, Options{ReadOnly: true})

	_, body, _ := get(t, srv, "/api/info")
	require.Contains(t, body, `"read_only":true`)
	for _, path := range []string{"/api/queues/mail/pause", "/api/queues/mail/promote", "/api/queues/mail/jobs/" + id + "/requeue", "/api/queues/mail/jobs/" + id + "/remove"} {
		code, body := post(t, srv, path, true)
		require.Equal(t, http.StatusForbidden, code, path)
		require.Contains(t, body, `"code":"read_only"`)
	}
	info, err := mail.Inspect(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, trafikey.StateDead, info.State)
	st, err := mail.Stats(t.Context())
	require.NoError(t, err)
	require.False(t, st.Paused)
}

// A dashboard whose ACL user may only read shows everything and changes
// nothing, even without ReadOnly.
func TestReadOnlyUser(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{Users: []string{"viewer on >pw ~emq:* +@read +evalsha_ro +eval_ro"}})
	owner := valkeytest.Client(t, s)
	mail, err := trafikey.Open(t.Context(), owner, "mail", nil)
	require.NoError(t, err)
	id := deadJob(t, mail, "x", trafikey.JobOptions{})
	viewer := valkeytest.ClientWith(t, s, valkey.ClientOption{Username: "viewer", Password: "pw"})
	srv := startDash(t, viewer, Options{})

	eventually(t, srv, "/api/queues", `"name":"mail","paused":false,"pending":0,"delayed":0,"active":0,"dead":1`)
	// Its events are watched with the reads the user has.
	require.NoError(t, mail.Admin().SetEvents(t.Context(), 100))
	eventually(t, srv, "/api/queues", `"live":true`)
	code, body, _ := get(t, srv, "/api/queues/mail/jobs/"+id)
	require.Equal(t, http.StatusOK, code, body)
	code, body = post(t, srv, "/api/queues/mail/jobs/"+id+"/requeue", true)
	require.Equal(t, http.StatusBadGateway, code)
	require.Contains(t, body, "NOPERM")
	info, err := mail.Inspect(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, trafikey.StateDead, info.State)
}

func TestLoopbackHosts(t *testing.T) {
	t.Parallel()
	for host, ok := range map[string]bool{
		"127.0.0.1:8090": true, "localhost:8090": true, "[::1]:8090": true, "127.1.2.3": true,
		"app.localhost:80": true, "evil.example.com:8090": false, "10.0.0.5:8090": false, "": false,
	} {
		require.Equal(t, ok, loopbackHost(host), host)
	}
	s := valkeytest.Start(t, valkeyserver.Options{})
	srv := startDash(t, valkeytest.Client(t, s), Options{LoopbackHosts: true})
	code, _, _ := get(t, srv, "/api/info")
	require.Equal(t, http.StatusOK, code)
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/info", nil)
	require.NoError(t, err)
	req.Host = "rebound.example.com"
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusMisdirectedRequest, res.StatusCode)
}

func TestAPIOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a cluster of three primaries, which takes seconds; the full run (go test ./cmd/trafikey/..., as scripts/test.sh runs it) covers it")
	}
	t.Parallel()
	cl := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3})
	c := valkeytest.ClusterClient(t, cl)
	ctx := t.Context()
	var last *trafikey.Queue
	for _, name := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"} {
		q, err := trafikey.Open(ctx, c, name, nil)
		require.NoError(t, err)
		_, err = q.Add(ctx, []byte("x"), nil)
		require.NoError(t, err)
		last = q
	}
	id := deadJob(t, last, `{"n":1}`, trafikey.JobOptions{})
	srv := startDash(t, c, Options{})
	body := eventually(t, srv, "/api/queues", `"name":"foxtrot"`)
	for _, name := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		require.Contains(t, body, `"name":"`+name+`","paused":false,"pending":1`)
	}
	code, body := post(t, srv, "/api/queues/foxtrot/jobs/"+id+"/requeue", true)
	require.Equal(t, http.StatusOK, code, body)
	info, err := last.Inspect(ctx, id)
	require.NoError(t, err)
	require.Equal(t, trafikey.StatePending, info.State)
	_, body, _ = get(t, srv, "/metrics")
	require.Contains(t, body, `trafikey_queue_jobs{queue="charlie",state="pending"} 1`)
}

// jobsOf reads a page of a job table.
func jobsOf(t *testing.T, srv *httptest.Server, queue, query string) jobsReply {
	t.Helper()
	code, body, _ := get(t, srv, "/api/queues/"+url.PathEscape(queue)+"/jobs?"+query)
	require.Equal(t, http.StatusOK, code, body)
	var r jobsReply
	require.NoError(t, json.Unmarshal([]byte(body), &r), body)
	return r
}

func idsOf(rows []jobRowView) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// The job tables and the bulk actions on both executors: the Lua scripts
// of a plain server, and the module's verbs.
func TestJobsAPI(t *testing.T) {
	t.Parallel()
	t.Run("lua", func(t *testing.T) {
		t.Parallel()
		testJobsAPI(t, valkeyserver.Options{}, trafikey.ExecutorLua)
	})
	t.Run("native", func(t *testing.T) {
		t.Parallel()
		testJobsAPI(t, valkeyserver.Options{Module: valkeytest.ModulePath(t)}, trafikey.ExecutorNative)
	})
}

func testJobsAPI(t *testing.T, o valkeyserver.Options, want trafikey.Executor) {
	s := valkeytest.Start(t, o)
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "work", nil)
	require.NoError(t, err)
	require.Equal(t, want, q.Executor())
	var dead []string
	for range 3 {
		dead = append(dead, deadJob(t, q, `{"to":"x"}`, trafikey.JobOptions{Lane: "acme"}))
	}
	var added []string
	for i := range 30 {
		id, err := q.Add(ctx, []byte(fmt.Sprintf("{\"n\":%d,\"note\":\"line\nbreak\"}", i)), nil)
		require.NoError(t, err)
		added = append(added, id)
	}
	later, err := q.Add(ctx, []byte("\x00\xffbin"), &trafikey.JobOptions{Delay: time.Hour})
	require.NoError(t, err)
	srv := startDash(t, c, Options{})

	// Pages of pending, in claim order, 25 then 5.
	p := jobsOf(t, srv, "work", "state=pending")
	require.Equal(t, 30, p.Total)
	require.Equal(t, 30, p.Queue.Pending)
	require.Equal(t, added[:25], idsOf(p.Jobs))
	require.NotEmpty(t, p.Next)
	require.Equal(t, "{\"n\":0,\"note\":\"line break\"}", *p.Jobs[0].Preview, "a preview is one line")
	p2 := jobsOf(t, srv, "work", "state=pending&after="+url.QueryEscape(p.Next))
	require.Equal(t, added[25:], idsOf(p2.Jobs))
	require.Empty(t, p2.Next)
	newest := jobsOf(t, srv, "work", "state=pending&newest=1&count=2")
	require.Equal(t, []string{added[29], added[28]}, idsOf(newest.Jobs))

	// Delayed, with a binary payload previewed as hex; dead with errors.
	d := jobsOf(t, srv, "work", "state=delayed")
	require.Equal(t, []string{later}, idsOf(d.Jobs))
	require.Equal(t, "hex", d.Jobs[0].PreviewFormat)
	require.Equal(t, "00 ff 62 69 6e", *d.Jobs[0].Preview)
	require.NotNil(t, d.Jobs[0].At)
	dd := jobsOf(t, srv, "work", "state=dead&newest=1")
	require.Equal(t, []string{dead[2], dead[1], dead[0]}, idsOf(dd.Jobs))
	require.Contains(t, dd.Jobs[0].Error, "550")
	require.Equal(t, "acme", dd.Jobs[0].Lane)

	// A search by id: in the table's state, in another, or none.
	f := jobsOf(t, srv, "work", "state=dead&id="+dead[1])
	require.Equal(t, []string{dead[1]}, idsOf(f.Jobs))
	require.Equal(t, 3, f.Total)
	f = jobsOf(t, srv, "work", "state=dead&id="+added[0])
	require.Empty(t, f.Jobs)
	require.Equal(t, "pending", f.FoundState)
	f = jobsOf(t, srv, "work", "state=dead&id=999999")
	require.Empty(t, f.Jobs)
	require.Empty(t, f.FoundState)

	// Bad input: refused, nothing read.
	for _, query := range []string{"state=nope", "state=pending&count=0", "state=pending&count=101", "state=pending&after=x", "state=dead&lane=acme"} {
		code, body, _ := get(t, srv, "/api/queues/work/jobs?"+query)
		require.Equal(t, http.StatusBadRequest, code, query+": "+body)
	}

	// Run now, and the bulk actions.
	code, body := post(t, srv, "/api/queues/work/jobs/"+later+"/retry", true)
	require.Equal(t, http.StatusOK, code, body)
	code, body = post(t, srv, "/api/queues/work/jobs/"+dead[0]+"/retry", true)
	require.Equal(t, http.StatusConflict, code, "a dead job: %s", body)
	code, body = post(t, srv, "/api/queues/work/remove-dead?older_than_ms=3600000", true)
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"removed":0}`, body, "none died an hour ago")
	code, body = post(t, srv, "/api/queues/work/requeue-dead", true)
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"requeued":3}`, body)
	st, err := q.Stats(ctx)
	require.NoError(t, err)
	require.Zero(t, st.Dead)
	// The requeued jobs, first in claim order, die again.
	for range 3 {
		jobs, err := q.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		_, err = jobs[0].Fail(ctx, errors.New("again"), false)
		require.NoError(t, err)
	}
	code, body = post(t, srv, "/api/queues/work/remove-dead?older_than_ms=0", true)
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"removed":3}`, body)
	_, err = q.Add(ctx, []byte("x"), &trafikey.JobOptions{Delay: time.Hour})
	require.NoError(t, err)
	code, body = post(t, srv, "/api/queues/work/promote-all", true)
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"promoted":1}`, body)
	code, _ = post(t, srv, "/api/queues/work/remove-dead?older_than_ms=-1", true)
	require.Equal(t, http.StatusBadRequest, code)
	st, err = q.Stats(ctx)
	require.NoError(t, err)
	require.Zero(t, st.Delayed)
	require.Equal(t, 32, st.Pending)

	// Read-only: every new action refused.
	ro := startDash(t, c, Options{ReadOnly: true})
	for _, path := range []string{"/api/queues/work/requeue-dead", "/api/queues/work/remove-dead", "/api/queues/work/promote-all", "/api/queues/work/jobs/" + later + "/retry"} {
		code, body := post(t, ro, path, true)
		require.Equal(t, http.StatusForbidden, code, path)
		require.Contains(t, body, `"code":"read_only"`)
	}
	// Pending counts the jobs in lanes; its table lists those without a
	// lane, or a lane's.
	require.Equal(t, 30, jobsOf(t, ro, "work", "state=pending").Total)
	require.Equal(t, 2, jobsOf(t, ro, "work", "state=pending&lane=acme").Total)
}

// TestJobsAPIKind: a listing of one kind reads pages on until it has a page
// of that kind, its cursor continuing after the last job examined, so every
// job of the kind is listed once across its pages; rows carry their kind.
func TestJobsAPIKind(t *testing.T) {
	t.Parallel()
	for _, o := range []valkeyserver.Options{{}, {Module: valkeytest.ModulePath(t)}} {
		s := valkeytest.Start(t, o)
		c := valkeytest.Client(t, s)
		ctx := t.Context()
		q, err := trafikey.Open(ctx, c, "mixed", nil)
		require.NoError(t, err)
		var want []string
		var jobs []trafikey.JobSpec
		for i := range 250 {
			kind := "report"
			if i%7 == 0 {
				kind = "email"
			}
			jobs = append(jobs, trafikey.JobSpec{Payload: []byte("x"), Options: trafikey.JobOptions{Kind: kind}})
		}
		ids, err := q.AddBatch(ctx, jobs)
		require.NoError(t, err)
		for i, id := range ids {
			if i%7 == 0 {
				want = append(want, id)
			}
		}
		srv := startDash(t, c, Options{})
		var got []string
		after := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10)
			p := jobsOf(t, srv, "mixed", "state=pending&kind=email&count=10&after="+url.QueryEscape(after))
			require.Equal(t, 250, p.Total)
			for _, r := range p.Jobs {
				require.Equal(t, "email", r.Kind)
				got = append(got, r.ID)
			}
			if p.Next == "" {
				break
			}
			after = p.Next
		}
		require.Equal(t, want, got)
		all := jobsOf(t, srv, "mixed", "state=pending&count=3")
		require.Equal(t, []string{"email", "report", "report"}, []string{all.Jobs[0].Kind, all.Jobs[1].Kind, all.Jobs[2].Kind})
	}
}
