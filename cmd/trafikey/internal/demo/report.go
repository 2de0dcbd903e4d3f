package demo

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// WriteReport prints the result as a table. server describes where the
// queue lives, e.g. "valkey 8.0.1 at 127.0.0.1:40211".
func WriteReport(w io.Writer, r *Result, server string) error {
	c := r.Config
	fmt.Fprintf(w, "trafikey demo: queue %s on %s, %s executor\n\n", r.Queue, server, r.Executor)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\tjobs\telapsed\tjobs/s\tlatency p50\tlatency p99")
	fmt.Fprintf(tw, "add: %d producers, batches of %d\t%d\t%s\t%s\t-\t-\n",
		c.Producers, c.Batch, c.Jobs, seconds(r.AddElapsed), rate(c.Jobs, r.AddElapsed))
	fmt.Fprintf(tw, "add and run, concurrency %d (add→complete)\t%d\t%s\t%s\t%s\t%s\n",
		c.Concurrency, c.Jobs, seconds(r.Elapsed), rate(c.Jobs, r.Elapsed), latency(r.Latency.P50), latency(r.Latency.P99))
	if r.Steady.N > 0 {
		fmt.Fprintf(tw, "steady %s jobs/s, one add at a time (add→complete)\t%d\t%s\t%s\t%s\t%s\n",
			thousands(int64(c.SteadyRate)), r.Steady.N, seconds(r.SteadyElapsed), rate(r.Steady.N, r.SteadyElapsed),
			latency(r.Steady.P50), latency(r.Steady.P99))
	}
	if r.Idle.N > 0 {
		fmt.Fprintf(tw, "idle worker, one job at a time (add→start)\t%d\t-\t-\t%s\t%s\n",
			r.Idle.N, latency(r.Idle.P50), latency(r.Idle.P99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s := r.Stats
	_, err := fmt.Fprintf(w, "\nqueue totals: added %d, completed %d, failed %d, dead %d; now pending %d, active %d\n",
		s.TotalAdded, s.TotalCompleted, s.TotalFailed, s.TotalDead, s.Pending, s.Active)
	if err == nil && r.NotCompleted > 0 {
		_, err = fmt.Fprintf(w, "%d jobs of the main run were not completed by their first worker (see the log)\n", r.NotCompleted)
	}
	return err
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s" }

func rate(n int, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return thousands(int64(float64(n) / d.Seconds()))
}

// latency prints a duration with three significant digits in ms or s.
func latency(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	case ms < 100:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	default:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s"
	}
}

// thousands spells n with comma separators: 163,934.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
