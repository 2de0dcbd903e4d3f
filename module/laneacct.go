package main

import (
	"slices"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// laneAcct is one call's lane accounting (docs/PROTOCOL.md, "Lane
// accounting"; verdict.LaneAccount): the lanes of the call, each once in the
// order the verb first met them with its changes, their reads and the
// writes. Every verb that changes a lane's waiting or active count runs it
// the same way:
//
//	la.add(&st.scratch, lane, dw, da) // per job, in the verb's order
//	err := la.read(&r)                // after the verb's domain reads
//	…                                 // the verb's writes
//	la.writes(b)                      // then the lanes', merged per key
//
// A call without a lane reads and writes nothing of the lanes.
type laneAcct struct {
	s *scratch
	// names are the lanes (scratch copies), keys their lane:<l>.
	names, keys [][]byte
	// index finds a lane among many (indexed: filled, once more than
	// laneIndexScan lanes; kept from one call to the next).
	index   map[string]int
	indexed bool
	seen    verdict.LaneSeen
	v       verdict.LaneVerdict
	// effects is the verdict's memory.
	effects []verdict.LaneEffect
	// acl is the keys of the ACL check; laneinfo … signal the fixed keys.
	acl                                  [][]byte
	laneinfo, lanes, turns, meta, signal []byte
}

// laneIndexScan is how many lanes a call holds before add uses a map.
const laneIndexScan = 16

// reset empties the accounting for a new call whose scratch is s.
func (la *laneAcct) reset(s *scratch) {
	la.s = s
	la.names, la.keys = la.names[:0], la.keys[:0]
	if la.indexed {
		clear(la.index)
		la.indexed = false
	}
	la.seen = verdict.LaneSeen{Lanes: la.seen.Lanes[:0]}
	la.v = verdict.LaneVerdict{}
}

// len is the number of lanes of the call.
func (la *laneAcct) len() int { return len(la.names) }

// add counts dw waiting and da active jobs of lane name (valid: 1..128
// bytes) and returns the lane's index in the call; a lane verb sets the
// lane's settings after the call in its change (la.change).
func (la *laneAcct) add(base, name []byte, dw, da int64) int {
	i := la.find(name)
	if i < 0 {
		i = len(la.names)
		name = la.s.copy(name)
		la.names = append(la.names, name)
		la.keys = append(la.keys, la.s.derived(base, protocol.SuffixLane, name, ""))
		la.seen.Lanes = append(la.seen.Lanes, verdict.LaneChange{})
		if la.indexed {
			la.index[string(name)] = i
		} else if len(la.names) > laneIndexScan {
			if la.index == nil {
				la.index = make(map[string]int, 2*laneIndexScan)
			}
			for k, n := range la.names {
				la.index[string(n)] = k
			}
			la.indexed = true
		}
	}
	l := &la.seen.Lanes[i]
	l.DW += dw
	l.DA += da
	return i
}

// change is lane i's change.
func (la *laneAcct) change(i int) *verdict.LaneChange { return &la.seen.Lanes[i] }

// find is the index of lane name, or -1.
func (la *laneAcct) find(name []byte) int {
	if la.indexed {
		if i, ok := la.index[string(name)]; ok {
			return i
		}
		return -1
	}
	for i, n := range la.names {
		if string(n) == string(name) {
			return i
		}
	}
	return -1
}

// read runs the accounting's reads and its verdict: the caller's ACL on
// laneinfo, lanes, turns, meta, signal and each lane:<l> (read and write),
// then in one batch per lane HMGET laneinfo active:<l> cap:<l> paused:<l>
// and ZCARD lane:<l>, HMGET meta turn lanewait, ZCARD turns, ZCARD lanes,
// LLEN signal. It returns the accounting's refusal (NOPERM, WRONGTYPE),
// which the verb takes in its place, or a host failure as the second value.
func (la *laneAcct) read(r *verbCall) (refusal, err error) {
	if len(la.names) == 0 {
		return nil, nil
	}
	s := la.s
	la.laneinfo = s.derived(r.base, protocol.SuffixLaneInfo, nil, "")
	la.lanes = s.derived(r.base, protocol.SuffixLanes, nil, "")
	la.turns = s.derived(r.base, protocol.SuffixTurns, nil, "")
	la.meta = s.derived(r.base, protocol.SuffixMeta, nil, "")
	la.signal = s.derived(r.base, protocol.SuffixSignal, nil, "")
	la.acl = append(la.acl[:0], la.laneinfo, la.lanes, la.turns, la.meta, la.signal)
	la.acl = append(la.acl, la.keys...)
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, la.acl)
	if err != nil {
		return nil, err
	}
	if deny >= 0 {
		la.seen.Denied = true
	} else {
		b := r.c.Read()
		for i, name := range la.names {
			b.Cmd(host.HMGET).Arg(la.laneinfo).
				Arg(la.field(protocol.FieldLaneActive, name)).
				Arg(la.field(protocol.FieldLaneCap, name)).
				Arg(la.field(protocol.FieldLanePaused, name)).
				Cmd(host.ZCARD).Arg(la.keys[i])
		}
		res := b.Cmd(host.HMGET).Arg(la.meta).Str(protocol.MetaTurn).Str(protocol.MetaLaneWait).
			Cmd(host.ZCARD).Arg(la.turns).
			Cmd(host.ZCARD).Arg(la.lanes).
			Cmd(host.LLEN).Arg(la.signal).
			RunAll()
		for i := range la.names {
			l := &la.seen.Lanes[i]
			l.Info = verdict.Reply[[3]verdict.Field]{Made: true}
			l.Info.Err = fieldsAt(res, 2*i, l.Info.Val[:])
			l.Waiting = intAt(res, 2*i+1)
		}
		n := 2 * len(la.names)
		la.seen.Meta = verdict.Reply[[2]verdict.Field]{Made: true}
		la.seen.Meta.Err = fieldsAt(res, n, la.seen.Meta.Val[:])
		la.seen.Turns, la.seen.Registry, la.seen.Signal = intAt(res, n+1), intAt(res, n+2), intAt(res, n+3)
	}
	// the verdict now, while the replies are readable
	la.v, refusal = verdict.LaneAccount(&la.seen, la.effects)
	la.effects = la.v.Effects[:0]
	return refusal, nil
}

// readReply runs read and gives its outcome as a verb's verdict takes it.
func (la *laneAcct) readReply(r *verbCall) (verdict.Reply[struct{}], error) {
	refusal, err := la.read(r)
	if err != nil {
		return verdict.Reply[struct{}]{}, err
	}
	return verdict.Reply[struct{}]{Made: true, Err: refusal}, nil
}

// field appends a laneinfo field name, prefix then the lane, to the scratch.
func (la *laneAcct) field(prefix string, lane []byte) []byte {
	return la.s.derived(nil, prefix, lane, "")
}

// wakes reports whether the accounting ends the call with signal-push.
func (la *laneAcct) wakes() bool { return len(la.names) > 0 && la.v.Signal }

// writes adds the accounting's writes, merged per key: one HDEL laneinfo of
// the active counts that went to 0 and one HSET of the others, one ZREM and
// one ZADD of lanes, one ZREM and one ZADD of turns, then HSET meta lanewait
// when it changed. A removal goes before an addition to the same key: the
// members and fields are distinct, so the end state is the Lua's lane by
// lane writes'.
func (la *laneAcct) writes(b *host.Batch) {
	if len(la.names) == 0 {
		return
	}
	name := func(i int) { b.Arg(la.names[i]) }
	active := func(i int) { b.Arg(la.field(protocol.FieldLaneActive, la.names[i])) }
	la.merged(b, "HDEL", la.laneinfo, func(e *verdict.LaneEffect) bool { return e.DelActive }, active)
	la.merged(b, "HSET", la.laneinfo, func(e *verdict.LaneEffect) bool { return e.SetActive }, func(i int) {
		active(i)
		b.Int(la.v.Effects[i].After.Active)
	})
	la.merged(b, "ZREM", la.lanes, func(e *verdict.LaneEffect) bool { return e.Unregister }, name)
	la.merged(b, "ZADD", la.lanes, func(e *verdict.LaneEffect) bool { return e.Register }, func(i int) {
		b.Str("0")
		name(i)
	})
	la.merged(b, "ZREM", la.turns, func(e *verdict.LaneEffect) bool { return e.Leave }, name)
	la.merged(b, "ZADD", la.turns, func(e *verdict.LaneEffect) bool { return e.Enter }, func(i int) {
		b.Int(la.v.Turn)
		name(i)
	})
	if la.v.SetWait {
		b.Cmd("HSET").Arg(la.meta).Str(protocol.MetaLaneWait).Int(la.v.Wait)
	}
}

// merged adds one command cmd key with the arguments of every lane whose
// effect has the write (args adds lane i's), in lane order; none when no
// lane has it.
func (la *laneAcct) merged(b *host.Batch, cmd string, key []byte, has func(*verdict.LaneEffect) bool, args func(i int)) {
	first := true
	for i := range la.v.Effects {
		if !has(&la.v.Effects[i]) {
			continue
		}
		if first {
			b.Cmd(cmd).Arg(key)
			first = false
		}
		args(i)
	}
}

// signalLen is LLEN signal as the accounting read it.
func (la *laneAcct) signalLen() int64 { return la.v.SignalLen }

// zaddLanes adds one ZADD lane:<l> <score> <id> … per lane, in the order the
// lanes were first met, of the members whose move goes to their lane
// (laneOf[i] is member i's lane index, -1 for none); order is scratch. It
// returns the number of commands added.
func (la *laneAcct) zaddLanes(b *host.Batch, moves []verdict.Move, ids [][]byte, laneOf []int, order *[]int) int {
	o := (*order)[:0]
	for i, mv := range moves {
		if mv.To == verdict.ToLane && laneOf[i] >= 0 {
			o = append(o, i)
		}
	}
	slices.SortStableFunc(o, func(a, b int) int { return laneOf[a] - laneOf[b] })
	*order = o
	n := 0
	for k, i := range o {
		if k == 0 || laneOf[i] != laneOf[o[k-1]] {
			b.Cmd("ZADD").Arg(la.keys[laneOf[i]])
			n++
		}
		b.Int(moves[i].Score).Arg(ids[i])
	}
	return n
}

// addMoves counts the lanes of moved members in the accounting, in member
// order: each member with a lane counts da in its lane's active jobs, and
// dw more when its move goes to its lane. It fills laneOf (-1: no lane).
func (la *laneAcct) addMoves(base []byte, moves []verdict.Move, dw, da int64, laneOf []int) {
	for i, mv := range moves {
		laneOf[i] = -1
		if mv.Lane == nil {
			continue
		}
		w := int64(0)
		if mv.To == verdict.ToLane {
			w = dw
		}
		laneOf[i] = la.add(base, mv.Lane, w, da)
	}
}

// laneVerbState is the lane verbs' scratch between commands.
type laneVerbState struct {
	scratch
	lanes laneAcct
	// keys and names are LANES' lane sets and names.
	keys, names [][]byte
}

var laneVerbs pool[laneVerbState]

// laneSetting runs the reads every lane setting verb (LANECAP, LANEPAUSE,
// LANERESUME) shares: the fence, then the lane accounting of lane with no
// change to its counts; set gives the lane's settings after the call in its
// change. It returns the first refusal; st.lanes holds the accounting, read
// and decided.
func laneSetting(r *verbCall, st *laneVerbState, lane []byte, set func(*verdict.LaneChange)) error {
	if err := verdict.Fence(fieldAt(r.fenced().RunAll(), 0)); err != nil {
		return err
	}
	st.lanes.reset(&st.scratch)
	i := st.lanes.add(r.base, lane, 0, 0)
	set(st.lanes.change(i))
	refusal, err := st.lanes.read(r)
	if err != nil {
		return err
	}
	return refusal
}

// laneSets reads what a lane setting verb needs for meta lanesets after
// the lane accounting (which typed meta): HGET meta lanesets. It returns
// verdict.LaneSetsChange's decision for the lane's change; a reply that is
// not the expected one is a host failure.
func laneSets(r *verbCall, st *laneVerbState) (set bool, n int64, err error) {
	la := &st.lanes
	stored := fieldAt(r.c.Read().Cmd(host.HGET).Arg(la.meta).Str(protocol.MetaLaneSets).RunAll(), 0)
	if stored.Err != nil {
		return false, 0, stored.Err
	}
	e := &la.v.Effects[0]
	set, n = verdict.LaneSetsChange(stored.Val, e.Before.LaneSettings, e.After.LaneSettings)
	return set, n, nil
}

// laneSettingWrites writes a lane setting verb's field (HSET field value, or
// HDEL field, when not empty), then HSET meta lanesets <sets> when setSets,
// then the lane accounting's writes and its signal. With nothing to write it
// passes no guard.
func laneSettingWrites(r *verbCall, st *laneVerbState, hset, hdel []byte, value string, setSets bool, sets int64) error {
	la := &st.lanes
	if hset == nil && hdel == nil && !setSets && !la.v.Any && !la.wakes() {
		return nil
	}
	w, err := r.c.BeginWrites()
	if err != nil {
		return err
	}
	b := w.Write()
	switch {
	case hset != nil:
		b.Cmd("HSET").Arg(la.laneinfo).Arg(hset).Str(value)
	case hdel != nil:
		b.Cmd("HDEL").Arg(la.laneinfo).Arg(hdel)
	}
	if setSets {
		b.Cmd("HSET").Arg(la.meta).Str(protocol.MetaLaneSets).Int(sets)
	}
	la.writes(b)
	if la.wakes() {
		signalPush(b, la.signal, la.signalLen())
	}
	if _, err := b.Run(); err != nil {
		return wrote(r.c, err)
	}
	return nil
}
