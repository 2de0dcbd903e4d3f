package main

import (
	"context"
	"fmt"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/protocol"
)

// listKind prints a page of the jobs of state whose kind is kind (jobs
// --kind): the table of jobs, then how many jobs were examined, and the
// cursor when the listing goes on.
func listKind(ctx context.Context, s *session, q *trafikey.Queue, state trafikey.JobState, opts trafikey.JobsOptions, kind string) error {
	if opts.Limit < 1 || opts.Limit > protocol.MaxCount {
		return usageErrorf("--limit %d outside 1..%d", opts.Limit, protocol.MaxCount)
	}
	p, err := admin.JobsOfKind(ctx, q, state, opts, kind)
	if err != nil {
		return s.explain(q, err)
	}
	if s.json {
		v := admin.ViewOfJobsPage(q.Name(), state, opts.Lane, p.JobsPage)
		v.Kind, v.Examined = kind, p.Examined
		return s.printJSON(v)
	}
	out := s.out()
	if len(p.Rows) > 0 {
		if err := printJobs(s, q.Name(), state, p.JobsPage); err != nil {
			return err
		}
		fmt.Fprintf(out, "kind %s: %d of the %d jobs examined\n", shownName(kind), len(p.Rows), p.Examined)
		return nil
	}
	fmt.Fprintf(out, "no %s jobs of kind %s in %s among the %d examined (%d in all)", state, shownName(kind), q.Name(), p.Examined, p.Total)
	if p.Next != "" {
		fmt.Fprintf(out, "; next page: --cursor %s\n", shellWord(p.Next))
	} else {
		fmt.Fprintln(out, "; no more pages")
	}
	return nil
}
