package trafikeyprom_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
	"github.com/trafikey/trafikey/trafikeyprom"
)

// A partitioned queue on a cluster of three primaries: its queue series
// are its partitions' summed, and each partition has its jobs by state and
// its counters, labeled with its tag.
func TestQueueCollectorPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a cluster of three primaries")
	}
	t.Parallel()
	ctx := t.Context()
	cl := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3})
	c := valkeytest.ClusterClient(t, cl)

	// Partition i gets i+1 pending jobs and i delayed ones, and i+1 of
	// its jobs complete; partition 0's before the queue is partitioned
	// (its keys are the queue's own), the others' through a handle on
	// their tag alone.
	fill := func(i int, q *trafikey.Queue) {
		for range i + 1 {
			if _, err := q.Add(ctx, []byte("done"), nil); err != nil {
				t.Fatal(err)
			}
			jobs, err := q.Claim(ctx, time.Minute, 1)
			if err != nil || len(jobs) != 1 {
				t.Fatalf("claim: %v %v", jobs, err)
			}
			if err := jobs[0].Complete(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := q.Add(ctx, []byte("x"), nil); err != nil {
				t.Fatal(err)
			}
		}
		for range i {
			if _, err := q.Add(ctx, []byte("later"), &trafikey.JobOptions{Delay: time.Hour}); err != nil {
				t.Fatal(err)
			}
		}
	}
	first, err := trafikey.Open(ctx, c, "mail", nil)
	if err != nil {
		t.Fatal(err)
	}
	fill(0, first)
	mail, err := trafikey.Open(ctx, c, "mail", &trafikey.QueueOptions{Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	tags, err := c.Do(ctx, c.B().Hgetall().Key("emq:{mail}:partitions").Build()).AsStrMap()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 3; i++ {
		p, err := trafikey.Open(ctx, c, tags[strconv.Itoa(i)], nil)
		if err != nil {
			t.Fatal(err)
		}
		fill(i, p)
	}

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(trafikeyprom.NewQueueCollector(mail))
	var jobs, added, completed strings.Builder
	for i := range 3 {
		tag := tags[strconv.Itoa(i)]
		for _, state := range []string{"active", "completed", "dead", "delayed", "pending", "waiting"} {
			n := 0
			switch state {
			case "pending":
				n = i + 1
			case "delayed":
				n = i
			}
			fmt.Fprintf(&jobs, "trafikey_queue_partition_jobs{partition=%q,queue=\"mail\",state=%q} %d\n", tag, state, n)
		}
		fmt.Fprintf(&added, "trafikey_queue_partition_added_total{partition=%q,queue=\"mail\"} %d\n", tag, 2*(i+1)+i)
		fmt.Fprintf(&completed, "trafikey_queue_partition_completed_total{partition=%q,queue=\"mail\"} %d\n", tag, i+1)
	}
	want := `
# HELP trafikey_queue_jobs Jobs in the queue by state, as the server counts them.
# TYPE trafikey_queue_jobs gauge
trafikey_queue_jobs{queue="mail",state="active"} 0
trafikey_queue_jobs{queue="mail",state="completed"} 0
trafikey_queue_jobs{queue="mail",state="dead"} 0
trafikey_queue_jobs{queue="mail",state="delayed"} 3
trafikey_queue_jobs{queue="mail",state="pending"} 6
trafikey_queue_jobs{queue="mail",state="waiting"} 0
# HELP trafikey_queue_completed_total Jobs ever completed in the queue, by any worker.
# TYPE trafikey_queue_completed_total counter
trafikey_queue_completed_total{queue="mail"} 6
# HELP trafikey_queue_partitions Partitions of a partitioned queue, whose series above are its partitions' summed; 0 for a queue never partitioned.
# TYPE trafikey_queue_partitions gauge
trafikey_queue_partitions{queue="mail"} 3
# HELP trafikey_queue_partition_jobs Jobs in one partition of a partitioned queue by state, as the server counts them; summed over the partitions, trafikey_queue_jobs.
# TYPE trafikey_queue_partition_jobs gauge
` + jobs.String() + `# HELP trafikey_queue_partition_added_total Jobs ever added to one partition of a partitioned queue.
# TYPE trafikey_queue_partition_added_total counter
` + added.String() + `# HELP trafikey_queue_partition_completed_total Jobs ever completed in one partition of a partitioned queue.
# TYPE trafikey_queue_partition_completed_total counter
` + completed.String()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"trafikey_queue_jobs", "trafikey_queue_completed_total", "trafikey_queue_partitions",
		"trafikey_queue_partition_jobs", "trafikey_queue_partition_added_total", "trafikey_queue_partition_completed_total"); err != nil {
		t.Fatal(err)
	}

	// An unpartitioned queue has none of the partition series.
	solo, err := trafikey.Open(ctx, c, "solo", nil)
	if err != nil {
		t.Fatal(err)
	}
	reg = prometheus.NewPedanticRegistry()
	reg.MustRegister(trafikeyprom.NewQueueCollector(solo))
	if n, err := testutil.GatherAndCount(reg, "trafikey_queue_partition_jobs", "trafikey_queue_partition_added_total"); err != nil || n != 0 {
		t.Fatalf("partition series of an unpartitioned queue: %d, %v", n, err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP trafikey_queue_partitions Partitions of a partitioned queue, whose series above are its partitions' summed; 0 for a queue never partitioned.
# TYPE trafikey_queue_partitions gauge
trafikey_queue_partitions{queue="solo"} 0
`), "trafikey_queue_partitions"); err != nil {
		t.Fatal(err)
	}
}
