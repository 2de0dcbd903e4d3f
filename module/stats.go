package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// stats is EMQ.STATS (internal/lua/stats.lua, read-only): the queue's sizes, pause
// flag and lifetime counters. Crossings: the command and one read batch.
func stats(c *host.Call) error {
	// shape and layout: numkeys 8 (base version meta stats pending delayed
	// active dead), no ARGV
	r, err := prelude(c, protocol.Stats, exactly(0))
	if err != nil {
		return err
	}
	meta, counters := r.keys[2], r.keys[3]
	// the caller's ACL on lanes (read), then the fence and domain reads, one
	// batch: GET version, ZCARD of the four sets, HMGET meta paused lanewait
	// rate_max rate_window, HMGET stats <counters>, ZCARD lanes
	st := statses.get()
	defer statses.put(st)
	st.reset()
	lanes := st.derived(r.base, protocol.SuffixLanes, nil, "")
	waiting := st.derived(r.base, protocol.SuffixWaiting, nil, "")
	completed := st.derived(r.base, protocol.SuffixCompleted, nil, "")
	deny, err := r.firstDenied(host.KeyRead, [][]byte{lanes})
	if err != nil {
		return err
	}
	// waiting and completed: one check, after ZCARD lanes
	flowsOK := c.CheckKeys(host.KeyRead, waiting, completed) == nil
	s := &st.seen
	*s = verdict.StatsSeen{}
	step, err := drive(func() verdict.StatsStep { return verdict.Stats(s) }, func(step verdict.StatsStep) error {
		switch step.Need {
		case verdict.StatsAll:
			b := r.fenced()
			for i := range verdict.StatsSets {
				b.Cmd(host.ZCARD).Arg(r.keys[4+i])
			}
			b.Cmd(host.HMGET).Arg(meta)
			for _, name := range verdict.StatsMetaFields {
				b.Str(name)
			}
			b.Cmd(host.HMGET).Arg(counters)
			for _, name := range protocol.StatsCounters {
				b.Str(name)
			}
			if deny < 0 {
				b.Cmd(host.ZCARD).Arg(lanes)
				if flowsOK {
					b.Cmd(host.ZCARD).Arg(waiting).Cmd(host.ZCARD).Arg(completed)
				}
			}
			res := b.RunAll()
			s.Version = fieldAt(res, 0)
			for i := range s.Sets {
				s.Sets[i] = intAt(res, 1+i)
			}
			s.Meta = verdict.Reply[[4]verdict.Field]{Made: true}
			s.Meta.Err = fieldsAt(res, 5, s.Meta.Val[:])
			f := st.fields[:]
			s.Counters = verdict.Reply[[]verdict.Field]{Made: true, Val: f, Err: fieldsAt(res, 6, f)}
			switch {
			case deny >= 0:
				s.Lanes = denied[int64]()
			case flowsOK:
				s.Lanes, s.Waiting, s.Retained = intAt(res, 7), intAt(res, 8), intAt(res, 9)
			default:
				s.Lanes, s.Waiting = intAt(res, 7), denied[int64]()
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	replyStats(c, step.Verdict)
	return nil
}

// replyStats is STATS's reply: name/value pairs, the sizes and the flag as
// integers, the counters as stored.
func replyStats(c *host.Call, v verdict.StatsVerdict) {
	c.ReplyArray(2 * (len(v.Sets) + 1 + len(v.Counters) + len(v.Extras)))
	for i, name := range verdict.StatsSets {
		c.ReplyString(name)
		c.ReplyInt(v.Sets[i])
	}
	c.ReplyString(protocol.MetaPaused)
	c.ReplyInt(v.Paused)
	for i, name := range statsNames {
		c.ReplyString(name)
		c.ReplyBulk(v.Counters[i])
	}
	for i, name := range protocol.StatsExtras {
		c.ReplyString(name)
		c.ReplyInt(v.Extras[i])
	}
}

// statsState is STATS's scratch between commands: one field per counter of
// protocol.StatsCounters (ten; the protocol's test holds the list).
type statsState struct {
	scratch
	seen   verdict.StatsSeen
	fields [10]verdict.Field
}

// statsNames are the counters' names in the reply: total_<counter>.
var statsNames = func() (out [10]string) {
	for i, name := range protocol.StatsCounters {
		out[i] = "total_" + name
	}
	return out
}()

var statses pool[statsState]
