package main

import (
	"strconv"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// The stats counters RECOVER, REMOVE and REQUEUE increment, named by the
// protocol's list (protocol.StatsCounters, in STATS order).
var (
	statRecovered = protocol.StatsCounters[5]
	statRemoved   = protocol.StatsCounters[6]
	statRequeued  = protocol.StatsCounters[7]
)

// pageAt is a paged read's page (CHILDREN, LANES, SCHEDULE.LIST,
// SCHEDULE.DUE): its batch is the fence, then the page's ZRANGE when the
// caller's ACL allowed it (deny -1). The fence's refusal comes first, then
// the denial (NOPERM), then the ZRANGE's; the page's members are copied to
// keep and appended to dst[:0], which is returned as it was on a refusal.
func pageAt(res host.Results, deny int, keep *scratch, dst [][]byte) ([][]byte, error) {
	if err := verdict.Fence(fieldAt(res, 0)); err != nil {
		return dst, err
	}
	if deny >= 0 {
		return dst, host.ErrNoPerm
	}
	page := listAt(res, 1, keep, dst)
	if page.Err != nil {
		return dst, page.Err
	}
	return page.Val, nil
}

// listAt is the i-th reply of a batch as an array of strings (ZRANGEBYSCORE,
// LRANGE), its elements appended to dst[:0]. With keep set the elements are
// copied into it, so the verdict can look at them after the next batch;
// without, they are views valid until then. An element that is not a string
// is ErrHostReply.
func listAt(res host.Results, i int, keep *scratch, dst [][]byte) verdict.Reply[[][]byte] {
	v, err := res.At(i)
	if err != nil {
		return verdict.Failed[[][]byte](err)
	}
	if v.Kind() != host.KindArray {
		return verdict.Failed[[][]byte](host.ErrHostReply)
	}
	dst = dst[:0]
	v.Elems(func(_ int, e host.Value) bool {
		var b []byte
		if b, err = e.Bytes(); err != nil {
			return false
		}
		if keep != nil {
			b = keep.copy(b)
			if b == nil {
				b = []byte{}
			}
		}
		dst = append(dst, b)
		return true
	})
	if err != nil {
		return verdict.Failed[[][]byte](err)
	}
	return verdict.Got(dst)
}

// below appends "(<v>", an exclusive score bound, to the scratch.
func (s *scratch) below(v int64) []byte {
	off := len(s.buf)
	s.buf = append(s.buf, '(')
	s.buf = strconv.AppendInt(s.buf, v, 10)
	return s.buf[off:len(s.buf):len(s.buf)]
}

// grow returns s with length n, reusing its array when it is large enough,
// every element zeroed.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// signalPush adds the writes that leave one token, "1", in the signal list,
// for workers blocked on it; held is the list's length read before the
// guard (LLEN signal). The Lua scripts write LPUSH signal 1, LTRIM signal 0
// 0 whatever the list holds; the same list comes from one write when the
// list was empty (LPUSH signal 1: the LTRIM would remove nothing) or held one
// element (LSET signal 0 1), so only a longer list takes both.
//
// Every verb that makes a job claimable where an idle worker may wait ends
// with this push, so it also signals the queue's pending key ready, for the
// CLAIMs blocked on it (a new pending key wakes them by itself), and
// publishes "1" on the sharded channel named as the list, for the workers
// of a partitioned queue, unless the caller's ACL may not publish it.
func signalPush(b *host.Batch, signal []byte, held int64) {
	if n := len(signal) - len(protocol.SuffixSignal); n >= 0 && string(signal[n:]) == protocol.SuffixSignal {
		b.SignalReady(signal[:n], protocol.SuffixPending)
	}
	switch held {
	case 0:
		b.Cmd("LPUSH").Arg(signal).Str("1")
	case 1:
		b.Cmd("LSET").Arg(signal).Str("0").Str("1")
	default:
		b.Cmd("LPUSH").Arg(signal).Str("1").
			Cmd("LTRIM").Arg(signal).Str("0").Str("0")
	}
	if b.MayCall(spublish, signal, signalToken) {
		b.Cmd("SPUBLISH").Arg(signal).Str("1")
	}
}

// signalToken is the signal list's token and the signal channel's message.
var signalToken = []byte("1")

// zaddMoves adds ZADD set <score> <id> … for the members whose move goes to
// dest, one command for all of them (the Lua writes one ZADD per member),
// and reports whether there was any. The ids are distinct members of one
// set, so set ends with the members, order and encoding that one ZADD per
// member gives: a zset is ordered by score then member, and it leaves the
// listpack encoding when it grows past zset-max-listpack-entries, which a
// ZADD of more members than that passes, one call or many.
func zaddMoves(b *host.Batch, set []byte, dest verdict.Dest, moves []verdict.Move, ids [][]byte) bool {
	found := false
	for i, mv := range moves {
		if mv.To != dest {
			continue
		}
		if !found {
			b.Cmd("ZADD").Arg(set)
			found = true
		}
		b.Int(mv.Score).Arg(ids[i])
	}
	return found
}

// removedAll checks the i-th reply of a write batch, a ZREM, against the number
// of members it was predicted to remove (members just read from the set).
func removedAll(c *host.Call, res host.Results, i int, want int) error {
	if got := intAt(res, i); got.Err != nil || got.Val != int64(want) {
		host.Logf(host.LogWarning, "%s: ZREM answered %d (%v), %d predicted; answered %q", c.Name(), got.Val, got.Err, want, protocol.ErrHostReply)
		return host.ErrHostReply
	}
	return nil
}

// memberRows are the row keys of a batch of set members (RECOVER's expired,
// PROMOTE's due): each member that is a job id has a row, checked against
// the caller's ACL before it is read.
type memberRows struct {
	rowOf [][]byte // the row key of each member that is an id
	rows  [][]byte // those row keys, in order
	deny  int      // the index in rows of the first denied row, or -1
}

// check builds the row keys of ids and checks them against the caller's ACL
// (read, then written). It returns how many rows may be read: all, or those
// before the first denied one, whose read is then the refusal.
func (m *memberRows) check(r *verbCall, s *scratch, ids [][]byte) (int, error) {
	m.rowOf = grow(m.rowOf, len(ids))
	m.rows = m.rows[:0]
	for i, id := range ids {
		if verdict.JobMember(id) {
			m.rowOf[i] = s.derived(r.base, protocol.SuffixJob, id, "")
			m.rows = append(m.rows, m.rowOf[i])
		}
	}
	m.deny = -1
	if len(m.rows) > 0 {
		var err error
		if m.deny, err = r.firstDenied(host.KeyRead|host.KeyUpdate, m.rows); err != nil {
			return 0, err
		}
	}
	if m.deny >= 0 {
		return m.deny, nil
	}
	return len(m.rows), nil
}

// place gives each member that is an id its row's reply: the fields of the
// res[k] HMGET (width fields per member, in fields) for the first nrows
// rows, the denial for the denied one, and nothing for the rows after it.
//
// With evs (one per member), each HMGET reads ev after the width fields,
// into evs.
func (m *memberRows) place(res host.Results, ids [][]byte, nrows, width int, fields []verdict.Field, out []verdict.Reply[[]verdict.Field], evs []verdict.Field) {
	k := 0
	for i, id := range ids {
		if !verdict.JobMember(id) {
			continue
		}
		switch {
		case k < nrows:
			f := fields[width*i : width*i+width]
			if evs != nil {
				out[i] = verdict.Reply[[]verdict.Field]{Made: true, Val: f, Err: fieldsEvAt(res, k, f, &evs[i])}
			} else {
				out[i] = verdict.Reply[[]verdict.Field]{Made: true, Val: f, Err: fieldsAt(res, k, f)}
			}
		case k == m.deny:
			out[i] = denied[[]verdict.Field]()
		}
		k++
	}
}
