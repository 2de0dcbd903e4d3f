package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// inspect is EMQ.INSPECT (internal/lua/inspect.lua, read-only): a job's row and logs.
// Crossings: the command, the ACL check of the row and its logs, one read
// batch.
func inspect(c *host.Call) error {
	// shape and layout: numkeys 2 (base version), ARGV id
	r, err := prelude(c, protocol.Inspect, exactly(1))
	if err != nil {
		return err
	}
	// values: the id
	id := r.args[0]
	if !grammar.ID(id) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Inspect.Name, "id"))
	}
	st := inspects.get()
	defer inspects.put(st)
	st.reset()
	row := st.derived(r.base, protocol.SuffixJob, id, "")
	logs := st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixLogs)
	// the row and its logs are outside the key-spec: the caller's ACL first
	// (both read); a denial is the refusal of the key's read, in its place
	deny, err := r.firstDenied(host.KeyRead, [][]byte{row, logs})
	if err != nil {
		return err
	}
	rowOK, logsOK := deny != 0, deny < 0 // a denied row ends the call before the logs
	// fence and domain reads, one batch: GET version, HMGET row <fields>,
	// LRANGE logs 0 -1; the reply is written from these views before any
	// other host call
	s := &st.seen
	*s = verdict.InspectSeen{}
	step, err := drive(func() verdict.InspectStep { return verdict.Inspect(s) }, func(step verdict.InspectStep) error {
		switch step.Need {
		case verdict.InspectFirst:
			b := r.fenced()
			if rowOK {
				b.Cmd(host.HMGET).Arg(row)
				for _, name := range protocol.InspectFields {
					b.Str(name)
				}
			}
			if logsOK {
				b.Cmd(host.LRANGE).Arg(logs).Str("0").Str("-1")
			}
			res := b.RunAll()
			i := 1
			s.Version = fieldAt(res, 0)
			if rowOK {
				f := st.fields[:]
				s.Row, i = verdict.Reply[[]verdict.Field]{Made: true, Val: f, Err: fieldsAt(res, i, f)}, i+1
			} else {
				s.Row = denied[[]verdict.Field]()
			}
			if logsOK {
				s.Logs = listAt(res, i, nil, st.lines)
				st.lines = s.Logs.Val
			} else {
				s.Logs = denied[[][]byte]()
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	v := step.Verdict
	if v.Gone {
		c.ReplyNull()
		return nil
	}
	replyInspect(c, v)
	return nil
}

// replyInspect is INSPECT's reply: the fields that are set, name then
// value, then the logs.
func replyInspect(c *host.Call, v verdict.InspectVerdict) {
	n := 0
	for _, f := range v.Fields {
		if f.Set {
			n++
		}
	}
	c.ReplyArray(2*n + 2)
	for i, f := range v.Fields {
		if f.Set {
			c.ReplyString(protocol.InspectFields[i])
			c.ReplyBulk(f.Bytes)
		}
	}
	c.ReplyString("logs")
	c.ReplyArray(len(v.Logs))
	for _, line := range v.Logs {
		c.ReplyBulk(line)
	}
}

// inspectState is INSPECT's scratch between commands: one field per name of
// protocol.InspectFields (twenty-four; the protocol's test holds the list).
type inspectState struct {
	scratch
	seen   verdict.InspectSeen
	fields [24]verdict.Field
	lines  [][]byte
}

var inspects pool[inspectState]
