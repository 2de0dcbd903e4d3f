package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// onBoth runs test on the Lua scripts' executor and the module's.
func onBoth(t *testing.T, test func(t *testing.T, o valkeyserver.Options)) {
	t.Run("lua", func(t *testing.T) {
		t.Parallel()
		test(t, valkeyserver.Options{})
	})
	t.Run("native", func(t *testing.T) {
		t.Parallel()
		test(t, valkeyserver.Options{Module: valkeytest.ModulePath(t)})
	})
}

func decode[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	return v
}

// The pending table's lanes add up to the queue's pending count, and the
// lanes are paused, resumed and capped through the API.
func TestLanesAPI(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, o valkeyserver.Options) {
		s := valkeytest.Start(t, o)
		c := valkeytest.Client(t, s)
		ctx := t.Context()
		q, err := trafikey.Open(ctx, c, "work", nil)
		require.NoError(t, err)
		var jobs []trafikey.JobSpec
		for i := range 9 {
			spec := trafikey.JobSpec{Payload: []byte("x")}
			switch i % 3 {
			case 1:
				spec.Options.Lane = "acme"
			case 2:
				spec.Options.Lane = "tenant/b"
			}
			jobs = append(jobs, spec)
		}
		_, err = q.AddBatch(ctx, jobs)
		require.NoError(t, err)
		srv := startDash(t, c, Options{})

		p := jobsOf(t, srv, "work", "state=pending")
		require.Equal(t, 9, p.Queue.Pending)
		require.Equal(t, 3, p.Total, "the table lists the jobs without a lane")
		require.NotNil(t, p.NoLane)
		sum := *p.NoLane
		var names []string
		for _, l := range p.Lanes {
			sum += l.Waiting
			names = append(names, l.Name)
		}
		require.Equal(t, []string{"acme", "tenant/b"}, names)
		require.Equal(t, p.Queue.Pending, sum, "the jobs without a lane and the lanes' add up to pending")
		lp := jobsOf(t, srv, "work", "state=pending&lane="+url.QueryEscape("tenant/b"))
		require.Equal(t, 3, lp.Total)
		require.Nil(t, lp.NoLane)

		lanePath := "/api/queues/work/lanes/" + url.PathEscape("tenant/b")
		code, body := post(t, srv, lanePath+"/pause", true)
		require.Equal(t, http.StatusOK, code, body)
		require.JSONEq(t, `{"name":"tenant/b","waiting":3,"active":0,"cap":0,"paused":true}`, body)
		info, err := q.Lane("tenant/b").Info(ctx)
		require.NoError(t, err)
		require.True(t, info.Paused)
		code, body = post(t, srv, lanePath+"/cap?cap=2", true)
		require.Equal(t, http.StatusOK, code, body)
		info, err = q.Lane("tenant/b").Info(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, info.Cap)
		code, body, _ = get(t, srv, "/api/queues/work")
		require.Equal(t, http.StatusOK, code)
		require.Contains(t, body, `{"name":"tenant/b","waiting":3,"active":0,"cap":2,"paused":true,"latency_ms":`)
		code, body = post(t, srv, lanePath+"/cap?cap=0", true)
		require.Equal(t, http.StatusOK, code, body)
		code, body = post(t, srv, lanePath+"/resume", true)
		require.Equal(t, http.StatusOK, code, body)
		info, err = q.Lane("tenant/b").Info(ctx)
		require.NoError(t, err)
		require.Equal(t, trafikey.LaneInfo{Name: "tenant/b", Waiting: 3}, info)

		// A paused lane without jobs is not listed, and is found by name.
		code, body = post(t, srv, "/api/queues/work/lanes/idle/pause", true)
		require.Equal(t, http.StatusOK, code, body)
		code, body, _ = get(t, srv, "/api/queues/work/lanes/idle")
		require.Equal(t, http.StatusOK, code, body)
		require.JSONEq(t, `{"name":"idle","waiting":0,"active":0,"cap":0,"paused":true}`, body)

		for _, bad := range []string{"/cap", "/cap?cap=-1", "/cap?cap=x", "/cap?cap=2000000", "/nope"} {
			code, body = post(t, srv, lanePath+bad, true)
			require.Equal(t, http.StatusBadRequest, code, bad+": "+body)
		}
		ro := startDash(t, c, Options{ReadOnly: true})
		code, _ = post(t, ro, lanePath+"/pause", true)
		require.Equal(t, http.StatusForbidden, code)
		code, _ = post(t, srv, lanePath+"/pause", false)
		require.Equal(t, http.StatusForbidden, code, "an action without the dashboard's header")
	})
}

// Deleting a queue asks for its name; the queue is then gone from the
// overview at once.
func TestDeleteQueueAPI(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, o valkeyserver.Options) {
		s := valkeytest.Start(t, o)
		c := valkeytest.Client(t, s)
		ctx := t.Context()
		for _, name := range []string{"keep", "old/jobs"} {
			q, err := trafikey.Open(ctx, c, name, nil)
			require.NoError(t, err)
			_, err = q.Add(ctx, []byte("x"), nil)
			require.NoError(t, err)
		}
		srv := startDash(t, c, Options{SampleEvery: time.Hour})
		eventually(t, srv, "/api/queues", `"name":"old/jobs"`)

		path := "/api/queues/" + url.PathEscape("old/jobs") + "/delete"
		for _, confirm := range []string{"", "?confirm=keep", "?confirm=old"} {
			code, body := post(t, srv, path+confirm, true)
			require.Equal(t, http.StatusBadRequest, code, body)
		}
		ro := startDash(t, c, Options{ReadOnly: true})
		code, _ := post(t, ro, path+"?confirm="+url.QueryEscape("old/jobs"), true)
		require.Equal(t, http.StatusForbidden, code)
		code, _ = post(t, srv, path+"?confirm="+url.QueryEscape("old/jobs"), false)
		require.Equal(t, http.StatusForbidden, code, "an action without the dashboard's header")
		old := mustQueue(t, c, "old/jobs")
		st, err := old.Stats(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, st.Pending, "refused: nothing deleted")

		code, body := post(t, srv, path+"?confirm="+url.QueryEscape("old/jobs"), true)
		require.Equal(t, http.StatusOK, code, body)
		reply := decode[map[string]any](t, body)
		require.Equal(t, "old/jobs", reply["deleted"])
		require.Positive(t, reply["keys"])
		// The sampler samples once an hour: the action itself found the
		// queues again.
		_, body, _ = get(t, srv, "/api/queues")
		require.NotContains(t, body, `"name":"old/jobs"`)
		require.Contains(t, body, `"name":"keep"`)
		code, _, _ = get(t, srv, "/api/queues/"+url.PathEscape("old/jobs"))
		require.Equal(t, http.StatusNotFound, code)
	})
}

// Remove on a flow's waiting parent removes the flow.
func TestRemoveFlowAPI(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, o valkeyserver.Options) {
		s := valkeytest.Start(t, o)
		c := valkeytest.Client(t, s)
		ctx := t.Context()
		q, err := trafikey.Open(ctx, c, "flows", nil)
		require.NoError(t, err)
		ids, err := q.AddFlow(ctx, trafikey.JobSpec{
			Payload: []byte("parent"),
			Children: []trafikey.JobSpec{
				{Payload: []byte("a")},
				{Payload: []byte("b"), Children: []trafikey.JobSpec{{Payload: []byte("b1")}}},
			},
		})
		require.NoError(t, err)
		srv := startDash(t, c, Options{})
		w := jobsOf(t, srv, "flows", "state=waiting")
		require.Contains(t, idsOf(w.Jobs), ids.ID)
		code, body := post(t, srv, "/api/queues/flows/jobs/"+ids.ID+"/remove", true)
		require.Equal(t, http.StatusOK, code, body)
		for _, id := range []string{ids.ID, ids.Children[0].ID, ids.Children[1].ID, ids.Children[1].Children[0].ID} {
			_, err := q.Inspect(ctx, id)
			require.ErrorIs(t, err, trafikey.ErrNotFound, id)
		}
		st, err := q.Stats(ctx)
		require.NoError(t, err)
		require.Zero(t, st.Pending+st.Waiting)
	})
}

// The schedules page: every schedule with its next occurrences, computed
// from its cron expression (five or six fields, in its time zone) or its
// interval; paused, resumed and removed through the API.
func TestSchedulesAPI(t *testing.T) {
	t.Parallel()
	onBoth(t, func(t *testing.T, o valkeyserver.Options) {
		s := valkeytest.Start(t, o)
		c := valkeytest.Client(t, s)
		ctx := t.Context()
		q, err := trafikey.Open(ctx, c, "cron", nil)
		require.NoError(t, err)
		sc := q.Schedules()
		for _, def := range []trafikey.Schedule{
			{ID: "digest", Cron: "30 9 * * 1-5", TimeZone: "Europe/Paris"},
			{ID: "tick/5s", Cron: "*/5 * * * * *"},
			{ID: "every-90s", Every: 90 * time.Second},
			{ID: "thrice", Every: time.Hour, Limit: 3},
		} {
			def.Payload = []byte("x")
			_, err := sc.Set(ctx, def)
			require.NoError(t, err)
		}
		srv := startDash(t, c, Options{})
		read := func() map[string]scheduleRow {
			code, body, _ := get(t, srv, "/api/queues/cron/schedules")
			require.Equal(t, http.StatusOK, code, body)
			out := map[string]scheduleRow{}
			for _, r := range decode[schedulesReply](t, body).Schedules {
				out[r.ID] = r
			}
			return out
		}
		rows := read()
		require.Len(t, rows, 4)

		paris, err := time.LoadLocation("Europe/Paris")
		require.NoError(t, err)
		digest := rows["digest"]
		require.Len(t, digest.Next, nextRunsShown)
		for i, at := range digest.Next {
			local := at.In(paris)
			require.Equal(t, 9, local.Hour(), at)
			require.Equal(t, 30, local.Minute(), at)
			require.Zero(t, local.Second(), at)
			require.NotEqual(t, time.Saturday, local.Weekday())
			require.NotEqual(t, time.Sunday, local.Weekday())
			if i > 0 {
				require.True(t, at.After(digest.Next[i-1]))
				require.LessOrEqual(t, at.Sub(digest.Next[i-1]), 3*24*time.Hour+time.Hour, "no weekday skipped")
			}
		}
		tick := rows["tick/5s"]
		require.Len(t, tick.Next, nextRunsShown)
		for i := range tick.Next {
			require.Zero(t, tick.Next[i].UnixMilli()%5000, "six fields: seconds first")
			if i > 0 {
				require.Equal(t, 5*time.Second, tick.Next[i].Sub(tick.Next[i-1]))
			}
		}
		every := rows["every-90s"]
		require.Equal(t, int64(90000), every.EveryMS)
		require.NotNil(t, every.Last)
		require.Len(t, every.Next, nextRunsShown)
		for i, at := range every.Next {
			require.Zero(t, at.Sub(*every.Last)%(90*time.Second), "on the interval's grid from its creation")
			if i > 0 {
				require.Equal(t, 90*time.Second, at.Sub(every.Next[i-1]))
			}
		}
		require.Len(t, rows["thrice"].Next, 3, "no more than its limit")

		// The step a worker runs enqueues the occurrence the page showed.
		first := tick.Next[0]
		require.Eventually(t, func() bool {
			_, err := q.Admin().Maintain(ctx, 100)
			require.NoError(t, err)
			info, err := sc.Get(ctx, "tick/5s")
			require.NoError(t, err)
			return info.Count > 0
		}, 15*time.Second, 100*time.Millisecond)
		info, err := sc.Get(ctx, "tick/5s")
		require.NoError(t, err)
		require.False(t, info.Last.Before(first), "the first occurrence taken is the one shown first (or a later one)")
		require.Zero(t, info.Last.UnixMilli()%5000)

		path := "/api/queues/cron/schedules/" + url.PathEscape("tick/5s")
		ro := startDash(t, c, Options{ReadOnly: true})
		for _, action := range []string{"/pause", "/resume", "/remove"} {
			code, _ := post(t, ro, path+action, true)
			require.Equal(t, http.StatusForbidden, code, action)
		}
		code, body := post(t, srv, path+"/nope", true)
		require.Equal(t, http.StatusBadRequest, code, body)
		code, body = post(t, srv, path+"/pause", true)
		require.Equal(t, http.StatusOK, code, body)
		tick = read()["tick/5s"]
		require.True(t, tick.Paused)
		require.Empty(t, tick.Next)
		code, body = post(t, srv, path+"/resume", true)
		require.Equal(t, http.StatusOK, code, body)
		tick = read()["tick/5s"]
		require.False(t, tick.Paused)
		require.Len(t, tick.Next, nextRunsShown)
		code, body = post(t, srv, path+"/remove", true)
		require.Equal(t, http.StatusOK, code, body)
		require.NotContains(t, read(), "tick/5s")
		code, body = post(t, srv, path+"/remove", true)
		require.Equal(t, http.StatusNotFound, code, body)
	})
}

// An unreachable server is told from a call that took too long.
func TestIsUnreachable(t *testing.T) {
	t.Parallel()
	_, err := valkey.NewClient(valkey.ClientOption{InitAddress: []string{"127.0.0.1:1"}})
	require.Error(t, err)
	require.True(t, isUnreachable(err), "%v", err)
	require.True(t, isUnreachable(fmt.Errorf("read: %w", errUnreachable)))
	require.False(t, isUnreachable(context.DeadlineExceeded))
	require.False(t, isUnreachable(fmt.Errorf("stats: %w", trafikey.ErrNotFound)))
}

// The login: a bearer token (a header, or a cookie set from ?token=),
// basic authentication, or both; every page, API call and /metrics asks.
func TestAuth(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	_, err := trafikey.Open(t.Context(), c, "mail", nil)
	require.NoError(t, err)
	const token = "0123456789abcdef-token"
	srv := startDash(t, c, Options{Auth: Auth{Token: token, User: "ops", Password: "s3cret pass"}})
	paths := []string{"/", "/app.js", "/api/info", "/api/queues", "/metrics", "/api/live"}

	do := func(req *http.Request, client *http.Client) (int, http.Header) {
		t.Helper()
		res, err := client.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		return res.StatusCode, res.Header
	}
	req := func(method, path string, set func(*http.Request)) *http.Request {
		r, err := http.NewRequest(method, srv.URL+path, nil)
		require.NoError(t, err)
		if set != nil {
			set(r)
		}
		return r
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range paths {
		code, h := do(req("GET", p, nil), noRedirect)
		require.Equal(t, http.StatusUnauthorized, code, p)
		require.Contains(t, h.Get("WWW-Authenticate"), "Basic")
		for _, bad := range []func(*http.Request){
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token+"x") },
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token[:len(token)-1]) },
			func(r *http.Request) { r.SetBasicAuth("ops", "s3cret") },
			func(r *http.Request) { r.SetBasicAuth("admin", "s3cret pass") },
			func(r *http.Request) { r.AddCookie(&http.Cookie{Name: tokenCookie, Value: "0123456789abcdef"}) },
		} {
			code, _ := do(req("GET", p, bad), noRedirect)
			require.Equal(t, http.StatusUnauthorized, code, p)
		}
		if p == "/api/live" {
			continue // a stream: its status is all the loop reads
		}
		code, _ = do(req("GET", p, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }), noRedirect)
		require.Equal(t, http.StatusOK, code, p)
		code, _ = do(req("GET", p, func(r *http.Request) { r.SetBasicAuth("ops", "s3cret pass") }), noRedirect)
		require.Equal(t, http.StatusOK, code, p)
	}
	// An action asks too.
	code, _ := do(req("POST", "/api/queues/mail/pause", func(r *http.Request) { r.Header.Set(actionHeader, "1") }), noRedirect)
	require.Equal(t, http.StatusUnauthorized, code)
	st, err := mustQueue(t, c, "mail").Stats(t.Context())
	require.NoError(t, err)
	require.False(t, st.Paused)

	// ?token= once: a cookie, and the address without the token.
	code, h := do(req("GET", "/?token=wrong-token-0123456789", nil), noRedirect)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Empty(t, h.Values("Set-Cookie"))
	code, h = do(req("GET", "/?token="+url.QueryEscape(token), nil), noRedirect)
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "/", h.Get("Location"))
	require.Contains(t, h.Get("Set-Cookie"), "HttpOnly")
	require.Contains(t, h.Get("Set-Cookie"), "SameSite=Strict")
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	code, _ = do(req("GET", "/?token="+url.QueryEscape(token), nil), browser)
	require.Equal(t, http.StatusOK, code)
	code, _ = do(req("GET", "/api/queues", nil), browser)
	require.Equal(t, http.StatusOK, code)

	// Only a token: a bearer challenge.
	only := startDash(t, c, Options{Auth: Auth{Token: token}})
	res, err := http.Get(only.URL + "/api/info")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Contains(t, res.Header.Get("WWW-Authenticate"), "Bearer")

	for _, bad := range []Auth{{Token: "short"}, {User: "ops"}, {Password: "pw"}, {User: "a:b", Password: "pw"}} {
		_, err := New(c, Options{Auth: bad})
		require.Error(t, err, "%+v", bad)
	}
}

// A dashboard started while the server is down says it is unreachable,
// not that its queues are empty, and reads them once the server is back;
// it does again after another outage.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{Dir: t.TempDir(), AOF: true})
	require.NoError(t, s.Stop())
	addr := s.Addr()
	connect := func() (valkey.Client, error) {
		return valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	}
	d, err := Dial(connect, Options{SampleEvery: 100 * time.Millisecond, DiscoverEvery: 200 * time.Millisecond})
	require.NoError(t, err)
	srv := serveDash(t, d)

	body := eventually(t, srv, "/api/queues", `"unreachable":"`)
	ov := decode[overview](t, body)
	require.False(t, ov.Connected)
	require.NotNil(t, ov.UnreachableSince)
	require.Empty(t, ov.Queues)
	code, body, _ := get(t, srv, "/api/queues/mail")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, `"code":"unreachable"`)
	code, body = post(t, srv, "/api/queues/mail/pause", true)
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	code, _, _ = get(t, srv, "/")
	require.Equal(t, http.StatusOK, code, "the pages are served meanwhile")

	// The server comes back: the dashboard connects by itself.
	require.NoError(t, s.Restart(t.Context()))
	c := valkeytest.Client(t, s)
	mail, err := trafikey.Open(t.Context(), c, "mail", nil)
	require.NoError(t, err)
	_, err = mail.AddBatch(t.Context(), []trafikey.JobSpec{{Payload: []byte("a")}, {Payload: []byte("b")}})
	require.NoError(t, err)
	body = eventually(t, srv, "/api/queues", `"name":"mail","paused":false,"pending":2`)
	ov = decode[overview](t, body)
	require.True(t, ov.Connected)
	require.Empty(t, ov.Unreachable)
	code, body, _ = get(t, srv, "/api/queues/mail")
	require.Equal(t, http.StatusOK, code, body)

	// Down again: unreachable, with the last counts read.
	require.NoError(t, s.Stop())
	body = eventually(t, srv, "/api/queues", `"unreachable":"`)
	ov = decode[overview](t, body)
	require.True(t, ov.Connected)
	require.Len(t, ov.Queues, 1)
	require.Equal(t, 2, ov.Queues[0].Pending, "the last count read, not 0")
	code, body, _ = get(t, srv, "/api/queues/mail")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.NoError(t, s.Restart(t.Context()))
	require.Eventually(t, func() bool {
		_, body, _ = get(t, srv, "/api/queues")
		ov = decode[overview](t, body)
		return ov.Unreachable == "" && len(ov.Queues) == 1 && ov.Queues[0].Error == ""
	}, 10*time.Second, 20*time.Millisecond, "never reachable again: %s", body)
	require.Equal(t, 2, ov.Queues[0].Pending)
	// A connection of the client's that went with the server fails its
	// first call (unreachable, and the page reads again at the next tick);
	// the next ones succeed.
	require.Eventually(t, func() bool {
		code, body, _ = get(t, srv, "/api/queues/mail")
		return code == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond, "the queue never read again: %d %s", code, body)
}

// The overview's failure rate is over the last minute and 5 minutes of
// samples, beside the dead count.
func TestFailureWindowsAPI(t *testing.T) {
	t.Parallel()
	s := valkeytest.Start(t, valkeyserver.Options{})
	c := valkeytest.Client(t, s)
	ctx := t.Context()
	q, err := trafikey.Open(ctx, c, "mail", nil)
	require.NoError(t, err)
	srv := startDash(t, c, Options{})
	eventually(t, srv, "/api/queues", `"name":"mail"`)
	// A sample before the jobs end, so that the windows span them.
	require.Eventually(t, func() bool {
		_, body, _ := get(t, srv, "/api/series?queue=mail")
		return len(decode[series](t, body).Points) >= 1
	}, 10*time.Second, 20*time.Millisecond)
	for i := range 5 {
		_, err := q.Add(ctx, []byte("x"), &trafikey.JobOptions{MaxAttempts: 1})
		require.NoError(t, err)
		jobs, err := q.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		if i < 2 {
			_, err = jobs[0].Fail(ctx, errString("smtp down"), false)
			require.NoError(t, err)
			continue
		}
		require.NoError(t, jobs[0].Complete(ctx))
	}
	var ov overview
	require.Eventually(t, func() bool {
		_, body, _ := get(t, srv, "/api/queues")
		ov = decode[overview](t, body)
		return len(ov.Windows) == 2 && ov.Windows[0].Completed == 3 && ov.Windows[0].Failed == 2
	}, 10*time.Second, 20*time.Millisecond, "windows never counted the jobs: %+v", ov.Windows)
	require.InDelta(t, 0.4, *ov.Windows[0].FailureRate, 1e-9)
	require.Equal(t, 3, ov.Windows[1].Completed)
	require.Equal(t, 2, ov.Queues[0].Dead)
	require.Equal(t, ov.Windows, ov.Queues[0].Windows)
	code, body, _ := get(t, srv, "/api/queues/mail")
	require.Equal(t, http.StatusOK, code, body)
	qw := decode[queueReply](t, body).Windows
	require.Len(t, qw, 2)
	require.Equal(t, 2, qw[0].Failed)
	require.Equal(t, 3, qw[0].Completed)
}
