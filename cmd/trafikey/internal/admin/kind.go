package admin

import (
	"context"
	"strconv"

	"github.com/trafikey/trafikey"
)

// kindScanPage is how many jobs one JOBS call of a listing of one kind
// reads: the kind is matched here, not by the server, and calls of 100 keep
// each one short (as the bulk operations' calls, bulkLimit in the root
// package).
const kindScanPage = 100

// KindScanMax bounds the jobs one listing of one kind examines: a page
// stops there, full or not, and its cursor continues after the last job
// examined.
const KindScanMax = 10000

// KindPage is a page of the jobs of one kind: the page (its rows those of
// the kind, its Next after the last job examined) and how many jobs were
// examined to fill it.
type KindPage struct {
	trafikey.JobsPage
	Examined int
}

// JobsOfKind reads the jobs of state whose kind is kind, continuing after
// opts.After: it reads pages of 100 jobs on until it has opts.Limit rows of
// the kind, the set is read, or KindScanMax jobs were examined. Next
// continues after the last job examined: the last row taken when the page
// filled, so no job of the kind is skipped.
func JobsOfKind(ctx context.Context, q *trafikey.Queue, state trafikey.JobState, opts trafikey.JobsOptions, kind string) (KindPage, error) {
	want := opts.Limit
	scan := opts
	scan.Limit = kindScanPage
	var out KindPage
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
			if len(out.Rows) == want || out.Examined == KindScanMax {
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
