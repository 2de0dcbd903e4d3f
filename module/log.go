package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// logLine is EMQ.LOG (internal/lua/log.lua): append a line to an active attempt's
// log, keeping the last cap lines. Crossings: the command, the ACL check of
// the row and its logs, one read batch (the fence, the row's att, the log's
// length), the guard, one write batch.
func logLine(c *host.Call) error {
	// shape and layout: numkeys 2 (base version), ARGV id token line cap
	r, err := prelude(c, protocol.Log, exactly(4))
	if err != nil {
		return err
	}
	// values, in ARGV order: the id, the line, the cap; the token is any bytes
	id, token, line := r.args[0], r.args[1], r.args[2]
	if !grammar.ID(id) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Log.Name, "id"))
	}
	if len(line) > protocol.MaxText {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Log.Name, "line"))
	}
	limit, ok := grammar.Decimal(r.args[3], 1, protocol.MaxLogCap)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Log.Name, "cap"))
	}
	st := logs.get()
	defer logs.put(st)
	st.reset()
	row := st.derived(r.base, protocol.SuffixJob, id, "")
	list := st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixLogs)
	// the row and its logs are outside the key-spec: the caller's ACL first,
	// the row read, the logs read and written. A denial is the refusal of
	// the key's read, in its place.
	rowOK, logsErr, err := rowAndLogsACL(&r, row, list, host.KeyRead, host.KeyRead|host.KeyInsert|host.KeyDelete)
	if err != nil {
		return err
	}
	logsOK := rowOK && logsErr == nil // a denied row ends the call before the logs
	// fence and domain reads, one batch: GET version, HGET row att (which
	// types the row), LLEN logs (which types the logs, and gives the length
	// the cap is judged on)
	var s verdict.LogSeen
	step, err := drive(func() verdict.LogStep { return verdict.Log(token, limit, &s) }, func(step verdict.LogStep) error {
		switch step.Need {
		case verdict.LogFirst:
			b := r.fenced()
			if rowOK {
				b.Cmd(host.HGET).Arg(row).Str(protocol.FieldAttempts)
			}
			if logsOK {
				b.Cmd(host.LLEN).Arg(list)
			}
			res := b.RunAll()
			i := 1
			s.Version = fieldAt(res, 0)
			if rowOK {
				s.Att, i = fieldAt(res, i), i+1
			} else {
				s.Att = denied[verdict.Field]()
			}
			if logsOK {
				s.Len = intAt(res, i)
			} else {
				s.Len = denied[int64]()
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	v := step.Verdict
	if v.Gone {
		c.ReplyInt(0)
		return nil
	}
	if err := writeLog(&r, list, limit, v); err != nil {
		return err
	}
	c.ReplyInt(v.Reply)
	return nil
}

// writeLog is LOG's writes: the guard, then RPUSH logs <line> (its new
// length predicted; the line passes by reference), LTRIM logs -cap -1 when
// it passes cap.
func writeLog(r *verbCall, list []byte, limit int64, v verdict.LogVerdict) error {
	c := r.c
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write().Cmd("RPUSH").Arg(list).Argv(r.argv(2))
	if v.Trim {
		b.Cmd("LTRIM").Arg(list).Int(-limit).Str("-1")
	}
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	if got := intAt(res, 0); got.Err != nil || got.Val != v.Pushed {
		host.Logf(host.LogWarning, "%s: RPUSH answered %d (%v), %d predicted; answered %q", c.Name(), got.Val, got.Err, v.Pushed, protocol.ErrHostReply)
		return host.ErrHostReply
	}
	return nil
}

// logState is LOG's scratch between commands.
type logState struct{ scratch }

var logs pool[logState]
