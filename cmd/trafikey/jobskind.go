package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
	"github.com/trafikey/trafikey/internal/protocol"
)

// kindScanPage is how many jobs one JOBS call of a --kind listing reads:
// the kind is matched here, not by the server, and calls of 100 keep each
// one short (as the bulk operations' calls, bulkLimit in the root package).
const kindScanPage = 100

// kindScanMax bounds the jobs one --kind listing examines: a page stops
// there, full or not, and its cursor continues after the last job examined.
const kindScanMax = 10000

// kindPage is a page of the jobs of one kind: the page (its rows those of
// the kind, its Next after the last job examined) and how many jobs were
// examined to fill it.
type kindPage struct {
	trafikey.JobsPage
	Examined int
}

// jobsOfKind reads the jobs of state whose kind is kind, continuing after
// opts.After: it reads pages of kindScanPage jobs on until it has opts.Limit
// rows of the kind, the set is read, or kindScanMax jobs were examined. Next
// continues after the last job examined: the last row taken when the page
// filled, so no job of the kind is skipped.
func jobsOfKind(ctx context.Context, q *trafikey.Queue, state trafikey.JobState, opts trafikey.JobsOptions, kind string) (kindPage, error) {
	want := opts.Limit
	scan := opts
	scan.Limit = kindScanPage
	var out kindPage
	out.Rows = []trafikey.JobRow{}
	for {
		p, err := q.Jobs(ctx, state, scan)
		if err != nil {
			return out, err
		}
		out.Total = p.Total
		for i, r := range p.Rows {
			out.Examined++
			if r.Exists && r.Kind == kind {
				out.Rows = append(out.Rows, r)
			}
			if len(out.Rows) == want || out.Examined == kindScanMax {
				out.Next = p.Next
				if i < len(p.Rows)-1 {
					out.Next = strconv.FormatInt(r.Score, 10) + ":" + r.ID
				}
				return out, nil
			}
		}
		out.Next = p.Next
		if p.Next == "" {
			return out, nil
		}
		scan.After = p.Next
	}
}

// listKind prints a page of the jobs of state whose kind is kind (jobs
// --kind): the table of jobs, then how many jobs were examined, and the
// cursor when the listing goes on.
func listKind(ctx context.Context, s *session, q *trafikey.Queue, state trafikey.JobState, opts trafikey.JobsOptions, kind string) error {
	if opts.Limit < 1 || opts.Limit > protocol.MaxCount {
		return usageErrorf("--limit %d outside 1..%d", opts.Limit, protocol.MaxCount)
	}
	p, err := jobsOfKind(ctx, q, state, opts, kind)
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
