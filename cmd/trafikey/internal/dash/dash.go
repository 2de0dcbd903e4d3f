// Package dash is the web dashboard behind `trafikey dash`: an overview of
// every queue on a server or cluster with a throughput chart and failure
// rates over windows, a page per queue with its lanes, a page of its
// schedules, tables of its jobs by state, a page per job, the actions an
// operator needs (pause, resume, promote and delete a queue; pause, resume
// and cap a lane; pause, resume and remove a schedule; requeue, remove (a
// flow from its parent), cancel, run now, and in bulk requeue or remove dead
// jobs and run delayed ones) unless read-only, live updates from the
// queues' job events, the JSON API under /api/ that the pages use, and
// Prometheus metrics on /metrics; optionally behind a login (Auth). It
// serves while the server is unreachable, and says so (Dial). Its pages are
// plain HTML, CSS and JavaScript embedded in the binary; nothing is loaded
// from elsewhere.
package dash

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/latency"
	"github.com/trafikey/trafikey/trafikeyprom"
)

//go:embed static
var static embed.FS

// Options configure a dashboard.
type Options struct {
	// ReadOnly hides the actions and makes their API refuse with 403.
	ReadOnly bool
	// SampleEvery is how often every queue's STATS is read for the
	// overview and the charts; default 2 s.
	SampleEvery time.Duration
	// DiscoverEvery is how often the queues are found again by SCAN;
	// default 10 s. An action or a page of a queue not yet known finds
	// it at once.
	DiscoverEvery time.Duration
	// History is how many samples per queue the charts keep; default 300
	// (10 minutes at 2 s).
	History int
	// Timeout bounds each request's and each sample's server reads;
	// default 10 s.
	Timeout time.Duration
	// LiveQueues bounds the queues with job events on whose events the
	// dashboard watches, to push their changes to the pages at once (each
	// holds a connection blocked on its stream); default 64, -1 for none.
	// The others change on the pages at each sample.
	LiveQueues int
	// MetricsLanes adds per-lane series to /metrics for up to that many
	// lanes of each queue; 0 for none.
	MetricsLanes int
	// LoopbackHosts refuses every request whose Host header is not a
	// loopback name (localhost, 127.0.0.0/8, ::1). Set it when serving on
	// loopback: a page of another site whose name is made to resolve to
	// 127.0.0.1 (DNS rebinding) then cannot read or act through the
	// operator's browser.
	LoopbackHosts bool
	// Where names the server or cluster in the page header.
	Where string
	// Log receives warnings; default slog.Default().
	Log *slog.Logger
	// Auth, when set, is asked of every request: pages, API and /metrics.
	Auth Auth
}

func (o *Options) defaults() {
	if o.SampleEvery <= 0 {
		o.SampleEvery = 2 * time.Second
	}
	if o.DiscoverEvery <= 0 {
		o.DiscoverEvery = 10 * time.Second
	}
	if o.History <= 1 {
		o.History = 300
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.LiveQueues == 0 {
		o.LiveQueues = 64
	}
}

// Server is one dashboard over one server or cluster.
type Server struct {
	opts Options
	// catp is the catalog once the server was reached: nil before, while
	// a dashboard made by Dial connects.
	catp    atomic.Pointer[admin.Catalog]
	connect func() (valkey.Client, error)
	sampler *sampler
	// heads are the lanes' oldest waiting jobs, for their latency on the queue page.
	heads   *laneHeads
	hub     *hub
	live    *live
	handler http.Handler
	// stopped is closed when Run returns: the live streams end with it.
	stopped chan struct{}
}

// New returns a dashboard over client. Call Run to sample the queues, and
// serve Handler.
func New(client valkey.Client, o Options) (*Server, error) {
	s, err := newServer(o)
	if err != nil {
		return nil, err
	}
	s.connected(client)
	return s, nil
}

// Dial returns a dashboard that opens its client with connect when it
// runs, and again after each failure (valkey-go's NewClient fails when
// it cannot reach the server at once): it serves its pages meanwhile,
// showing the server unreachable, and reads the queues once connect
// succeeds. Run closes the client it opened when it returns.
func Dial(connect func() (valkey.Client, error), o Options) (*Server, error) {
	s, err := newServer(o)
	if err != nil {
		return nil, err
	}
	s.connect = connect
	return s, nil
}

// connected starts the dashboard's reads over client.
func (s *Server) connected(client valkey.Client) {
	cat := admin.NewCatalog(client)
	s.sampler.setCatalog(cat, client)
	s.catp.Store(cat)
}

// errUnreachable answers the requests that read the server before the
// dashboard first reached it.
var errUnreachable = errors.New("the server is unreachable: the dashboard has not connected to it yet")

// catalog returns the catalog, or errUnreachable before the dashboard
// first reached the server.
func (s *Server) catalog() (*admin.Catalog, error) {
	if c := s.catp.Load(); c != nil {
		return c, nil
	}
	if err := s.sampler.downErr(); err != "" {
		return nil, fmt.Errorf("%w: %s", errUnreachable, err)
	}
	return nil, errUnreachable
}

func newServer(o Options) (*Server, error) {
	o.defaults()
	if err := o.Auth.check(); err != nil {
		return nil, err
	}
	s := &Server{opts: o, hub: &hub{}, heads: newLaneHeads(o.SampleEvery), stopped: make(chan struct{})}
	s.sampler = newSampler(o, o.Log)
	s.live = newLive(s.hub, s.sampler, max(o.LiveQueues, 0), o.Log)
	s.sampler.onDiscover = s.live.discovered
	s.sampler.isLive = s.live.watched
	s.sampler.onTick = func(at time.Time, charted bool) {
		s.hub.publish("tick", tickPush{SampledAt: at, Charted: charted})
	}

	reg := prometheus.NewRegistry()
	if err := reg.Register(trafikeyprom.NewQueueSourceCollector(s.sampler.known, trafikeyprom.CollectorOptions{
		Timeout: o.Timeout, MaxLanes: o.MetricsLanes,
	})); err != nil {
		return nil, err
	}
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, err
	}

	assets, err := fs.Sub(static, "static")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("GET /", http.FileServerFS(assets))
	mux.HandleFunc("GET /api/info", s.info)
	mux.HandleFunc("GET /api/queues", s.queues)
	mux.HandleFunc("GET /api/series", s.series)
	mux.HandleFunc("GET /api/live", s.stream)
	mux.HandleFunc("GET /api/queues/{queue}", s.read(s.queue))
	mux.HandleFunc("GET /api/queues/{queue}/jobs", s.read(s.jobs))
	mux.HandleFunc("GET /api/queues/{queue}/jobs/{id}", s.read(s.job))
	mux.HandleFunc("POST /api/queues/{queue}/{action}", s.action(s.queueAction))
	mux.HandleFunc("POST /api/queues/{queue}/jobs/{id}/{action}", s.action(s.jobAction))
	mux.HandleFunc("GET /api/queues/{queue}/lanes/{lane}", s.read(s.lane))
	mux.HandleFunc("POST /api/queues/{queue}/lanes/{lane}/{action}", s.action(s.laneAction))
	mux.HandleFunc("GET /api/queues/{queue}/schedules", s.read(s.schedules))
	mux.HandleFunc("POST /api/queues/{queue}/schedules/{id}/{action}", s.action(s.scheduleAction))
	s.handler = secure(o.Auth.wrap(mux), o.LoopbackHosts)
	return s, nil
}

// Handler serves the pages, the API and /metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// Run samples the queues and watches their events until ctx ends; the
// pages' live streams end with it. Call it once. A dashboard made by Dial
// first connects, trying again until it can.
func (s *Server) Run(ctx context.Context) {
	defer close(s.stopped)
	if s.connect != nil {
		client := s.dial(ctx)
		if client == nil {
			return
		}
		defer client.Close()
	}
	s.live.start(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.live.run(ctx) })
	s.sampler.run(ctx)
	wg.Wait()
}

// Redial bounds: the first retry of a failed connect comes after
// dialFirst, each next one after twice as long, up to dialMost.
const (
	dialFirst = 250 * time.Millisecond
	dialMost  = 5 * time.Second
)

// dial calls s.connect until it succeeds or ctx ends (nil then), showing
// the server unreachable meanwhile.
func (s *Server) dial(ctx context.Context) valkey.Client {
	wait := dialFirst
	for {
		client, err := s.connect()
		if err == nil {
			s.connected(client)
			s.sampler.reached()
			return client
		}
		if ctx.Err() != nil {
			return nil
		}
		s.sampler.unreachable(err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(2*wait, dialMost)
	}
}

// contentPolicy lets the pages load only what the binary serves.
const contentPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// secure adds the headers every reply carries, and refuses requests for
// another host when loopbackOnly.
func secure(next http.Handler, loopbackOnly bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopbackOnly && !loopbackHost(r.Host) {
			http.Error(w, "this dashboard answers on loopback names only", http.StatusMisdirectedRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names this machine's loopback.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// apiError is the JSON body of a refused or failed API call.
type apiError struct {
	Error string `json:"error"`
	// Code is one of not_found, refused, invalid, read_only, forbidden,
	// error.
	Code string `json:"code"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// fail answers err with the status its kind calls for.
func fail(w http.ResponseWriter, err error) {
	status, code := http.StatusBadGateway, "error"
	switch {
	case isUnreachable(err):
		status, code = http.StatusServiceUnavailable, "unreachable"
	case errors.Is(err, admin.ErrNoQueue), errors.Is(err, trafikey.ErrNotFound):
		status, code = http.StatusNotFound, "not_found"
	case errors.Is(err, trafikey.ErrState):
		status, code = http.StatusConflict, "refused"
	case errors.Is(err, admin.ErrQueueName), errors.Is(err, trafikey.ErrInvalid):
		status, code = http.StatusBadRequest, "invalid"
	case errors.Is(err, context.DeadlineExceeded):
		status = http.StatusGatewayTimeout
	}
	writeJSON(w, status, apiError{Error: err.Error(), Code: code})
}

// isUnreachable reports whether err says the server could not be reached
// (not connected yet, a connection refused, reset or closed), as opposed
// to a refusal or a failure of the call itself.
func isUnreachable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return false // a net.Error too, but a call that took too long: 504
	}
	var ne net.Error
	return errors.Is(err, errUnreachable) || errors.As(err, &ne) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, valkey.ErrClosing)
}

// info is GET /api/info.
type infoReply struct {
	ReadOnly bool   `json:"read_only"`
	Where    string `json:"where"`
	SampleMS int64  `json:"sample_ms"`
}

func (s *Server) info(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, infoReply{ReadOnly: s.opts.ReadOnly, Where: s.opts.Where, SampleMS: s.opts.SampleEvery.Milliseconds()})
}

func (s *Server) queues(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.sampler.overview())
}

func (s *Server) series(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.sampler.series(r.URL.Query().Get("queue")))
}

// maxLanesShown bounds the lanes of a queue page.
const maxLanesShown = 200

// queueReply is GET /api/queues/{queue}.
type queueReply struct {
	Queue     admin.QueueView `json:"queue"`
	Executor  string          `json:"executor"`
	Lanes     []laneRow       `json:"lanes"`
	LanesMore bool            `json:"lanes_cut"`
	// Live reports that the queue's job events are watched.
	Live bool `json:"live"`
	// Windows are its failure rates over the last minute and 5 minutes,
	// from the kept samples (none before two).
	Windows []window `json:"windows"`
	// Workers are the worker processes running on the queue, as they
	// registered themselves.
	Workers []trafikey.WorkerInfo `json:"workers"`
	// LatencyMS is how long the oldest waiting job among those
	// without a lane has waited since it was added (this process's clock
	// against the server's add time); 0 when none waits.
	LatencyMS int64 `json:"latency_ms"`
}

// laneRow is one lane of a queue's page.
type laneRow struct {
	admin.LaneView
	// LatencyMS is how long the lane's oldest waiting job has waited
	// since it was added, as the queue's LatencyMS: read at most once per
	// sample (laneHeads); 0 when none waits.
	LatencyMS int64 `json:"latency_ms"`
}

func (s *Server) queue(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	st, err := q.Stats(ctx)
	if err != nil {
		return nil, err
	}
	reply := queueReply{Queue: s.sampler.view(ctx, q.Name(), st), Executor: string(q.Executor()), Lanes: []laneRow{}, Live: s.live.watched(q.Name()),
		Windows: s.sampler.windows(q.Name())}
	if st.Lanes > 0 {
		lanes, more, err := admin.ReadLanes(ctx, q, maxLanesShown)
		if err != nil {
			return nil, err
		}
		latencies, err := s.heads.latencies(ctx, q, lanes)
		if err != nil {
			return nil, err
		}
		for i, l := range lanes {
			reply.Lanes = append(reply.Lanes, laneRow{LaneView: l, LatencyMS: latencies[i]})
		}
		reply.LanesMore = more
	}
	head, err := latency.Oldest(ctx, q, "")
	if err != nil {
		return nil, err
	}
	reply.LatencyMS = latency.Since(head, time.Now()).Milliseconds()
	if reply.Workers, err = q.Admin().Workers(ctx); err != nil {
		return nil, err
	}
	if reply.Workers == nil {
		reply.Workers = []trafikey.WorkerInfo{}
	}
	return reply, nil
}

func (s *Server) job(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	info, err := q.Inspect(ctx, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	reply := jobReply{JobView: admin.ViewOfJob(q.Name(), info)}
	// A parent's children: what a flow's operator looks at next (none,
	// in one call, for a job that is no parent).
	children, err := q.Children(ctx, info.ID)
	if err != nil {
		return nil, err
	}
	if len(children) > maxChildrenShown {
		children, reply.ChildrenCut = children[:maxChildrenShown], true
	}
	reply.Children = admin.ViewOfChildren(children)
	return reply, nil
}

// read serves GET of a queue's resource: the queue found by name, then do
// within the request timeout, its reply as JSON or its error.
func (s *Server) read(do func(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.opts.Timeout)
		defer cancel()
		q, err := s.queueOf(ctx, r.PathValue("queue"))
		if err != nil {
			fail(w, err)
			return
		}
		res, err := do(ctx, q, r)
		if err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	}
}

// queueOf returns the handle on queue name.
func (s *Server) queueOf(ctx context.Context, name string) (*trafikey.Queue, error) {
	cat, err := s.catalog()
	if err != nil {
		return nil, err
	}
	return cat.Queue(ctx, name)
}

// maxChildrenShown bounds the children of a job page.
const maxChildrenShown = 200

// jobReply is GET /api/queues/{queue}/jobs/{id}.
type jobReply struct {
	admin.JobView
	// ChildrenCut reports children left out past maxChildrenShown.
	ChildrenCut bool `json:"children_cut,omitempty"`
}

// actionHeader must be on every action request: a page of another site
// cannot set it without a CORS preflight, which this server never allows,
// and an HTML form cannot set it at all.
const actionHeader = "X-Trafikey-Action"

// action wraps an action handler with the checks every action passes:
// not read-only, and asked for by the dashboard's own pages.
func (s *Server) action(do func(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.opts.ReadOnly {
			writeJSON(w, http.StatusForbidden, apiError{Error: "the dashboard is read-only", Code: "read_only"})
			return
		}
		if r.Header.Get(actionHeader) != "1" || r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			writeJSON(w, http.StatusForbidden, apiError{Error: "actions are taken from the dashboard's own pages (header " + actionHeader + ": 1)", Code: "forbidden"})
			return
		}
		timeout := s.opts.Timeout
		if bulkActions[r.PathValue("action")] || r.PathValue("action") == "delete" {
			timeout = max(timeout, bulkTimeout)
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		q, err := s.queueOf(ctx, r.PathValue("queue"))
		if err != nil {
			fail(w, err)
			return
		}
		res, err := do(ctx, q, r)
		if err != nil {
			fail(w, err)
			return
		}
		// The overview shows the change at once, not a tick later.
		s.sampler.tick(context.WithoutCancel(ctx), false)
		writeJSON(w, http.StatusOK, res)
	}
}

// promotePages bounds the PROMOTE calls of one promote action.
const promotePages = 100

func (s *Server) queueAction(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	switch r.PathValue("action") {
	case "pause":
		return map[string]any{"paused": true}, q.Admin().Pause(ctx)
	case "resume":
		return map[string]any{"paused": false}, q.Admin().Resume(ctx)
	case "promote":
		total := 0
		for range promotePages {
			mt, err := q.Admin().Maintain(ctx, 1000)
			n := mt.Promoted
			total += n
			if err != nil || n < 1000 {
				return map[string]any{"promoted": total}, err
			}
		}
		return map[string]any{"promoted": total}, nil
	case "delete":
		return s.deleteQueue(ctx, q, r)
	}
	if bulkActions[r.PathValue("action")] {
		return s.bulkAction(ctx, q, r)
	}
	return nil, errUnknownAction
}

func (s *Server) jobAction(ctx context.Context, q *trafikey.Queue, r *http.Request) (any, error) {
	id := r.PathValue("id")
	switch r.PathValue("action") {
	case "requeue":
		return map[string]any{"requeued": id}, q.Admin().Requeue(ctx, id)
	case "remove":
		return map[string]any{"removed": id}, q.Admin().Remove(ctx, id)
	case "cancel":
		return map[string]any{"cancelled": id}, q.Cancel(ctx, id)
	case "retry":
		_, err := q.Admin().Reschedule(ctx, id, 0)
		return map[string]any{"retried": id}, err
	}
	return nil, errUnknownAction
}

// errUnknownAction is an action the API does not have.
var errUnknownAction = fmt.Errorf("no such action: %w", trafikey.ErrInvalid)
