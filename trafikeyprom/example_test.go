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
	q, err := trafikey.Open(ctx, srv.Client(), "emails", trafikey.WithObserver(obs))
	if err != nil {
		log.Fatal(err)
	}
	reg.MustRegister(trafikeyprom.NewQueueCollector(q))
	if _, err := q.Add(ctx, []byte("hello")); err != nil {
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
	// trafikey_jobs_added_total{queue="emails"} 1
	// trafikey_queue_jobs{queue="emails",state="pending"} 1
}
