package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/trafikey/trafikey"
)

// maxShown bounds how much of a payload or error text inspect prints.
const maxShown = 512

func newInspectCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "inspect <queue> <id>",
		Short: "Show one job: state, attempts, payload, last error, progress and logs",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, closeClient, err := openReadOnly(cmd.Context(), addr, args[0])
			if err != nil {
				return err
			}
			defer closeClient()
			info, err := q.Inspect(cmd.Context(), args[1])
			if errors.Is(err, trafikey.ErrNotFound) {
				return fmt.Errorf("queue %q has no job %s (completed, removed, or never added)", args[0], args[1])
			}
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "job\t%s in queue %s\n", info.ID, q.Name())
			fmt.Fprintf(tw, "state\t%s\n", info.State)
			fmt.Fprintf(tw, "attempts\t%d of %d\n", info.Attempts, info.MaxAttempts)
			fmt.Fprintf(tw, "priority\t%d\n", info.Priority)
			fmt.Fprintf(tw, "backoff\t%s from %v\n", info.Backoff, info.BackoffBase)
			fmt.Fprintf(tw, "added\t%s (%s ago)\n", info.AddedAt.Format(time.RFC3339Nano), time.Since(info.AddedAt).Round(time.Millisecond))
			if info.UniqueKey != "" {
				fmt.Fprintf(tw, "unique key\t%s\n", shown([]byte(info.UniqueKey)))
			}
			fmt.Fprintf(tw, "payload\t%d bytes: %s\n", len(info.Payload), shown(info.Payload))
			if info.Progress != "" {
				fmt.Fprintf(tw, "progress\t%s\n", shown([]byte(info.Progress)))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if info.LastError != "" {
				fmt.Fprintf(out, "\nlast error:\n%s\n", indent(clip(info.LastError)))
			}
			if len(info.Logs) > 0 {
				fmt.Fprintf(out, "\nlogs (%d lines):\n", len(info.Logs))
				for i, line := range info.Logs {
					fmt.Fprintf(out, "  %s  %s\n", strconv.Itoa(i+1), clip(line))
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", defaultAddr, "server address host:port")
	return cmd
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
