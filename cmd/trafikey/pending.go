package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// pendingView is `trafikey jobs <queue> --state pending` without --lane:
// the page of the jobs without a lane (its total is theirs), the queue's
// pending count and where those jobs are, and each lane with waiting jobs
// with its first page.
type pendingView struct {
	admin.JobsPageView
	// Pending counts every ready job (Stats.Pending): WithoutLane of them
	// without a lane, InLanes in lanes.
	Pending     int `json:"pending"`
	WithoutLane int `json:"without_lane"`
	InLanes     int `json:"in_lanes"`
	// Lanes are the lanes with waiting jobs, in byte order of their names;
	// LanesCut reports that more were left out (--lanes).
	Lanes    []laneJobsView `json:"lanes"`
	LanesCut bool           `json:"lanes_cut,omitempty"`

	rows []trafikey.JobRow // the jobs without a lane
}

// laneJobsView is one lane of a pendingView: its counts and the first page
// of its waiting jobs.
type laneJobsView struct {
	admin.LaneView
	Rows []admin.JobRowView `json:"rows"`
	// Next continues the lane's listing (--lane with --cursor); empty when
	// the page holds all its jobs.
	Next string `json:"next,omitempty"`

	rows []trafikey.JobRow
}

// readPending reads the queue's pending count, a page of the jobs without
// a lane (opts), and the first perLane waiting jobs of each of the first
// maxLanes lanes with waiting jobs (0: every lane).
func readPending(ctx context.Context, q *trafikey.Queue, opts trafikey.JobsOptions, perLane, maxLanes int) (*pendingView, error) {
	st, err := q.Stats(ctx)
	if err != nil {
		return nil, err
	}
	p, err := q.Jobs(ctx, trafikey.StatePending, opts)
	if err != nil {
		return nil, err
	}
	v := &pendingView{
		JobsPageView: admin.ViewOfJobsPage(q.Name(), trafikey.StatePending, "", p),
		Pending:      st.Pending, WithoutLane: st.Pending - st.LaneWaiting, InLanes: st.LaneWaiting,
		Lanes: []laneJobsView{}, rows: p.Rows,
	}
	for l, err := range q.Lanes(ctx) {
		if err != nil {
			return nil, err
		}
		if l.Waiting == 0 {
			continue // active jobs only: none pending
		}
		if maxLanes > 0 && len(v.Lanes) == maxLanes {
			v.LanesCut = true
			break
		}
		lo := opts
		lo.Lane, lo.Limit = l.Name, perLane
		lp, err := q.Jobs(ctx, trafikey.StatePending, lo)
		if err != nil {
			return nil, err
		}
		lv := laneJobsView{LaneView: admin.ViewOfLane(l), Rows: make([]admin.JobRowView, len(lp.Rows)), Next: lp.Next, rows: lp.Rows}
		for i, r := range lp.Rows {
			lv.Rows[i] = admin.ViewOfJobRow(r)
		}
		v.Lanes = append(v.Lanes, lv)
	}
	return v, nil
}

// printPending prints v: where the pending jobs are, the jobs without a
// lane, then each lane's first jobs.
func printPending(s *session, v *pendingView) error {
	out, rows := s.out(), v.rows
	where := fmt.Sprintf("%d in %d lanes", v.InLanes, len(v.Lanes))
	if v.LanesCut {
		where = fmt.Sprintf("%d in lanes (the first %d lanes shown; trafikey lanes %s lists them all)", v.InLanes, len(v.Lanes), v.Queue)
	}
	fmt.Fprintf(out, "%d pending in %s: %d without a lane, %s\n", v.Pending, v.Queue, v.WithoutLane, where)

	fmt.Fprintf(out, "\nwithout a lane (%d):\n", v.Total)
	if len(rows) > 0 {
		if err := printJobRows(out, trafikey.StatePending, rows); err != nil {
			return err
		}
	}
	if v.Next != "" {
		fmt.Fprintf(out, "%d of %d; next page: --no-lane --cursor %s\n", len(rows), v.Total, shellWord(v.Next))
	}
	for _, l := range v.Lanes {
		var about []string
		if l.Active > 0 {
			about = append(about, strconv.Itoa(l.Active)+" active")
		}
		if l.Cap > 0 {
			about = append(about, "cap "+strconv.Itoa(l.Cap))
		}
		if l.Paused {
			about = append(about, "paused")
		}
		extra := ""
		if len(about) > 0 {
			extra = ", " + strings.Join(about, ", ")
		}
		fmt.Fprintf(out, "\nlane %s (%d waiting%s):\n", shown([]byte(l.Name)), l.Waiting, extra)
		if err := printJobRows(out, trafikey.StatePending, l.rows); err != nil {
			return err
		}
		if l.Next != "" {
			fmt.Fprintf(out, "%d of %d; next page: --lane %s --cursor %s\n", len(l.rows), l.Waiting, shellWord(l.Name), shellWord(l.Next))
		}
	}
	return nil
}
