package main

import (
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
	"github.com/trafikey/trafikey/protocol"
)

// remove is EMQ.REMOVE (lua/remove.lua): delete a job no worker holds, with
// its logs and its unique key. Crossings: the command, the ACL check of the
// row and its logs, one read batch (the fence and the row); for a job to
// remove, the unique key's ACL check when it has one, one read batch (its
// holder, the counter, the state's set), the guard and one write batch.
func remove(c *host.Call) error {
	// shape and layout: numkeys 7 (base version stats pending delayed active
	// dead), ARGV id
	r, err := prelude(c, protocol.Remove, exactly(1))
	if err != nil {
		return err
	}
	stats := r.keys[2]
	sets := [...][]byte{verdict.InPending: r.keys[3], verdict.InDelayed: r.keys[4], verdict.InDead: r.keys[6]}
	// values: the id
	id := r.args[0]
	if !grammar.ID(id) {
		return grammar.Refusal(protocol.ErrBadArg(protocol.Remove.Name, "id"))
	}
	st := removes.get()
	defer removes.put(st)
	st.reset()
	st.lanes.reset(&st.scratch)
	row := st.derived(r.base, protocol.SuffixJob, id, "")
	logs := st.derived(r.base, protocol.SuffixJob, id, protocol.SuffixLogs)
	// the row and its logs are outside the key-spec: the caller's ACL first,
	// the row read then deleted, the logs deleted. A denied row is the row
	// read's refusal, in its place after the fence; denied logs are refused
	// where the writes would start.
	s := &st.seen
	*s = verdict.RemoveSeen{}
	rowOK, logsErr, err := rowAndLogsACL(&r, row, logs, host.KeyRead|host.KeyDelete, host.KeyDelete)
	if err != nil {
		return err
	}
	// fence and domain reads, driven by the verdict
	var holderKey []byte
	var set verdict.StateSet
	step := verdict.Remove(id, s)
	for ran := verdict.RemoveNone; step.Need != verdict.RemoveNone && step.Need != ran; step = verdict.Remove(id, s) {
		ran = step.Need
		switch step.Need {
		case verdict.RemoveFirst:
			// GET version, HMGET row att state uniq (which types the row)
			b := r.fenced()
			if rowOK {
				b.Cmd("HMGET").Arg(row).Str(protocol.FieldAttempts).Str(protocol.FieldState).Str(protocol.FieldUnique).Str(protocol.FieldLane)
			}
			res := b.RunAll()
			s.Version = st.keep(fieldAt(res, 0))
			if rowOK {
				f := st.fields[:]
				err := fieldsAt(res, 1, f)
				for i := range f {
					f[i].Bytes = st.copy(f[i].Bytes)
				}
				s.Row = verdict.Reply[[]verdict.Field]{Made: true, Val: f, Err: err}
			} else {
				s.Row = denied[[]verdict.Field]()
			}
		case verdict.RemoveRest:
			// GET unique:<uniq> when the row has one (after its ACL check:
			// read, then deleted), HGET stats removed (its type and the
			// counter HINCRBY predicts), ZCARD of the state's set (its type)
			set = step.Set
			b := c.Read()
			uniqueOK := false
			if step.Unique != nil {
				holderKey = st.derived(r.base, protocol.SuffixUnique, step.Unique, "")
				deny, err := r.firstDenied(host.KeyRead|host.KeyDelete, [][]byte{holderKey})
				if err != nil {
					return err
				}
				if uniqueOK = deny < 0; uniqueOK {
					b.Cmd("GET").Arg(holderKey)
				} else {
					s.Holder = denied[verdict.Field]()
				}
			}
			b.Cmd("HGET").Arg(stats).Str(statRemoved)
			typed := set != verdict.NoSet && step.Lane == nil // a laned job's lane:<l> is the accounting's
			if typed {
				b.Cmd("ZCARD").Arg(sets[set])
			}
			res := b.RunAll()
			i := 0
			if uniqueOK {
				s.Holder, i = st.keep(fieldAt(res, 0)), 1
			}
			s.Removed = st.keep(fieldAt(res, i))
			if typed {
				s.Set = intAt(res, i+1)
			}
		case verdict.RemoveLanes:
			// the pending job's lane: one waiting job less
			st.lanes.add(r.base, step.Lane, -1, 0)
			refusal, err := st.lanes.read(&r)
			if err != nil {
				return err
			}
			s.Lanes = st.lanes.result(refusal)
		}
	}
	if step.Err != nil || step.Need != verdict.RemoveNone {
		return orInternal(step.Err)
	}
	v := step.Verdict
	if v.Gone {
		c.ReplyInt(0)
		return nil
	}
	if logsErr != nil {
		return logsErr
	}
	// guard, then the writes: ZREM from the state's set; one DEL of the row,
	// its logs and the unique key when it holds this job (the Lua's two
	// DELs); HINCRBY stats removed (predicted)
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write()
	switch {
	case v.Lane != nil:
		b.Cmd("ZREM").Arg(st.lanes.keys[0]).Arg(id)
	case v.Set != verdict.NoSet:
		b.Cmd("ZREM").Arg(sets[v.Set]).Arg(id)
	}
	b.Cmd("DEL").Arg(row).Arg(logs)
	if v.Unique {
		b.Arg(holderKey)
	}
	b.Cmd("HINCRBY").Arg(stats).Str(statRemoved).Int(1)
	counter := 2 // its index in the batch
	if v.Set == verdict.NoSet && v.Lane == nil {
		counter = 1
	}
	st.lanes.writes(b)
	if st.lanes.wakes() {
		signalPush(b, st.lanes.signal, st.lanes.signalLen())
	}
	res, err := b.Run()
	if err != nil {
		return wrote(c, err)
	}
	if err := predicted(c, res, counter, v.Removed); err != nil {
		return err
	}
	c.ReplyInt(1)
	return nil
}

// rowAndLogsACL checks a job's row and its logs against the caller's ACL,
// each with its own access: one check with both accesses, and only when it
// is refused, one check per key. rowOK is false when the row is denied (its
// read is then the refusal, and it is not read); logsErr is ErrNoPerm when
// the logs are denied.
func rowAndLogsACL(r *verbCall, row, logs []byte, rowAccess, logsAccess host.KeyAccess) (rowOK bool, logsErr, err error) {
	if err := r.c.CheckKeys(rowAccess|logsAccess, row, logs); err == nil {
		return true, nil, nil
	} else if err = checkErr(err); err != nil {
		return false, nil, err
	}
	if err := r.c.CheckKeys(rowAccess, row); err != nil {
		if err = checkErr(err); err != nil {
			return false, nil, err
		}
		return false, nil, nil
	}
	if err := r.c.CheckKeys(logsAccess, logs); err != nil {
		if err = checkErr(err); err != nil {
			return false, nil, err
		}
		return true, host.ErrNoPerm, nil
	}
	return true, nil, nil // allowed one by one: the rules changed between the checks
}

// removeState is REMOVE's scratch between commands.
type removeState struct {
	scratch
	seen   verdict.RemoveSeen
	fields [4]verdict.Field
	lanes  laneAcct
}

var removes pool[removeState]
