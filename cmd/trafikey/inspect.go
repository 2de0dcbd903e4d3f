package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
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

// maxShown bounds how much of a name or a short text inspect prints.
const maxShown = 512

// maxPayloadShown bounds how much of a payload or result inspect prints,
// in text and in JSON, unless --full.
const maxPayloadShown = 4 << 10

// inspectJSON is `trafikey inspect --json`: the job, its payload and result
// cut to maxPayloadShown bytes unless --full.
type inspectJSON struct {
	admin.JobView
	// PayloadTruncated and ResultTruncated report a payload or result cut
	// (payload_size is the whole payload's length).
	PayloadTruncated bool `json:"payload_truncated,omitempty"`
	ResultTruncated  bool `json:"result_truncated,omitempty"`
	ResultSize       int  `json:"result_size,omitempty"`
	// PayloadFile is the file --payload-out wrote the whole payload to.
	PayloadFile string `json:"payload_file,omitempty"`
}

// cutBytes returns b cut to maxPayloadShown bytes unless full, and whether
// it was cut.
func cutBytes(b []byte, full bool) ([]byte, bool) {
	if full || len(b) <= maxPayloadShown {
		return b, false
	}
	return b[:maxPayloadShown], true
}

func (a *app) newInspectCmd() *cobra.Command {
	var full bool
	var payloadOut string
	cmd := &cobra.Command{
		Use:   "inspect <queue> <id>",
		Short: "Show one job: state, attempts, payload, result, last error, progress, flow and logs",
		Long: `inspect reads one job with INSPECT and never writes. A job that completed, was
removed or never existed is not found (exit code 3). A payload or result over
4 KiB is cut to its first 4 KiB, with its size and a note: --full prints it
whole, --payload-out FILE writes the payload's raw bytes to FILE ("-" for
standard output, then nothing else is printed). With --json the payload is in
"payload" (base64, cut the same way unless --full, with "payload_truncated"),
and "payload_text" shows what is there pretty-printed when it is JSON, else as
a hex dump.`,
		Args: args(cobra.ExactArgs(2)),
	}
	cmd.Flags().BoolVar(&full, "full", false, "print the whole payload and result, however large")
	cmd.Flags().StringVar(&payloadOut, "payload-out", "", `write the payload's raw bytes to this file ("-": standard output, alone)`)
	return a.connected(cmd, true, func(ctx context.Context, s *session, args []string) error {
		if payloadOut == "-" && s.json {
			return usageErrorf("--payload-out - writes the payload alone to standard output: not with --json")
		}
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
		if payloadOut == "-" {
			_, err := s.out().Write(info.Payload)
			return err
		}
		if payloadOut != "" {
			if err := os.WriteFile(payloadOut, info.Payload, 0o600); err != nil {
				return fmt.Errorf("--payload-out: %w", err)
			}
		}
		// a parent's children: what a flow's operator wants to see next
		children, err := q.Children(ctx, info.ID)
		if err != nil {
			return s.explain(q, err)
		}
		if s.json {
			shownInfo := *info
			var v inspectJSON
			shownInfo.Payload, v.PayloadTruncated = cutBytes(info.Payload, full)
			shownInfo.Result, v.ResultTruncated = cutBytes(info.Result, full)
			v.JobView = admin.ViewOfJob(q.Name(), &shownInfo)
			v.PayloadSize, v.ResultSize, v.PayloadFile = len(info.Payload), len(info.Result), payloadOut
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
			fmt.Fprintf(tw, "result\t%d bytes: %s\n", len(info.Result), shownPayload(info.Result, full, "--full prints it all"))
		}
		switch {
		case payloadOut != "":
			fmt.Fprintf(tw, "payload\t%d bytes, written to %s\n", len(info.Payload), payloadOut)
		default:
			fmt.Fprintf(tw, "payload\t%d bytes: %s\n", len(info.Payload), shownPayload(info.Payload, full, "--full prints it all, --payload-out FILE writes it"))
		}
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
	if len(b) > maxShown {
		return shownAll(b[:maxShown]) + fmt.Sprintf(" … (%d bytes more)", len(b)-maxShown)
	}
	return shownAll(b)
}

// shownAll prints bytes as text when they are printable UTF-8, else quoted
// with escapes, whole.
func shownAll(b []byte) string {
	s := string(b)
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' && r != '\t' }) {
		return s
	}
	return strconv.Quote(s)
}

// shownPayload prints a payload or result as shown does, cut to
// maxPayloadShown bytes unless full, with its size left and how to see it
// all (howAll) when cut.
func shownPayload(b []byte, full bool, howAll string) string {
	cut, truncated := cutBytes(b, full)
	if truncated && !utf8.Valid(cut) {
		// a text cut inside a character still shows as text
		for back := 1; back < utf8.UTFMax; back++ {
			if utf8.Valid(cut[:len(cut)-back]) {
				cut = cut[:len(cut)-back]
				break
			}
		}
	}
	out := shownAll(cut)
	if truncated {
		out += fmt.Sprintf(" … (%d bytes more; %s)", len(b)-len(cut), howAll)
	}
	return out
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
