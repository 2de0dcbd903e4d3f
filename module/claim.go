package main

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// claim is EMQ.CLAIM (internal/lua/claim.lua): lease up to count ready jobs, highest
// priority first, giving the lanes and the jobs without a lane turns.
// Crossings without lanes or a rate: the command, the ACL check of turns,
// one read batch (the fence, meta, the head of pending, active's and turns'
// sizes), the rows' ACL check, one read batch of the rows, the guard, one
// write batch. A rate adds its ACL check and one batch; ready lanes add
// the read of turns and the lanes (an ACL check and two batches).
func claim(c *host.Call) error {
	// shape and layout: numkeys 5 (base version meta pending active), ARGV
	// lease count [ext [block]]
	r, err := prelude(c, protocol.Claim, optional(2, 2))
	if err != nil {
		return err
	}
	a, err := claimArgsOf(r.args)
	if err != nil {
		return err
	}
	st := claims.get()
	defer claims.put(st)
	st.start(&r)
	// fence and domain reads, driven by the verdict: a read is asked for
	// once, but the lanes' (the verdict bounds those)
	s := &st.seen
	step, err := driveAgain(func() verdict.ClaimStep { return verdict.Claim(a.count, s) },
		func(step verdict.ClaimStep) error { return st.read(&r, a, step) }, verdict.ClaimHeads)
	if err != nil {
		return err
	}
	v := step.Verdict
	if v.Empty {
		// nothing to return and nothing written: with a block time, and
		// where the client may block, wait on pending for a verb that
		// makes a job claimable (SignalReady), then run again
		// (a rerun is a blocked client's: it stays blocked)
		if a.block > 0 && (c.Rerun() || verdict.ClaimBlocks(0, a.block, verdict.BlockPlace(c.Place()))) {
			c.BlockOnKey(r.keys[3], a.block)
			return nil
		}
		c.ReplyArray(0)
		return nil
	}
	if err := st.reply(c, a.ext, v); err != nil {
		return err
	}
	return st.write(&r, a.lease, v)
}

// claimArgs are CLAIM's values.
type claimArgs struct {
	lease, count int64
	// ext asks for the extended rows (ext 1), waits for them with each
	// job's wait too (ext 2)
	ext, waits bool
	block      int64
}

// claimArgsOf checks CLAIM's values: the lease, the count, then ext and the
// block time.
func claimArgsOf(args [][]byte) (claimArgs, error) {
	var a claimArgs
	var ok bool
	if a.lease, ok = grammar.Decimal(args[0], 1, protocol.MaxLeaseMS); !ok {
		return a, grammar.Refusal(protocol.ErrBadArg(protocol.Claim.Name, "lease"))
	}
	if a.count, ok = grammar.Decimal(args[1], 1, protocol.MaxCount); !ok {
		return a, grammar.Refusal(protocol.ErrBadArg(protocol.Claim.Name, "count"))
	}
	if len(args) >= 3 {
		switch string(args[2]) {
		case "0":
		case protocol.ClaimExtended:
			a.ext = true
		case protocol.ClaimWaits:
			a.ext, a.waits = true, true
		default:
			return a, grammar.Refusal(protocol.ErrBadArg(protocol.Claim.Name, "ext"))
		}
	}
	if a.block, ok = verdict.ClaimBlockMS(args); !ok {
		return a, grammar.Refusal(protocol.ErrBadArg(protocol.Claim.Name, "block"))
	}
	return a, nil
}

// start readies the state for a call.
func (st *claimState) start(r *verbCall) {
	st.reset()
	st.more, st.ev, st.waits = 0, false, false
	s := &st.seen
	*s = verdict.ClaimSeen{
		Pending: verdict.Reply[[][]byte]{Val: s.Pending.Val[:0]}, Rows: s.Rows[:0], Jobs: s.Jobs[:0],
		Ready: verdict.Reply[[]verdict.ClaimLane]{Val: s.Ready.Val[:0]}, Members: s.Members[:0], From: s.From[:0],
		Order: s.Order[:0], Parts: s.Parts[:0], Live: s.Live[:0], Who: s.Who[:0], Next: s.Next[:0], Scores: s.Scores[:0],
		Exact: s.Exact[:0], Dups: s.Dups[:0],
	}
	st.laneKeys = st.laneKeys[:0]
	st.turns = st.derived(r.base, protocol.SuffixTurns, nil, "")
	st.rowsRead = host.Results{}
}

// read performs the read step needs (drive).
func (st *claimState) read(r *verbCall, a claimArgs, step verdict.ClaimStep) error {
	s := &st.seen
	var err error
	switch step.Need {
	case verdict.ClaimFirst:
		return st.readFirst(r, a)
	case verdict.ClaimTurnsSize:
		// the caller's ACL on turns and on the rows of pending's head,
		// then ZCARD turns and HMGET row att data of each: the rows are
		// the claim's when turns is empty
		s.Members = append(s.Members[:0], s.Pending.Val...)
		st.rowsRead, err = st.readRows(r, false, st.turns)
	case verdict.ClaimRate:
		return st.readRate(r, step.Verdict.RateWindow)
	case verdict.ClaimTurns:
		return st.readTurns(r, st.turns, step.Verdict.Count)
	case verdict.ClaimHeads:
		st.readHeads(r)
	case verdict.ClaimRows:
		// the rows are outside the key-spec: the caller's ACL first, then
		// HMGET row att data for each member that is an id, up to the
		// first row denied
		st.rowsRead, err = st.readRows(r, step.Verdict.Lanes, nil)
	}
	return err
}

// readFirst is the first batch: the caller's ACL on turns, then GET
// version, HMGET meta paused rate_max rate_window turn pturn lanewait,
// ZRANGE pending 0 count-1, ZCARD active, ZCARD turns: the verdict takes
// them in this order. A claim of one job leaves turns to ClaimTurnsSize,
// whose ACL check and read join the row's.
func (st *claimState) readFirst(r *verbCall, a claimArgs) error {
	s := &st.seen
	later := a.count <= speculate
	deny := -1
	if !later {
		var err error
		if deny, err = r.firstDenied(host.KeyRead|host.KeyUpdate, [][]byte{st.turns}); err != nil {
			return err
		}
	}
	b := r.fenced().Cmd(host.HMGET).Arg(r.keys[2])
	for _, f := range verdict.ClaimMetaFields {
		b.Str(f)
	}
	b.Cmd(host.ZRANGE).Arg(r.keys[3]).Str("0").Int(a.count - 1).
		Cmd(host.ZCARD).Arg(r.keys[4])
	if !later && deny < 0 {
		b.Cmd(host.ZCARD).Arg(st.turns)
	}
	res := b.RunAll()
	s.Version = st.keep(fieldAt(res, 0))
	s.Meta = verdict.Reply[[len(verdict.ClaimMetaFields)]verdict.Field]{Made: true}
	s.Meta.Err = fieldsAt(res, 1, s.Meta.Val[:])
	for i := range s.Meta.Val {
		s.Meta.Val[i].Bytes = st.copy(s.Meta.Val[i].Bytes)
	}
	// the row fields after att data ev: with ext max, and kind
	// timeout headers once the queue has a job storing them
	st.more = verdict.ClaimRowFields(a.ext, s.Meta.Val[verdict.ClaimMetaJobFields])
	st.waits = a.waits
	// ev, unless meta rowopts says no row of the queue has one
	st.ev = !verdict.RowFlagOff(s.Meta.Val[verdict.ClaimMetaRowOpts])
	s.Active = intAt(res, 3)
	s.Pending.Made = true
	s.Pending.Err = st.members(res)
	switch {
	case later:
	case deny < 0:
		s.Turns = intAt(res, 4)
	default:
		s.Turns = denied[int64]()
	}
	return nil
}

// readRate is the caller's ACL on rate, then, at the call's clock now, the
// first live entry of the rate log of a window of window ms (ZRANGEBYSCORE
// rate (<now-window> +inf WITHSCORES LIMIT 0 1) and its last (ZRANGE rate -1
// -1 WITHSCORES), in one batch.
func (st *claimState) readRate(r *verbCall, window int64) error {
	s := &st.seen
	key := st.derived(r.base, protocol.SuffixRate, nil, "")
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, [][]byte{key})
	if err != nil {
		return err
	}
	if deny >= 0 {
		s.Rate = denied[verdict.RateLog]()
		return nil
	}
	res := r.c.Read().Cmd(host.ZRANGEBYSCORE).Arg(key).Arg(st.below(r.now - window)).Str("+inf").Str("WITHSCORES").Str("LIMIT").Str("0").Str("1").
		Cmd(host.ZRANGE).Arg(key).Str("-1").Str("-1").Str("WITHSCORES").RunAll()
	log := verdict.RateLog{Now: r.now}
	for i, e := range []*verdict.RateEntry{&log.First, &log.Last} {
		v, err := res.At(i)
		if err == nil && (v.Kind() != host.KindArray || (v.Len() != 0 && v.Len() != 2)) {
			err = host.ErrHostReply
		}
		if err == nil && v.Len() == 2 {
			err = st.rateEntry(v, e)
		}
		if err != nil {
			s.Rate = verdict.Failed[verdict.RateLog](err)
			return nil
		}
		if i == 0 && v.Len() == 0 {
			break // no entry is live
		}
		log.Live = true
	}
	s.Rate = verdict.Got(log)
	return nil
}

// rateEntry reads a rate log entry, [member, score], into e (the member
// copied into the scratch).
func (st *claimState) rateEntry(v host.Value, e *verdict.RateEntry) error {
	var err error
	v.Elems(func(i int, x host.Value) bool {
		var b []byte
		if b, err = x.Bytes(); err != nil {
			return false
		}
		if i == 0 {
			e.Member = st.member(b)
			return true
		}
		if e.Score, err = strconv.ParseFloat(string(b), 64); err != nil {
			err = host.ErrHostReply
		}
		return false
	})
	return err
}

// reply writes the reply, [id, data, attempt] per job, now, while the rows'
// replies are readable: the write batch reuses their memory. A refusal
// after it replaces it. It gathers the jobs' claimed events.
func (st *claimState) reply(c *host.Call, ext bool, v verdict.ClaimVerdict) error {
	s := &st.seen
	c.ReplyArray(len(v.Jobs))
	st.events.reset()
	for _, j := range v.Jobs {
		if ext {
			if st.waits {
				c.ReplyArray(protocol.ClaimWaitsReply)
			} else {
				c.ReplyArray(protocol.ClaimExtendedReply)
			}
		} else {
			c.ReplyArray(3)
		}
		c.ReplyBulk(s.Members[j.Member])
		data, err := st.rowsRead.At(st.rowAt[j.Member])
		if err != nil {
			return err
		}
		if err := replyOptBulk(c, data.Index(1)); err != nil {
			return err
		}
		c.ReplyInt(j.Attempt)
		if ext {
			// max kind timeout headers, after att data [ev]
			if err := replyExtended(c, data, st.extAt(), st.more); err != nil {
				return err
			}
			// the lane the job was taken from: its turn's participant
			if j.Member < len(s.From) && s.From[j.Member] >= 0 {
				c.ReplyBulk(s.Ready.Val[s.From[j.Member]].Name)
			} else {
				c.ReplyNull()
			}
		}
		if st.waits {
			// how long it waited since its add, when its row says
			var f [len(claimWait)]verdict.Field
			at := st.extAt() + st.more
			for i := range f {
				if f[i].Bytes, f[i].Set, err = data.Index(at + i).OptBytes(); err != nil {
					return err
				}
			}
			if wait, ok := verdict.ClaimWait(f[0], f[1], c.NowMillis()); ok {
				c.ReplyInt(wait)
			} else {
				c.ReplyNull()
			}
		}
		// the job's claimed event, when its row holds ev (read unless meta
		// rowopts is 0)
		if st.ev {
			st.claimedEvent(data, j)
		}
	}
	return nil
}

// claimedEvent adds job j's claimed event when its row, data, holds ev,
// with the job's kind: the row read's, when it lists kind (ext, meta
// jobfields 1); else read from the row (jobfields 1), or none (no job of
// the queue stored one).
func (st *claimState) claimedEvent(data host.Value, j verdict.ClaimJob) {
	if ev, set, err := data.Index(2).OptBytes(); err == nil && set {
		if f := (verdict.Field{Bytes: ev, Set: true}); evOn(f) {
			var att [20]byte
			id, value := st.seen.Members[j.Member], strconv.AppendInt(att[:0], j.Attempt, 10)
			switch {
			case st.more == len(protocol.ClaimExtendedFields):
				var kind verdict.Field
				kind.Bytes, kind.Set, _ = data.Index(st.extAt() + 1).OptBytes()
				st.events.addKind(f, protocol.EventClaimed, id, protocol.EventAttField, value, kind)
			case st.seen.Meta.Val[verdict.ClaimMetaJobFields].Is(protocol.JobFieldsOn):
				st.events.add(f, protocol.EventClaimed, id, protocol.EventAttField, value)
			default:
				st.events.addKind(f, protocol.EventClaimed, id, protocol.EventAttField, value, verdict.Field{})
			}
		}
	}
}

// write is CLAIM's writes: the guard, then ZPOPMIN of each set taken from
// (pending <found>, or with lanes pending and each lane served that keeps
// jobs, then one DEL of the lanes drained); per job HSET row state active
// att <att+1> (the attempt predicted, as HINCRBY row att 1 would store it:
// both fields are updated where they stand, so the row keeps its field
// order); one ZADD active <deadline> <id> … for all the jobs (the absolute
// deadline, as a value); with lanes the lanes' writes and meta's turns; the
// rate log's entry.
func (st *claimState) write(r *verbCall, lease int64, v verdict.ClaimVerdict) error {
	c, s := r.c, &st.seen
	if err := st.events.check(r); err != nil {
		return err
	}
	w, err := c.BeginWrites()
	if err != nil {
		return err
	}
	// the jobs' events first, in the same batch
	b := w.Write()
	p := st.events.prepend(b)
	drained := st.writePops(b, r.keys[3], v)
	for _, j := range v.Jobs {
		b.Cmd("HSET").Arg(st.rows[j.Member]).
			Str(protocol.FieldState).Str(protocol.StateActive).
			Str(protocol.FieldAttempts).Int(j.Attempt)
	}
	if len(v.Jobs) > 0 {
		deadline := r.now + lease
		b.Cmd("ZADD").Arg(r.keys[4])
		for _, j := range v.Jobs {
			b.Int(deadline).Arg(s.Members[j.Member])
		}
	}
	if v.Lanes {
		st.laneWrites(b, r, st.turns, r.keys[2], v)
	}
	if v.Rate && len(v.Jobs) > 0 {
		key := st.derived(r.base, protocol.SuffixRate, nil, "")
		b.Cmd("ZREMRANGEBYSCORE").Arg(key).Str("-inf").Int(v.RateNow - v.RateWindow)
		var member [40]byte // copied by Arg
		b.Cmd("ZADD").Arg(key).Int(v.RateAt).Arg(verdict.AppendRateMember(member[:0], v.RateNext, int64(len(v.Jobs))))
		b.Cmd("PEXPIREAT").Arg(key).Int(v.RateAt + v.RateWindow)
	}
	res, err := b.Run()
	if err != nil {
		return failed(c, p, res, err)
	}
	return st.checkPops(c, res, p, v, drained)
}

// writePops adds the pops: ZPOPMIN pending <found>, ZPOPMIN of each lane
// served that keeps jobs, then one DEL of the lanes drained, whose number
// it returns.
func (st *claimState) writePops(b *host.Batch, pending []byte, v verdict.ClaimVerdict) int {
	if v.PendingTaken > 0 {
		b.Cmd("ZPOPMIN").Arg(pending).Int(v.PendingTaken)
	}
	lanes := st.seen.Ready.Val
	drained := 0
	for i := range lanes {
		switch {
		case lanes[i].Drained:
			drained++
		case lanes[i].Taken > 0:
			b.Cmd("ZPOPMIN").Arg(st.laneKeys[i]).Int(lanes[i].Taken)
		}
	}
	if drained > 0 {
		// the lanes whose every job is taken, in one DEL
		b.Cmd("DEL")
		for i := range lanes {
			if lanes[i].Drained {
				b.Arg(st.laneKeys[i])
			}
		}
	}
	return drained
}

// checkPops checks that each pop, from the p-th reply of res on (after the
// XADDs), took the members read, in order, and the DEL every lane drained.
func (st *claimState) checkPops(c *host.Call, res host.Results, p int, v verdict.ClaimVerdict, drained int) error {
	s := &st.seen
	if v.PendingTaken > 0 {
		if !st.popped(res, p, s.Pending.Val[:v.PendingTaken]) {
			return popMismatch(c)
		}
		p++
	}
	lanes := s.Ready.Val
	for i := range lanes {
		if lanes[i].Taken > 0 && !lanes[i].Drained {
			if !st.popped(res, p, lanes[i].Heads.Val[:lanes[i].Taken]) {
				return popMismatch(c)
			}
			p++
		}
	}
	if drained > 0 {
		v, err := res.At(p)
		if err != nil {
			return popMismatch(c)
		}
		if n, err := v.Int(); err != nil || n != int64(drained) {
			return popMismatch(c)
		}
	}
	return nil
}

// popMismatch answers a ZPOPMIN that did not pop the members read.
func popMismatch(c *host.Call) error {
	host.Logf(host.LogWarning, "%s: ZPOPMIN did not pop the members read; answered %q", c.Name(), protocol.ErrHostReply)
	return host.ErrHostReply
}

// popped reports whether the i-th reply of the write batch, a ZPOPMIN, popped
// exactly members, in order.
func (st *claimState) popped(res host.Results, i int, members [][]byte) bool {
	v, err := res.At(i)
	if err != nil || v.Len() != 2*len(members) {
		return false
	}
	ok := true
	v.Elems(func(i int, e host.Value) bool {
		if i%2 == 0 {
			m, err := e.Bytes()
			ok = err == nil && string(m) == string(members[i/2])
		}
		return ok
	})
	return ok
}

// laneWrites adds CLAIM's lane writes, lane by lane in turns order merged
// per key: one HSET laneinfo of the active counts of the lanes that
// returned jobs, one ZREM lanes of the lanes left without a job, one ZREM
// turns of the lanes served that are no longer ready and of the stale ones,
// one ZADD turns <turn+j> of the lanes served still ready; then one HSET meta
// turn <turn+m> [pturn <turn+j>] [lanewait <W'>].
func (st *claimState) laneWrites(b *host.Batch, r *verbCall, turns, meta []byte, v verdict.ClaimVerdict) {
	s := &st.seen
	lanes := s.Ready.Val
	st.returned = grow(st.returned, len(lanes))
	for _, j := range v.Jobs {
		if f := s.From[j.Member]; f >= 0 {
			st.returned[f]++
		}
	}
	first := true
	for i := range lanes {
		if st.returned[i] == 0 {
			continue
		}
		if first {
			b.Cmd("HSET").Arg(st.derived(r.base, protocol.SuffixLaneInfo, nil, ""))
			first = false
		}
		b.Arg(st.field(protocol.FieldLaneActive, lanes[i].Name)).Int(lanes[i].State.Active + st.returned[i])
	}
	first = true
	for i := range lanes {
		l := &lanes[i]
		if l.Taken == 0 || l.State.Waiting-l.Taken != 0 || l.State.Active+st.returned[i] != 0 {
			continue
		}
		if first {
			b.Cmd("ZREM").Arg(st.derived(r.base, protocol.SuffixLanes, nil, ""))
			first = false
		}
		b.Arg(l.Name)
	}
	first = true
	for i := range lanes {
		l := &lanes[i]
		if !l.Stale && (l.Taken == 0 || st.stillReady(i)) {
			continue
		}
		if first {
			b.Cmd("ZREM").Arg(turns)
			first = false
		}
		b.Arg(l.Name)
	}
	first = true
	for i := range lanes {
		l := &lanes[i]
		if l.Stale || l.Taken == 0 || !st.stillReady(i) {
			continue
		}
		if first {
			b.Cmd("ZADD").Arg(turns)
			first = false
		}
		b.Int(v.Turn + l.Last).Arg(l.Name)
	}
	b.Cmd("HSET").Arg(meta).Str(protocol.MetaTurn).Int(v.Turn + v.Given)
	if v.PendingTaken > 0 {
		b.Str(protocol.MetaPendingTurn).Int(v.Turn + v.PendingLast)
	}
	if v.SetWait {
		b.Str(protocol.MetaLaneWait).Int(v.Wait)
	}
}

// stillReady reports whether lane i of turns is ready after the claim.
func (st *claimState) stillReady(i int) bool {
	l := &st.seen.Ready.Val[i]
	return verdict.LaneReady(l.State.Paused, l.State.Waiting-l.Taken, l.State.Active+st.returned[i], l.State.Cap)
}

// claimExtended are the row fields of CLAIM's extended rows, in the order
// of protocol.ClaimExtendedFields (a test holds them equal), read after att,
// data and ev and replied in that order by replyExtended.
var claimExtended = [...]string{protocol.FieldMax, protocol.FieldKind, protocol.FieldTimeout, protocol.FieldHeaders}

// claimWait are the row fields an extended row's read asks for last, in the
// order of protocol.ClaimWaitFields, for its wait (verdict.ClaimWait).
var claimWait = [...]string{protocol.FieldState, protocol.FieldAdded}

// replyOptBulk replies a row field: a bulk, or null when absent.
func replyOptBulk(c *host.Call, v host.Value) error {
	if v.IsNull() {
		c.ReplyNull()
		return nil
	}
	b, err := v.Bytes()
	if err != nil {
		return err
	}
	c.ReplyBulk(b)
	return nil
}

// replyExtended replies an extended row's max, kind, timeout and headers
// (the HMGET's fields at to at+3, of which it read the first more): max and
// timeout as numeric row fields, kind and headers bulk or null; a field
// not read replies as absent.
func replyExtended(c *host.Call, row host.Value, at, more int) error {
	for i, hi := range [...]int64{grammar.MaxRowInt, 0, protocol.MaxTimeoutMS, 0} {
		if i >= more {
			if hi == 0 {
				c.ReplyNull()
			} else {
				c.ReplyInt(0)
			}
			continue
		}
		v := row.Index(at + i)
		if hi == 0 {
			if err := replyOptBulk(c, v); err != nil {
				return err
			}
			continue
		}
		b, set, err := v.OptBytes()
		if err != nil {
			return err
		}
		if i == 0 && !set {
			// a row leaves out max at its default
			b, set = claimDefaultMax, true
		}
		c.ReplyInt(grammar.RowInt(b, set, hi))
	}
	return nil
}

// claimDefaultMax is the max a row without one holds.
var claimDefaultMax = []byte(protocol.DefaultMax)

// extAt is the index in a row's HMGET of its first extended field: after
// att data, and ev when read.
func (st *claimState) extAt() int {
	if st.ev {
		return 3
	}
	return 2
}

// rowFields is the number of fields of each row's HMGET: att data, ev when
// read, st.more extended fields, and with waits the wait's.
func (st *claimState) rowFields() int {
	n := st.extAt() + st.more
	if st.waits {
		n += len(claimWait)
	}
	return n
}

// claimState is CLAIM's scratch between commands.
type claimState struct {
	scratch
	seen verdict.ClaimSeen
	// more is the number of claimExtended fields each row read asks for
	// (verdict.ClaimRowFields).
	more int
	// ev reports whether each row read asks for ev, after att data (meta
	// rowopts is not 0).
	ev bool
	// waits reports whether each row read asks for state and at, last,
	// for the job's wait (ext 2).
	waits bool
	// rows[i] is the row key of member i (base job: member), nil for a
	// member that is not an id.
	rows [][]byte
	// rowAt[i] is the index of member i's HMGET in the rows' batch.
	rowAt []int
	// events are the jobs' claimed events.
	events jobEvents
	// keys are the keys of one ACL check.
	keys [][]byte
	// laneKeys[i] is the key lane:<l> of lane i of turns.
	laneKeys [][]byte
	// returned[i] counts the jobs lane i of turns returned.
	returned []int64
	// infoLen is HLEN laneinfo, read with turns (-1: not read); byName
	// holds the indexes of the lanes of turns in byte order of their names.
	infoLen int64
	byName  []int32
	// turns is the key turns; rowsRead the rows' batch, whose replies the
	// reply's payloads are read from.
	turns    []byte
	rowsRead host.Results
}

var claims pool[claimState]

// members copies the head of pending (ZRANGE's reply, the batch's third)
// into the scratch, so it outlives the batch.
func (st *claimState) members(res host.Results) error {
	v, err := res.At(2)
	if err != nil {
		return err
	}
	if v.Kind() != host.KindArray {
		return host.ErrHostReply
	}
	v.Elems(func(_ int, e host.Value) bool {
		var m []byte
		if m, err = e.Bytes(); err != nil {
			return false
		}
		st.seen.Pending.Val = append(st.seen.Pending.Val, st.member(m))
		return true
	})
	return err
}

// member copies a set member into the scratch: never nil, even when empty.
func (st *claimState) member(m []byte) []byte {
	if c := st.copy(m); c != nil {
		return c
	}
	return []byte{}
}

// field appends a laneinfo field name, prefix then the lane, to the scratch.
func (st *claimState) field(prefix string, lane []byte) []byte {
	return st.derived(nil, prefix, lane, "")
}

// readTurns reads the ready lanes: ZRANGE turns 0 <count-1> WITHSCORES,
// then the caller's ACL on laneinfo, lanes and each lane:<l> (read and
// write). The lanes' own reads follow with ClaimHeads. laneinfo and lanes
// are checked before turns is read, so that HLEN laneinfo can join turns'
// read: its size says how the lanes' fields are best read (see readHeads).
// A denial is the same NOPERM, in the same place, after turns' read.
func (st *claimState) readTurns(r *verbCall, turns []byte, count int64) error {
	s := &st.seen
	info := st.derived(r.base, protocol.SuffixLaneInfo, nil, "")
	st.keys = append(st.keys[:0], info, st.derived(r.base, protocol.SuffixLanes, nil, ""))
	deny, err := r.firstDenied(host.KeyRead|host.KeyUpdate, st.keys)
	if err != nil {
		return err
	}
	s.LaneDenied = deny >= 0
	b := r.c.Read().Cmd(host.ZRANGE).Arg(turns).Str("0").Int(count - 1).Str("WITHSCORES")
	if !s.LaneDenied {
		b.Cmd(host.HLEN).Arg(info)
	}
	res := b.RunAll()
	st.infoLen = -1
	if !s.LaneDenied {
		if n := intAt(res, 1); n.Err == nil {
			st.infoLen = n.Val
		}
	}
	s.Ready.Made = true
	v, err := res.At(0)
	if err == nil && (v.Kind() != host.KindArray || v.Len()%2 != 0) {
		err = host.ErrHostReply
	}
	if err != nil {
		s.Ready.Err = err
		return nil
	}
	lanes := s.Ready.Val[:0]
	v.Elems(func(i int, e host.Value) bool {
		var b []byte
		if b, err = e.Bytes(); err != nil {
			return false
		}
		if i%2 == 0 {
			// a lane of the array's last command keeps its heads' array
			var heads [][]byte
			if n := len(lanes); n < cap(lanes) {
				heads = lanes[:n+1][n].Heads.Val[:0]
			}
			lanes = append(lanes, verdict.ClaimLane{Name: st.member(b), Heads: verdict.Reply[[][]byte]{Val: heads}})
			return true
		}
		var f float64
		if f, err = strconv.ParseFloat(string(b), 64); err != nil {
			err = host.ErrHostReply
			return false
		}
		lanes[len(lanes)-1].Score = f
		return true
	})
	s.Ready.Val = lanes
	if err != nil {
		s.Ready.Err = err
		return nil
	}
	if len(lanes) == 0 || s.LaneDenied {
		return nil
	}
	for i := range lanes {
		st.laneKeys = append(st.laneKeys, st.derived(r.base, protocol.SuffixLane, lanes[i].Name, ""))
	}
	if deny, err = r.firstDenied(host.KeyRead|host.KeyUpdate, st.laneKeys); err != nil {
		return err
	}
	s.LaneDenied = deny >= 0
	return nil
}

// wholeInfo reports whether laneinfo, of n fields, is better read whole
// (HGETALL) than as n lanes' per fields each (HMGET): when it holds few more
// fields than those, or is small enough to be a listpack, where each field
// HMGET asks for is a scan of the whole hash. Only the cost differs: the
// values read are the same.
func wholeInfo(fields int64, lanes, per int) bool {
	return fields >= 0 && (fields <= int64(per)*int64(lanes) || (fields <= 512 && lanes >= 8))
}

// bare reports whether no lane of the queue has a setting, so that CLAIM
// reads only the lanes' active counts: meta lanesets reads 0.
func (st *claimState) bare() bool {
	return verdict.LaneSets(st.seen.Meta.Val[verdict.ClaimMetaLaneSets]) == 0
}

// readHeads makes the lanes' reads the verdict asks for, in one batch: when
// their laneinfo fields are not read yet, one HMGET laneinfo active:<l>
// cap:<l> paused:<l> … of every lane of turns (active:<l> only when bare);
// then per lane, in order,
// ZRANGE lane:<l> 0 <Ask-1> and ZCARD lane:<l> as asked. The members are
// copied into the scratch.
func (st *claimState) readHeads(r *verbCall) {
	s := &st.seen
	lanes := s.Ready.Val
	b := r.c.Read()
	info := !lanes[0].Info.Made
	per := 3
	if st.bare() {
		per = 1
	}
	whole := info && wholeInfo(st.infoLen, len(lanes), per)
	if whole {
		b.Cmd(host.HGETALL).Arg(st.derived(r.base, protocol.SuffixLaneInfo, nil, ""))
	} else if info {
		b.Cmd(host.HMGET).Arg(st.derived(r.base, protocol.SuffixLaneInfo, nil, ""))
		for i := range lanes {
			b.Arg(st.field(protocol.FieldLaneActive, lanes[i].Name))
			if per == 3 {
				b.Arg(st.field(protocol.FieldLaneCap, lanes[i].Name)).
					Arg(st.field(protocol.FieldLanePaused, lanes[i].Name))
			}
		}
	}
	for i := range lanes {
		l := &lanes[i]
		if l.Ask > 0 {
			b.Cmd(host.ZRANGE).Arg(st.laneKeys[i]).Str("0").Int(l.Ask - 1)
		}
		if l.Card {
			b.Cmd(host.ZCARD).Arg(st.laneKeys[i])
		}
	}
	res := b.RunAll()
	s.LaneReads++
	k := 0
	if whole {
		st.laneInfoAll(res, per)
		k++
	} else if info {
		st.laneInfo(res, per)
		k++
	}
	for i := range lanes {
		l := &lanes[i]
		if l.Ask > 0 {
			l.Heads, l.Asked = listAt(res, k, &st.scratch, l.Heads.Val[:0]), l.Ask
			k++
		}
		if l.Card {
			l.Waiting = intAt(res, k)
			k++
		}
	}
}

// laneInfo spreads the first reply of res, HMGET laneinfo of per fields
// per lane of turns (three, or active:<l> only), over the lanes' Info, the
// values copied into the scratch; an error is every lane's.
func (st *claimState) laneInfo(res host.Results, per int) {
	lanes := st.seen.Ready.Val
	v, err := res.At(0)
	if err == nil && (v.Kind() != host.KindArray || v.Len() != per*len(lanes)) {
		err = host.ErrHostReply
	}
	if err == nil {
		for i := range lanes {
			lanes[i].Info = verdict.Reply[[3]verdict.Field]{Made: true}
		}
		v.Elems(func(j int, e host.Value) bool {
			f := &lanes[j/per].Info.Val[j%per]
			if f.Bytes, f.Set, err = e.OptBytes(); err != nil {
				return false
			}
			f.Bytes = st.copy(f.Bytes)
			return true
		})
	}
	if err != nil {
		for i := range lanes {
			lanes[i].Info = verdict.Failed[[3]verdict.Field](err)
		}
	}
}

// laneInfoAll spreads the first reply of res, HGETALL laneinfo, over the
// lanes' Info (the fields a lane's HMGET of per fields would read, the
// values copied into the scratch); an error is every lane's.
func (st *claimState) laneInfoAll(res host.Results, per int) {
	lanes := st.seen.Ready.Val
	v, err := res.At(0)
	if err == nil && (v.Kind() != host.KindArray || v.Len()%2 != 0) {
		err = host.ErrHostReply
	}
	if err != nil {
		for i := range lanes {
			lanes[i].Info = verdict.Failed[[3]verdict.Field](err)
		}
		return
	}
	// the lanes by name, to find each field's
	st.byName = st.byName[:0]
	for i := range lanes {
		lanes[i].Info = verdict.Reply[[3]verdict.Field]{Made: true}
		st.byName = append(st.byName, int32(i))
	}
	slices.SortFunc(st.byName, func(a, b int32) int { return bytes.Compare(lanes[a].Name, lanes[b].Name) })
	var f *verdict.Field
	v.Elems(func(j int, e host.Value) bool {
		var b []byte
		if b, err = e.Bytes(); err != nil {
			return false
		}
		if j%2 == 1 {
			if f != nil {
				f.Bytes, f.Set = st.copy(b), true
			}
			return true
		}
		f = st.infoField(b, per)
		return true
	})
	if err != nil {
		for i := range lanes {
			lanes[i].Info = verdict.Failed[[3]verdict.Field](err)
		}
	}
}

// infoField is the Info field of the lane of turns a laneinfo field names
// (active:<l>, cap:<l> or paused:<l>; active:<l> only when per is 1), or
// nil.
func (st *claimState) infoField(name []byte, per int) *verdict.Field {
	k := 0
	var lane []byte
	switch {
	case bytes.HasPrefix(name, []byte(protocol.FieldLaneActive)):
		lane = name[len(protocol.FieldLaneActive):]
	case bytes.HasPrefix(name, []byte(protocol.FieldLaneCap)):
		k, lane = 1, name[len(protocol.FieldLaneCap):]
	case bytes.HasPrefix(name, []byte(protocol.FieldLanePaused)):
		k, lane = 2, name[len(protocol.FieldLanePaused):]
	default:
		return nil
	}
	if k >= per {
		return nil
	}
	lanes := st.seen.Ready.Val
	i, found := slices.BinarySearchFunc(st.byName, lane, func(a int32, l []byte) int { return bytes.Compare(lanes[a].Name, l) })
	if !found {
		return nil
	}
	return &lanes[st.byName[i]].Info.Val[k]
}

// readRows checks the rows of the members that are ids against the caller's
// ACL, then reads HMGET row att data [ev] [max [kind timeout headers] state
// at] for each (ev when st.ev; the extended rows with ext 1: st.more
// fields, then the wait's), up to
// the first one
// denied,
// in one batch (with lanes, then ZCARD lanes); it fills the verdict's Rows
// and returns the batch. With turns (ClaimTurnsSize), turns is checked
// first and ZCARD turns leads the batch (a denied turns reads nothing); the
// rows stay the verdict's only when turns is empty.
func (st *claimState) readRows(r *verbCall, lanes bool, turns []byte) (host.Results, error) {
	s := &st.seen
	st.rowKeys(r, turns)
	deny := -1
	if len(st.keys) > 0 {
		var err error
		if deny, err = r.firstDenied(host.KeyRead|host.KeyUpdate, st.keys); err != nil {
			return host.Results{}, err
		}
	}
	b := r.c.Read()
	k := 0 // the batch's commands
	if turns != nil {
		if deny == 0 {
			s.Turns, s.Rows = denied[int64](), s.Rows[:0]
			return host.Results{}, nil
		}
		b.Cmd(host.ZCARD).Arg(turns)
		k, deny = 1, deny-1
		if deny < 0 {
			deny = -2 // no row denied
		}
	}
	first := k
	for i, m := range s.Members {
		if !verdict.JobMember(m) {
			continue
		}
		if k-first == deny {
			s.Rows[i] = denied[verdict.Field]()
			break
		}
		st.rowAt[i] = k
		b.Cmd(host.HMGET).Arg(st.rows[i]).Str(protocol.FieldAttempts).Str(protocol.FieldData)
		if st.ev {
			b.Str(protocol.FieldEvents)
		}
		for _, f := range claimExtended[:st.more] {
			b.Str(f)
		}
		if st.waits {
			b.Str(claimWait[0]).Str(claimWait[1])
		}
		k++
	}
	if lanes {
		b.Cmd(host.ZCARD).Arg(st.derived(r.base, protocol.SuffixLanes, nil, ""))
	}
	if k == 0 && !lanes {
		return host.Results{}, nil
	}
	res := b.RunAll()
	st.takeRows(res, k, lanes, turns != nil)
	return res, nil
}

// rowKeys builds the keys of readRows' ACL check: turns when not nil, then
// the row of each member that is an id (st.rows; st.rowAt -1 until read);
// and readies the verdict's Rows.
func (st *claimState) rowKeys(r *verbCall, turns []byte) {
	s := &st.seen
	st.keys, st.rowAt, st.rows = st.keys[:0], st.rowAt[:0], st.rows[:0]
	if turns != nil {
		st.keys = append(st.keys, turns)
	}
	for _, m := range s.Members {
		st.rowAt = append(st.rowAt, -1)
		var row []byte
		if verdict.JobMember(m) {
			row = st.derived(r.base, protocol.SuffixJob, m, "")
			st.keys = append(st.keys, row)
		}
		st.rows = append(st.rows, row)
	}
	s.Rows = s.Rows[:0]
	for range s.Members {
		s.Rows = append(s.Rows, verdict.Reply[verdict.Field]{})
	}
}

// takeRows takes readRows' replies: the rows, then ZCARD lanes (the k-th
// reply) with lanes, and ZCARD turns (the first) with turns.
func (st *claimState) takeRows(res host.Results, k int, lanes, turns bool) {
	s := &st.seen
	for i := range s.Members {
		if st.rowAt[i] < 0 {
			continue
		}
		var f [3 + len(claimExtended) + len(claimWait)]verdict.Field
		err := fieldsAt(res, st.rowAt[i], f[:st.rowFields()])
		s.Rows[i] = verdict.Reply[verdict.Field]{Made: true, Err: err, Val: f[0]}
	}
	if lanes {
		s.Registry = intAt(res, k)
	}
	if turns {
		s.Turns = intAt(res, 0)
		s.PendingRows = true
		if s.Turns.Err != nil || s.Turns.Val != 0 {
			s.Rows, s.PendingRows = s.Rows[:0], false
		}
	}
}

// speculate is the largest count whose claim reads turns' size with the
// rows of pending's head (ClaimTurnsSize) instead of before: one crossing
// and one ACL lookup fewer when no lane is ready, one row read in vain when
// one is.
const speculate = 1
