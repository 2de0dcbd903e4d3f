package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// jobs is EMQ.JOBS (internal/lua/jobs.lua, read-only): a page of the jobs of one
// state, in set order or newest first, after a cursor. Crossings: the
// command, the set's ACL check, one read batch (the fence and ZCARD), with
// a cursor one batch for its place and one per probe of its score's group,
// the page, the rows' ACL check, one batch of the rows and one of the
// payloads previewed.
func jobs(c *host.Call) error {
	// shape and layout: numkeys 2 (base version), ARGV state lane newest
	// after_score after_member count clip
	r, err := prelude(c, protocol.Jobs, exactly(7))
	if err != nil {
		return err
	}
	// values, in order
	a, err := verdict.JobsValues(r.args)
	if err != nil {
		return err
	}
	st := jobPages.get()
	defer jobPages.put(st)
	st.reset()
	var set []byte
	if a.Lane != nil {
		set = st.derived(r.base, protocol.SuffixLane, a.Lane, "")
	} else {
		set = st.derived(r.base, a.State, nil, "")
	}
	// the set is derived: the caller's ACL (read), refused after the fence
	deny, err := r.firstDenied(host.KeyRead, [][]byte{set})
	if err != nil {
		return err
	}
	b := r.fenced()
	if deny < 0 {
		b.Cmd(host.ZCARD).Arg(set)
	}
	res := b.RunAll()
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return err
	}
	if deny >= 0 {
		return host.ErrNoPerm
	}
	card := intAt(res, 1)
	if card.Err != nil {
		return card.Err
	}
	before, upTo, err := st.place(&r, set, a.After, card.Val)
	if err != nil {
		return err
	}
	// the page: at most count + 1 members, in set order
	st.members, st.scores = st.members[:0], st.scores[:0]
	if from, to, ok := verdict.PageRange(a.Newest, before, upTo, a.Count); ok && card.Val > 0 {
		if err := st.zrange(r.c, set, from, to); err != nil {
			return err
		}
	}
	if a.Newest {
		reverse(st.members)
		reverse(st.scores)
	}
	more := int64(len(st.members)) > a.Count
	n := min(len(st.members), int(a.Count))
	if err := st.readRows(&r, st.members[:n], a.Clip); err != nil {
		return err
	}
	// the reply: [total, next_score, next_member, rows]
	c.ReplyArray(4)
	c.ReplyInt(card.Val)
	if more {
		c.ReplyInt(st.scores[n-1])
		c.ReplyBulk(st.members[n-1])
	} else {
		c.ReplyNull()
		c.ReplyNull()
	}
	c.ReplyArray(n)
	for i := range n {
		replyJobsRow(c, st.members[i], st.scores[i], &st.rows[i])
	}
	return nil
}

// replyJobsRow replies one row of a JOBS page.
func replyJobsRow(c *host.Call, id []byte, score int64, row *verdict.JobsRow) {
	opt := func(b []byte) {
		if b == nil {
			c.ReplyNull()
		} else {
			c.ReplyBulk(b)
		}
	}
	c.ReplyArray(len(protocol.JobsRowFields))
	c.ReplyBulk(id)
	c.ReplyInt(score)
	opt(row.State)
	c.ReplyInt(row.Att)
	c.ReplyInt(row.Max)
	c.ReplyInt(row.Prio)
	opt(row.Lane)
	opt(row.Parent)
	c.ReplyInt(row.Deps)
	c.ReplyInt(row.At)
	opt(row.Err)
	c.ReplyInt(row.ErrSize)
	opt(row.Prog)
	c.ReplyInt(row.DataSize)
	opt(row.Preview)
	opt(row.Kind)
}

// place finds a cursor's place in set (card members): b the members before
// it, e those up to it (docs/PROTOCOL.md, "Cursors"). Without a cursor b is
// card and e 0. One batch reads ZSCORE and ZRANK of the member and the
// ZCOUNTs of its score; off the member, each probe of the binary search
// over the score's group is one ZRANGE <r> <r>. The set was read by ZCARD
// in this command: these reads cannot meet another type.
func (st *opsState) place(r *verbCall, set []byte, cur verdict.Cursor, card int64) (b, e int64, err error) {
	if !cur.Set {
		return card, 0, nil
	}
	res := r.c.Read().
		Cmd(host.ZSCORE).Arg(set).Arg(cur.Member).
		Cmd(host.ZRANK).Arg(set).Arg(cur.Member).
		Cmd(host.ZCOUNT).Arg(set).Str("-inf").Arg(st.below(cur.Score)).
		Cmd(host.ZCOUNT).Arg(set).Int(cur.Score).Int(cur.Score).
		RunAll()
	score := fieldAt(res, 0)
	if score.Err != nil {
		return 0, 0, score.Err
	}
	if verdict.OnCursor(cur, score.Val) {
		rank := intAt(res, 1)
		if rank.Err != nil {
			return 0, 0, rank.Err
		}
		return rank.Val, rank.Val + 1, nil
	}
	lo, g := intAt(res, 2), intAt(res, 3)
	if lo.Err != nil || g.Err != nil {
		return 0, 0, host.ErrHostReply
	}
	search := verdict.NewSearch(g.Val)
	for {
		off, ok := search.Probe()
		if !ok {
			break
		}
		probe := listAt(r.c.Read().Cmd(host.ZRANGE).Arg(set).Int(lo.Val+off).Int(lo.Val+off).RunAll(), 0, nil, st.probe[:0])
		if probe.Err != nil || len(probe.Val) != 1 {
			return 0, 0, host.ErrHostReply
		}
		search.Seen(probe.Val[0], cur.Member)
	}
	at := lo.Val + search.Before()
	return at, at, nil
}

// zrange reads ZRANGE set from to WITHSCORES into st.members and st.scores
// (copies in the scratch).
func (st *opsState) zrange(c *host.Call, set []byte, from, to int64) error {
	res := c.Read().Cmd(host.ZRANGE).Arg(set).Int(from).Int(to).Str("WITHSCORES").RunAll()
	l := listAt(res, 0, &st.scratch, st.flat)
	if l.Err != nil {
		return l.Err
	}
	st.flat = l.Val
	if len(l.Val)%2 != 0 {
		return host.ErrHostReply
	}
	for i := 0; i < len(l.Val); i += 2 {
		st.members = append(st.members, l.Val[i])
		st.scores = append(st.scores, verdict.ScoreOf(l.Val[i+1]))
	}
	return nil
}

// readRows reads the rows of a JOBS page: the ACL check of the rows of the
// members that are ids (read; the first denied one is refused in place of
// its read), one batch of HMGET row <verdict.JobsFields> and HSTRLEN row
// data per row, then one batch of HGET row data for the rows previewed.
func (st *opsState) readRows(r *verbCall, members [][]byte, clip int64) error {
	st.rows = grow(st.rows, len(members))
	st.rowOf = grow(st.rowOf, len(members))
	st.keys = st.keys[:0]
	for i, m := range members {
		if verdict.JobMember(m) {
			st.rowOf[i] = st.derived(r.base, protocol.SuffixJob, m, "")
			st.keys = append(st.keys, st.rowOf[i])
		}
	}
	if len(st.keys) == 0 {
		return nil
	}
	deny, err := r.firstDenied(host.KeyRead, st.keys)
	if err != nil {
		return err
	}
	nrows := len(st.keys)
	if deny >= 0 {
		nrows = deny
	}
	b := r.c.Read()
	for _, row := range st.keys[:nrows] {
		b.Cmd(host.HMGET).Arg(row)
		for _, f := range verdict.JobsFields {
			b.Str(f)
		}
		b.Cmd(host.HSTRLEN).Arg(row).Str(protocol.FieldData)
	}
	res := b.RunAll()
	var fields [11]verdict.Field
	k, previews := 0, 0
	for i, m := range members {
		if !verdict.JobMember(m) {
			continue
		}
		if k == nrows {
			return host.ErrNoPerm
		}
		if err := fieldsAt(res, 2*k, fields[:]); err != nil {
			return err
		}
		size := intAt(res, 2*k+1)
		if size.Err != nil {
			return size.Err
		}
		row := verdict.ReadJobsRow(fields[:], size.Val, clip)
		// copies: the next batch reuses the replies' memory
		row.State, row.Lane, row.Parent = st.keepBytes(row.State), st.keepBytes(row.Lane), st.keepBytes(row.Parent)
		row.Err, row.Prog, row.Kind = st.keepBytes(row.Err), st.keepBytes(row.Prog), st.keepBytes(row.Kind)
		st.rows[i] = row
		if row.Present && row.NeedsData {
			previews++
		}
		k++
	}
	if previews == 0 {
		return nil
	}
	b = r.c.Read()
	for i := range members {
		if st.rows[i].Present && st.rows[i].NeedsData {
			b.Cmd(host.HGET).Arg(st.rowOf[i]).Str(protocol.FieldData)
		}
	}
	res = b.RunAll()
	k = 0
	for i := range members {
		if row := &st.rows[i]; row.Present && row.NeedsData {
			data := fieldAt(res, k)
			if data.Err != nil {
				return data.Err
			}
			row.SetPreview(data.Val, clip)
			row.Preview = st.keepBytes(row.Preview)
			k++
		}
	}
	return nil
}

// keepBytes is copy that keeps an empty slice empty, not nil (nil replies
// null).
func (st *opsState) keepBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	if len(b) == 0 {
		return []byte{}
	}
	return st.copy(b)
}

// reverse reverses s in place.
func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// opsState is the operations verbs' scratch between commands.
type opsState struct {
	scratch
	members, flat, probe [][]byte
	scores               []int64
	rows                 []verdict.JobsRow
	rowOf, keys          [][]byte
	// the dead filters': each member's row fields (and whether it has a
	// row read), moves, new max, lane index, unique key
	fields  []verdict.Field
	has     []bool
	moves   []verdict.Move
	fates   []verdict.DeadFate
	maxes   []int64
	laneOf  []int
	order   []int
	uniques [][]byte
	lanes   laneAcct
	events  jobEvents
}

var jobPages pool[opsState]
