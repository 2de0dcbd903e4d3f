package trafikeyprom_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/trafikeyprom"
	"github.com/trafikey/trafikey/trafikeytest"
)

// Export a queue's client-side counters and its depth on /metrics.
func Example() {
	ctx := context.Background()
	srv, err := trafikeytest.Start(ctx) // a throwaway server for the example
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	reg := prometheus.NewRegistry()
	obs, err := trafikeyprom.NewObserver(reg)
	if err != nil {
		log.Fatal(err)
	}
	q, err := trafikey.Open(ctx, srv.Client(), "emails", &trafikey.QueueOptions{Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	reg.MustRegister(trafikeyprom.NewQueueCollector(q))
	if _, err := q.Add(ctx, []byte("hello"), &trafikey.JobOptions{Kind: "welcome"}); err != nil {
		log.Fatal(err)
	}

	// In a program: http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{})).
	web := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer web.Close()
	res, err := http.Get(web.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "trafikey_jobs_added_total") || strings.HasPrefix(line, `trafikey_queue_jobs{queue="emails",state="pending"}`) {
			fmt.Println(line)
		}
	}
	// Output:
	// trafikey_jobs_added_total{kind="welcome",queue="emails"} 1
	// trafikey_queue_jobs{queue="emails",state="pending"} 1
}

// Report the queues a program finds at run time, with per-lane series for
// up to 10 lanes of each.
func ExampleNewQueueSourceCollector() {
	ctx := context.Background()
	srv, err := trafikeytest.Start(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	var queues []*trafikey.Queue // filled in as the program opens queues
	reg := prometheus.NewRegistry()
	reg.MustRegister(trafikeyprom.NewQueueSourceCollector(func(context.Context) ([]*trafikey.Queue, error) {
		return queues, nil
	}, trafikeyprom.CollectorOptions{MaxLanes: 10}))

	q, err := trafikey.Open(ctx, srv.Client(), "media", nil)
	if err != nil {
		log.Fatal(err)
	}
	queues = append(queues, q)
	if _, err := q.Add(ctx, []byte("resize"), &trafikey.JobOptions{Lane: "tenant-7"}); err != nil {
		log.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "trafikey_queue_lanes", "trafikey_lane_jobs":
			for _, m := range mf.GetMetric() {
				labels := []string{}
				for _, l := range m.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				fmt.Println(mf.GetName(), strings.Join(labels, ","), m.GetGauge().GetValue())
			}
		}
	}
	// Output:
	// trafikey_lane_jobs lane=tenant-7,queue=media,state=active 0
	// trafikey_lane_jobs lane=tenant-7,queue=media,state=waiting 1
	// trafikey_queue_lanes queue=media 1
}
