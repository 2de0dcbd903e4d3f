package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// resume is EMQ.RESUME (internal/lua/resume.lua): let CLAIM hand out jobs again, and
// wake idle workers when jobs are waiting. Crossings: the command, one read
// batch (the fence and the flag); when the queue was paused, one read batch
// (the types of pending and signal), the guard and one write batch.
func resume(c *host.Call) error {
	// shape and layout: numkeys 5 (base version meta pending signal), no ARGV
	r, err := prelude(c, protocol.Resume, exactly(0))
	if err != nil {
		return err
	}
	meta, pending, signal := r.keys[2], r.keys[3], r.keys[4]
	// fence and domain reads, driven by the verdict
	st := resumes.get()
	defer resumes.put(st)
	st.reset()
	s := &st.seen
	*s = verdict.PauseSeen{}
	step, err := drive(func() verdict.PauseStep { return verdict.Resume(s) }, func(step verdict.PauseStep) error {
		switch step.Need {
		case verdict.PauseFirst:
			// GET version, HMGET meta paused lanewait (which types meta, the
			// key HDEL writes)
			res := r.fenced().Cmd(host.HMGET).Arg(meta).Str(protocol.MetaPaused).Str(protocol.MetaLaneWait).RunAll()
			s.Version = st.keep(fieldAt(res, 0))
			var f [2]verdict.Field
			if err := fieldsAt(res, 1, f[:]); err != nil {
				s.Paused = verdict.Failed[verdict.Field](err)
			} else {
				s.Paused = st.keep(verdict.Got(f[0]))
				s.LaneWait = st.keep(verdict.Got(f[1])).Val
			}
		case verdict.ResumeTypes:
			// ZCARD pending (the signal's condition, and its type), LLEN
			// signal (its type)
			res := c.Read().Cmd(host.ZCARD).Arg(pending).Cmd(host.LLEN).Arg(signal).RunAll()
			s.Pending, s.Signal = intAt(res, 0), intAt(res, 1)
		}
		return nil
	})
	if err != nil {
		return err
	}
	v := step.Verdict
	if !v.Change {
		c.ReplyInt(0)
		return nil
	}
	// guard, then the writes: HDEL meta paused, the signal when jobs wait
	// in pending or in lanes (in one write when the list held at most one
	// element)
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write().Cmd("HDEL").Arg(meta).Str(protocol.MetaPaused)
	if v.Signal {
		signalPush(b, signal, s.Signal.Val)
	}
	if _, err := b.Run(); err != nil {
		return wrote(c, err)
	}
	c.ReplyInt(1)
	return nil
}

// resumeState is RESUME's scratch between commands.
type resumeState struct {
	scratch
	seen verdict.PauseSeen
}

var resumes pool[resumeState]
