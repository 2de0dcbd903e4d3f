package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// progress is EMQ.PROGRESS (internal/lua/progress.lua): store an active attempt's
// progress value. Crossings: the command, the row's ACL check, one read
// batch (the fence and the row's att), the guard, one write.
func progress(c *host.Call) error {
	// shape and layout: numkeys 2 (base version), ARGV id token value
	r, err := prelude(c, protocol.Progress, exactly(3))
	if err != nil {
		return err
	}
	// values, in ARGV order: the id, the value; the token is any bytes
	id, token := r.args[0], r.args[1]
	if !grammar.ID(id) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Progress.Name, "id"))
	}
	if len(r.args[2]) > protocol.MaxText {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Progress.Name, "value"))
	}
	st := progresses.get()
	defer progresses.put(st)
	st.reset()
	st.ev = verdict.Field{}
	row := st.derived(r.base, protocol.SuffixJob, id, "")
	// the row is outside the key-spec: the caller's ACL first (read, then
	// written); a denial is the row read's refusal, in its place after the
	// fence
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, [][]byte{row})
	if err != nil {
		return err
	}
	// fence and domain read, one batch: GET version, HGET row att (which
	// types the row HSET writes)
	var s verdict.ProgressSeen
	step, err := drive(func() verdict.ProgressStep { return verdict.Progress(token, &s) }, func(step verdict.ProgressStep) error {
		switch step.Need {
		case verdict.ProgressFirst:
			b := r.fenced()
			if deny < 0 {
				b.Cmd(host.HMGET).Arg(row).Str(protocol.FieldAttempts).Str(protocol.FieldEvents)
			}
			res := b.RunAll()
			s.Version = fieldAt(res, 0)
			if deny < 0 {
				var f [2]verdict.Field
				if err := fieldsAt(res, 1, f[:]); err != nil {
					s.Att = verdict.Failed[verdict.Field](err)
				} else {
					s.Att, st.ev = verdict.Got(f[0]), f[1]
				}
			} else {
				s.Att = denied[verdict.Field]()
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if step.Verdict.Gone {
		c.ReplyInt(0)
		return nil
	}
	// the job's progress event, then the stream
	st.events.reset()
	st.events.add(st.ev, protocol.EventProgress, id, protocol.EventValueField, r.args[2])
	if err := st.events.check(&r); err != nil {
		return err
	}
	// guard, then the write; the value passes by reference
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	if err := st.events.publish(c, w); err != nil {
		return err
	}
	b := w.Write().Cmd("HSET").Arg(row).Str(protocol.FieldProgress).Argv(r.argv(2))
	if _, err := b.Run(); err != nil {
		return wrote(c, err)
	}
	c.ReplyInt(1)
	return nil
}

// progressState is PROGRESS's scratch between commands.
type progressState struct {
	scratch
	// ev is the row's ev; events the job's progress event.
	ev     verdict.Field
	events jobEvents
}

var progresses pool[progressState]
