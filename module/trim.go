package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// statTrimmed is the counter TRIM increments.
var statTrimmed = protocol.StatsCounters[8]

// trim is EMQ.TRIM (internal/lua/trim.lua): delete up to limit retained jobs past the
// queue's bounds, completed ones first, then dead ones. Crossings: the
// command, the fence and meta's bounds, the ACL check of completed, one
// crossing per bound in use, the ACL check of the jobs' keys, their rows,
// their unique keys, the guard, one write batch.
func trim(c *host.Call) error {
	// shape and layout: numkeys 5 (base version meta stats dead), ARGV limit
	r, err := prelude(c, protocol.Trim, exactly(1))
	if err != nil {
		return err
	}
	limit, ok := grammar.Decimal(r.args[0], 1, protocol.MaxCount)
	if !ok {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Trim.Name, "limit"))
	}
	st := flowVerbs.get()
	defer flowVerbs.put(st)
	st.reset()
	bounds, completed, err := st.trimBounds(&r)
	if err != nil {
		return err
	}
	// the ids, at most limit in all: completed past its age, then past its
	// count, then the same for dead
	st.names = st.names[:0]
	done, err := st.pastBounds(&r, completed, bounds.KeepDone, bounds.KeepDoneMax, limit)
	if err != nil {
		return err
	}
	deadN, err := st.pastBounds(&r, r.keys[4], bounds.KeepDead, bounds.KeepDeadMax, limit-int64(done))
	if err != nil {
		return err
	}
	if done+deadN > 0 {
		if err := st.trimJobs(&r, completed, done, deadN); err != nil {
			return err
		}
	}
	c.ReplyArray(2)
	c.ReplyInt(int64(done))
	c.ReplyInt(int64(deadN))
	return nil
}

// trimBounds reads the fence and meta's retention bounds, then checks
// completed against the caller's ACL (read, written): it returns the
// bounds and completed's key.
func (st *flowVerbState) trimBounds(r *verbCall) (verdict.TrimBounds, []byte, error) {
	res := r.fenced().Cmd(host.HMGET).Arg(r.keys[2]).
		Str(protocol.MetaKeepDone).Str(protocol.MetaKeepDoneMax).Str(protocol.MetaKeepDead).Str(protocol.MetaKeepDeadMax).
		RunAll()
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return verdict.TrimBounds{}, nil, err
	}
	var f [4]verdict.Field
	if err := fieldsAt(res, 1, f[:]); err != nil {
		return verdict.TrimBounds{}, nil, err
	}
	bounds := verdict.ReadTrimBounds(f)
	completed := st.derived(r.base, protocol.SuffixCompleted, nil, "")
	if deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, [][]byte{completed}); err != nil {
		return bounds, nil, err
	} else if deny >= 0 {
		return bounds, nil, host.ErrNoPerm
	}
	return bounds, completed, nil
}

// trimJobs trims the done jobs of completed and the deadN of dead listed
// in st.names: their keys' ACL, their unique keys, the counter, then the
// writes.
func (st *flowVerbState) trimJobs(r *verbCall, completed []byte, done, deadN int) error {
	c, stats := r.c, r.keys[3]
	// the jobs' keys (of the members that are ids): the caller's ACL (read
	// and delete)
	st.keys = st.keys[:0]
	at := make([]int, len(st.names)) // each member's first key, -1: not an id
	for i, id := range st.names {
		at[i] = -1
		if !grammar.ID(id) {
			continue
		}
		at[i] = len(st.keys)
		st.keys = append(st.keys, st.derived(r.base, protocol.SuffixJob, id, ""),
			st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixLogs),
			st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixKids),
			st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixResults),
			st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixFailures))
	}
	if len(st.keys) > 0 && c.CheckKeys(host.KeyRead|host.KeyDelete, st.keys...) != nil {
		return host.ErrNoPerm
	}
	if err := st.trimUniques(r, at); err != nil {
		return err
	}
	var trimmed int64
	if deadN > 0 {
		cnt := fieldAt(c.Read().Cmd(host.HGET).Arg(stats).Str(statTrimmed).RunAll(), 0)
		if cnt.Err != nil {
			return cnt.Err
		}
		var err error
		if trimmed, err = grammar.PredictHincrby(cnt.Val.Bytes, cnt.Val.Set, int64(deadN)); err != nil {
			return err
		}
	}
	return st.trimWrites(r, completed, done, deadN, at, trimmed)
}

// trimUniques reads, per id (at[i] its first key, -1: not an id), HMGET
// row uniq, then its unique key: ACL, GET; st.uniques[i] is the key when
// it holds the job.
func (st *flowVerbState) trimUniques(r *verbCall, at []int) error {
	c := r.c
	st.uniques = grow(st.uniques, len(st.names))
	for i, id := range st.names {
		st.uniques[i] = nil
		if at[i] < 0 {
			continue
		}
		var u [1]verdict.Field
		if err := fieldsAt(c.Read().Cmd(host.HMGET).Arg(st.keys[at[i]]).Str(protocol.FieldUnique).RunAll(), 0, u[:]); err != nil {
			return err
		}
		if !u[0].Set {
			continue
		}
		key := st.derived(r.base, protocol.SuffixUnique, u[0].Bytes, "")
		if c.CheckKeys(host.KeyRead|host.KeyDelete, key) != nil {
			return host.ErrNoPerm
		}
		h := fieldAt(c.Read().Cmd(host.GET).Arg(key).RunAll(), 0)
		if h.Err != nil {
			return h.Err
		}
		if h.Val.Is(string(id)) {
			st.uniques[i] = key
		}
	}
	return nil
}

// trimWrites is TRIM's writes: the guard, then ZREM completed and ZREM dead
// of the ids trimmed, one DEL of their keys and the unique keys they hold,
// HINCRBY stats trimmed (predicted: trimmed) with dead jobs trimmed.
func (st *flowVerbState) trimWrites(r *verbCall, completed []byte, done, deadN int, at []int, trimmed int64) error {
	c, stats := r.c, r.keys[3]
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	wb := w.Write()
	if done > 0 {
		wb.Cmd("ZREM").Arg(completed)
		for _, id := range st.names[:done] {
			wb.Arg(id)
		}
	}
	if deadN > 0 {
		wb.Cmd("ZREM").Arg(r.keys[4])
		for _, id := range st.names[done:] {
			wb.Arg(id)
		}
	}
	if len(st.keys) > 0 {
		wb.Cmd("DEL")
		for i := range st.names {
			if at[i] < 0 {
				continue
			}
			for _, k := range st.keys[at[i] : at[i]+5] {
				wb.Arg(k)
			}
			if st.uniques[i] != nil {
				wb.Arg(st.uniques[i])
			}
		}
	}
	if deadN > 0 {
		wb.Cmd("HINCRBY").Arg(stats).Str(statTrimmed).Int(int64(deadN))
	}
	res, err := wb.Run()
	if err != nil {
		return wrote(c, err)
	}
	if deadN > 0 {
		return predicted(c, res, res.Len()-1, trimmed)
	}
	return nil
}

// pastBounds appends to st.names, at most room of them, the ids of set past
// its age bound (score before now − age, when age > 0) and then past its
// count bound (the oldest beyond keep, when keep > 0), each id once. It
// returns how many it appended.
func (st *flowVerbState) pastBounds(r *verbCall, set []byte, age, keep, room int64) (int, error) {
	start := len(st.names)
	if room <= 0 {
		return 0, nil
	}
	if age > 0 {
		res := r.c.Read().Cmd(host.ZRANGEBYSCORE).Arg(set).Str("-inf").Arg(st.below(r.now - age)).
			Str("LIMIT").Str("0").Int(room).RunAll()
		l := listAt(res, 0, &st.scratch, nil)
		if l.Err != nil {
			return 0, l.Err
		}
		st.names = append(st.names, l.Val...)
	}
	taken := int64(len(st.names) - start)
	if keep > 0 && taken < room {
		n := intAt(r.c.Read().Cmd(host.ZCARD).Arg(set).RunAll(), 0)
		if n.Err != nil {
			return 0, n.Err
		}
		// the oldest first: those the age bound took are the head of the set
		if excess := min(n.Val-keep, room); excess > taken {
			l := listAt(r.c.Read().Cmd(host.ZRANGE).Arg(set).Int(taken).Int(excess-1).RunAll(), 0, &st.scratch, nil)
			if l.Err != nil {
				return 0, l.Err
			}
			st.names = append(st.names, l.Val...)
		}
	}
	return len(st.names) - start, nil
}
