package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/cmd/trafikey/internal/admin"
)

// maxShown bounds how much of a payload or error text inspect prints.
const maxShown = 512

func (a *app) newInspectCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect <queue> <id>",
		Short: "Show one job: state, attempts, payload, result, last error, progress, flow and logs",
		Long: `inspect reads one job with INSPECT and never writes. A job that completed, was
removed or never existed is not found (exit code 3). With --json the payload
is in "payload" (base64), and "payload_text" shows it pretty-printed when it
is JSON, else as a hex dump.`,
		Args: args(cobra.ExactArgs(2)),
	}
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		ctx, cancel := s.bound(ctx)
		defer cancel()
		q, err := s.queue(ctx, args[0])
		if err != nil {
			return err
		}
		info, err := q.Inspect(ctx, args[1])
		if errors.Is(err, trafikey.ErrNotFound) {
			return fmt.Errorf("queue %q has no job %s (completed, removed, or never added): %w", args[0], args[1], err)
		}
		if err != nil {
			return s.explain(q, err)
		}
		// a parent's children: what a flow's operator wants to see next
		children, err := q.Children(ctx, info.ID)
		if err != nil {
			return s.explain(q, err)
		}
		if s.json {
			v := admin.ViewOfJob(q.Name(), info)
			v.Children = admin.ViewOfChildren(children)
			return s.printJSON(v)
		}
		tw := tabwriter.NewWriter(s.out(), 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "job\t%s in queue %s\n", info.ID, q.Name())
		state := string(info.State)
		if info.Cancelled {
			state += " (cancelled)"
		}
		fmt.Fprintf(tw, "state\t%s\n", state)
		if info.Kind != "" {
			fmt.Fprintf(tw, "kind\t%s\n", shown([]byte(info.Kind)))
		}
		fmt.Fprintf(tw, "attempts\t%d of %d\n", info.Attempts, info.MaxAttempts)
		fmt.Fprintf(tw, "priority\t%d\n", info.Priority)
		fmt.Fprintf(tw, "backoff\t%s from %v\n", info.Backoff, info.BackoffBase)
		fmt.Fprintf(tw, "added\t%s (%s ago)\n", info.AddedAt.Format(time.RFC3339Nano), time.Since(info.AddedAt).Round(time.Millisecond))
		if info.Timeout > 0 {
			fmt.Fprintf(tw, "timeout\t%v per attempt\n", info.Timeout)
		}
		if info.Lane != "" {
			fmt.Fprintf(tw, "lane\t%s\n", shown([]byte(info.Lane)))
		}
		for _, k := range slices.Sorted(maps.Keys(info.Headers)) {
			fmt.Fprintf(tw, "header\t%s: %s\n", shown([]byte(k)), shown([]byte(info.Headers[k])))
		}
		if info.UniqueKey != "" {
			fmt.Fprintf(tw, "unique key\t%s\n", shown([]byte(info.UniqueKey)))
		}
		if info.Schedule != "" {
			fmt.Fprintf(tw, "schedule\t%s, occurrence of %s\n", info.Schedule, info.ScheduledAt.UTC().Format(time.RFC3339Nano))
		}
		if info.Parent != "" {
			fmt.Fprintf(tw, "parent\t%s\n", info.Parent)
		}
		if info.State == trafikey.StateWaiting {
			fmt.Fprintf(tw, "waiting for\t%d children\n", info.Waiting)
		}
		if info.ChildFailed != "" {
			fmt.Fprintf(tw, "failed by\tchild %s\n", info.ChildFailed)
		}
		if info.Result != nil {
			fmt.Fprintf(tw, "result\t%d bytes: %s\n", len(info.Result), shown(info.Result))
		}
		fmt.Fprintf(tw, "payload\t%d bytes: %s\n", len(info.Payload), shown(info.Payload))
		if info.Progress != "" {
			fmt.Fprintf(tw, "progress\t%s\n", shown([]byte(info.Progress)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		out := s.out()
		if info.LastError != "" {
			fmt.Fprintf(out, "\nlast error:\n%s\n", indent(clip(info.LastError)))
		}
		if len(children) > 0 {
			fmt.Fprintf(out, "\nchildren (%d):\n", len(children))
			for _, c := range children {
				state := string(c.State)
				if state == "" {
					state = "gone"
				}
				line := "  " + c.ID + "  " + state
				if c.Completed {
					line += "  result " + shown(c.Result)
				}
				if c.Err != "" {
					line += "  error " + clip(c.Err)
				}
				fmt.Fprintln(out, line)
			}
		}
		if len(info.Logs) > 0 {
			fmt.Fprintf(out, "\nlogs (%d lines):\n", len(info.Logs))
			for i, line := range info.Logs {
				fmt.Fprintf(out, "  %s  %s\n", strconv.Itoa(i+1), clip(line))
			}
		}
		return nil
	})
}

// shown prints bytes as text when they are printable UTF-8, else quoted
// with escapes, cut to maxShown bytes.
func shown(b []byte) string {
	cut := ""
	if len(b) > maxShown {
		b, cut = b[:maxShown], fmt.Sprintf(" … (%d bytes more)", len(b)-maxShown)
	}
	s := string(b)
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' && r != '\t' }) {
		return s + cut
	}
	return strconv.Quote(s) + cut
}

// clip cuts a long text to a screenful.
func clip(s string) string {
	const most = 4096
	if len(s) <= most {
		return s
	}
	return s[:most] + fmt.Sprintf("\n… (%d bytes more)", len(s)-most)
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}
