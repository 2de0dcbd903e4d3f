package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// Job events (docs/PROTOCOL.md, "Job events"): a verb collects the events of
// its jobs whose row holds ev while it decides, checks the caller's ACL on
// the events stream after every other refusal, before the guard (check),
// and writes them right after the guard, before its other writes
// (publish, or prepend to the verb's own write batch): the XADD is the
// check of the stream, and its failure the call's refusal with nothing
// written. A call whose jobs have no ev collects nothing, and neither reads
// nor writes anything more.
//
// An event carries its job's kind: ADD and CLAIM know it (their own
// arguments, CLAIM's row read once meta jobfields is 1: addKind), and so
// do COMPLETE and COMPLETEMANY while meta rowopts is 2 (their row read
// lists kind then); the other events have it read from the job's row in
// check, in one batch, only for the events that are on.
//
// A call with at least one entry crosses into the server once more than
// its verb's comment says, the ACL check of events before the guard, and
// with publish once more again: one write batch of its XADDs after it (a
// call of several entries reads the stream's top first, in one more
// crossing; a call with kinds to read reads them first, in one more).
// ADD, CLAIM, COMPLETE and COMPLETEMANY, the verbs of a plain job's life,
// prepend.

// evEntry is one event to publish: event <name> id <id> [<field> <value>]
// [kind <kind>] in the call's entry, trimmed with the bound of the entry's
// first event.
type evEntry struct {
	bound, id []byte
	name      string
	field     string // "" for none
	value     []byte
	// kind is the job's kind when hasKind; readKind: it is read from the
	// job's row in check.
	kind              []byte
	hasKind, readKind bool
	// argv is the command's argument that id is, passed on by reference
	// (Batch.Argv), or 0 (id is a copy).
	argv int
}

// args is the number of the event's XADD arguments: event <name> id <id>,
// then its field's pair and its kind's.
func (x *evEntry) args() int {
	n := 4
	if x.field != "" {
		n += 2
	}
	if x.hasKind {
		n += 2
	}
	return n
}

// jobEvents is a call's events, in publishing order, with copies of their
// bytes.
type jobEvents struct {
	scratch
	list []evEntry
	key  []byte
}

func (e *jobEvents) reset() {
	e.scratch.reset()
	e.list = e.list[:0]
	e.key = nil
}

// evOn is the bound of a row's ev field: a canonical decimal
// 1..protocol.MaxEventsLen turns the job's events on, anything else (or
// absent) is off.
func evOn(ev verdict.Field) bool {
	if !ev.Set {
		return false
	}
	_, ok := grammar.Decimal(ev.Bytes, 1, protocol.MaxEventsLen)
	return ok
}

// add queues event name of job id when its row's ev is on, with an optional
// field and value; its kind is read from the job's row in check.
func (e *jobEvents) add(ev verdict.Field, name string, id []byte, field string, value []byte) {
	if e.queue(ev, name, id, field, value) {
		e.list[len(e.list)-1].readKind = true
	}
}

// addKind is add with the job's kind known: kind as read (not Set: none).
func (e *jobEvents) addKind(ev verdict.Field, name string, id []byte, field string, value []byte, kind verdict.Field) {
	if e.queue(ev, name, id, field, value) && kind.Set {
		x := &e.list[len(e.list)-1]
		x.kind, x.hasKind = e.keep(kind.Bytes), true
	}
}

// queue appends the event when ev is on, and reports whether it did.
func (e *jobEvents) queue(ev verdict.Field, name string, id []byte, field string, value []byte) bool {
	if !evOn(ev) {
		return false
	}
	entry := evEntry{bound: e.copy(ev.Bytes), id: e.copy(id), name: name, field: field}
	if field != "" {
		entry.value = e.keep(value)
	}
	e.list = append(e.list, entry)
	return true
}

// idArgv says that the event queued at n, if any, has for id the
// command's own argv[i]: the entry's XADD passes it on without a copy.
func (e *jobEvents) idArgv(n, i int) {
	if n < len(e.list) {
		e.list[n].argv = i
	}
}

// keep is copy that keeps an empty value empty, not nil.
func (e *jobEvents) keep(b []byte) []byte {
	if c := e.copy(b); c != nil {
		return c
	}
	return []byte{}
}

// readKinds reads the kinds check reads: one batch of HGET <base>job:<id>
// kind, of the events that need it. Each row was read by the verb, as a
// hash, and the caller may read it: a failure is the host's.
func (e *jobEvents) readKinds(r *verbCall) error {
	b := r.c.Read()
	n := 0
	for i := range e.list {
		if x := &e.list[i]; x.readKind {
			b.Cmd(host.HGET).Arg(e.derived(r.base, protocol.SuffixJob, x.id, "")).Str(protocol.FieldKind)
			n++
		}
	}
	if n == 0 {
		return nil
	}
	res := b.RunAll()
	k := 0
	for i := range e.list {
		if x := &e.list[i]; x.readKind {
			kind := fieldAt(res, k)
			if kind.Err != nil {
				return kind.Err
			}
			if kind.Val.Set {
				x.kind, x.hasKind = e.keep(kind.Val.Bytes), true
			}
			x.readKind = false
			k++
		}
	}
	return nil
}

// entryEnd is the end of the entry that starts at event s: it takes the
// events in order while it holds at most protocol.MaxEntryEvents of them
// and protocol.MaxEntryArgs of their arguments.
func (e *jobEvents) entryEnd(s int) int {
	args := 0
	for i := s; i < len(e.list); i++ {
		w := e.list[i].args()
		if i-s == protocol.MaxEntryEvents || args+w > protocol.MaxEntryArgs {
			return i
		}
		args += w
	}
	return len(e.list)
}

// entries is the number of stream entries the call's events take (after
// check: the kinds count).
func (e *jobEvents) entries() int {
	n := 0
	for s := 0; s < len(e.list); s = e.entryEnd(s) {
		n++
	}
	return n
}

// check runs the events checks of a call with at least one entry, before
// the guard: the kinds to read (readKinds), then the ACL check of events
// (read and write). A call of several
// entries also reads the top (EXISTS and XINFO STREAM events FULL COUNT 1;
// the plain XINFO STREAM again when the reply nests too deep) and refuses
// as XADD would when it leaves no id for all of them (verdict.JobEvents),
// so that no XADD after the first can fail.
func (e *jobEvents) check(r *verbCall) error {
	if len(e.list) == 0 {
		return nil
	}
	if err := e.readKinds(r); err != nil {
		return err
	}
	e.key = e.derived(r.base, protocol.SuffixEvents, nil, "")
	if err := r.c.CheckKeys(host.KeyRead|host.KeyInsert|host.KeyUpdate, e.key); err != nil {
		return err
	}
	if e.entries() < 2 {
		return nil
	}
	res := r.c.Read().Cmd(host.EXISTS).Arg(e.key).
		Cmd(host.XINFO).Str("STREAM").Arg(e.key).Str("FULL").Str("COUNT").Str("1").RunAll()
	var s verdict.StreamSeen
	streamAt(res, 0, &s, &e.scratch)
	if s.Info.Err == host.ErrHostReply {
		// A consumer group's pending entries nest FULL's reply deeper
		// than a host reply may: the plain reply has the same top.
		res = r.c.Read().Cmd(host.EXISTS).Arg(e.key).Cmd(host.XINFO).Str("STREAM").Arg(e.key).RunAll()
		s = verdict.StreamSeen{}
		streamAt(res, 0, &s, &e.scratch)
	}
	return verdict.JobEvents(&s, e.entries())
}

// publish writes the call's entries, right after the guard and before the
// verb's other writes, in one write batch that stops at the first failure:
// a first XADD refused by the server (WRONGTYPE, a top at the last possible
// id) has written nothing, and its text is the call's refusal. A failure
// past the first contradicts check's read of the top.
func (e *jobEvents) publish(c *host.Call, w host.Writes) error {
	if len(e.list) == 0 {
		return nil
	}
	b := w.Write()
	e.writes(b)
	res, err := b.Run()
	if err == nil {
		return nil
	}
	if res.Len() == 1 {
		return err
	}
	return wrote(c, err)
}

// prepend adds the call's entries to b, the verb's own write batch, before
// its other writes, in place of publish: the batch stops at the first
// failure, so a first XADD refused by the server has written nothing (see
// failed). It returns the number of XADDs, the index of the verb's first
// write among the batch's replies.
func (e *jobEvents) prepend(b *host.Batch) int {
	if len(e.list) == 0 {
		return 0
	}
	e.writes(b)
	return e.entries()
}

// failed answers a failure of a write batch that began with k XADDs
// (prepend): a first XADD's refusal, the only reply, has written nothing
// and is the call's refusal; any other failure is past the guard.
func failed(c *host.Call, k int, res host.Results, err error) error {
	if k > 0 && res.Len() == 1 {
		return err
	}
	return wrote(c, err)
}

// writes adds the entries' XADDs to a write batch, one per entry
// (entryEnd), each trimmed with its first event's bound: an entry of one
// event is brand emq event <name> id <id> [field value] [kind <kind>], one
// of more has the pair n <count> after the brand, then each event's pairs.
// The server replicates each with the id it generated and its trim made
// exact. The names go as words encoded once (eventHeads), the same
// arguments as one Str each, and the values that recur as words too.
func (e *jobEvents) writes(b *host.Batch) {
	var head, field host.Words
	name, fname := "", ""
	for s, end := 0, 0; s < len(e.list); s = end {
		end = e.entryEnd(s)
		part := e.list[s:end]
		b.Cmd("XADD").Word(e.key).Words(xaddTrim).Word(part[0].bound).Words(xaddBrand)
		if len(part) > 1 {
			b.Words(xaddCount).Str(protocol.FormatInt(int64(len(part))))
		}
		for i := range part {
			x := &part[i]
			if x.name != name || head.Len() == 0 {
				name, head = x.name, eventHead(x.name)
			}
			b.Words(head)
			if x.argv > 0 {
				b.Argv(x.argv)
			} else {
				b.Arg(x.id)
			}
			if x.field != "" {
				if x.field != fname || field.Len() == 0 {
					fname, field = x.field, fieldWord(x.field)
				}
				if wordValue(x.field) {
					b.Words(field).Word(x.value)
				} else {
					b.Words(field).Arg(x.value)
				}
			}
			if x.hasKind {
				b.Words(xaddKind).Word(x.kind)
			}
		}
	}
}

// The words of an entry's XADD that do not vary.
var (
	xaddTrim  = host.NewWords("MAXLEN", "~")
	xaddBrand = host.NewWords("*", protocol.EventBrandField, protocol.EventBrand)
	xaddCount = host.NewWords(protocol.EventCountField)
	xaddKind  = host.NewWords(protocol.EventKindField)
)

// eventHeads holds the words each event of a name starts with (event
// <name> id), and fieldWords those of the events' fields, encoded once.
var eventHeads, fieldWords = func() (map[string]host.Words, map[string]host.Words) {
	heads, fields := map[string]host.Words{}, map[string]host.Words{}
	for _, name := range []string{protocol.EventAdded, protocol.EventClaimed, protocol.EventCompleted,
		protocol.EventRetrying, protocol.EventDead, protocol.EventRecovered, protocol.EventPromoted,
		protocol.EventRemoved, protocol.EventRequeued, protocol.EventProgress, protocol.EventReleased,
		protocol.EventRescheduled, protocol.EventCancelled} {
		heads[name] = host.NewWords(protocol.EventNameField, name, protocol.EventIDField)
	}
	for _, f := range []string{protocol.EventStateField, protocol.EventAttField, protocol.EventErrorField,
		protocol.EventValueField} {
		fields[f] = host.NewWords(f)
	}
	return heads, fields
}()

// wordValue reports whether the values of an event's field recur across
// calls (an attempt, a state) and go as words (Batch.Word), as the events'
// key, bound and kinds do.
func wordValue(f string) bool { return f == protocol.EventAttField || f == protocol.EventStateField }

// eventHead is event <name> id as words.
func eventHead(name string) host.Words {
	if w, ok := eventHeads[name]; ok {
		return w
	}
	return host.NewWords(protocol.EventNameField, name, protocol.EventIDField)
}

// fieldWord is an event's field as a word.
func fieldWord(f string) host.Words {
	if w, ok := fieldWords[f]; ok {
		return w
	}
	return host.NewWords(f)
}

// events is EMQ.EVENTS (internal/lua/events.lua): set the queue's events bound in
// meta events_max, or clear it. Crossings: the command, one read batch (the
// fence, HGET meta events_max), the guard, one write; decided by
// verdict.Events.
func events(c *host.Call) error {
	r, err := prelude(c, protocol.Events, exactly(1))
	if err != nil {
		return err
	}
	meta := r.keys[2]
	maxLen, err := verdict.EventsValue(r.args[0])
	if err != nil {
		return err
	}
	res := r.fenced().Cmd(host.HGET).Arg(meta).Str(protocol.MetaEventsMax).RunAll()
	set, del, err := verdict.Events(fieldAt(res, 0), fieldAt(res, 1), maxLen)
	if err != nil {
		return err
	}
	if set || del {
		w, err := c.BeginWrites()
		if err != nil {
			return err
		}
		b := w.Write()
		if set {
			b.Cmd("HSET").Arg(meta).Str(protocol.MetaEventsMax).Argv(r.argv(0))
		} else {
			b.Cmd("HDEL").Arg(meta).Str(protocol.MetaEventsMax)
		}
		if _, err := b.Run(); err != nil {
			return wrote(c, err)
		}
	}
	c.ReplyInt(1)
	return nil
}

// fieldsEvAt is fieldsAt of an HMGET of len(dst) fields then ev: dst gets
// the first ones, ev the last.
func fieldsEvAt(res host.Results, i int, dst []verdict.Field, ev *verdict.Field) error {
	v, err := res.At(i)
	if err != nil {
		return err
	}
	if v.Kind() != host.KindArray || v.Len() != len(dst)+1 {
		return host.ErrHostReply
	}
	v.Elems(func(j int, e host.Value) bool {
		if j < len(dst) {
			dst[j].Bytes, dst[j].Set, err = e.OptBytes()
		} else {
			ev.Bytes, ev.Set, err = e.OptBytes()
		}
		return err == nil
	})
	return err
}

// leaseExpired is the error of a job whose last lease expired (RECOVER).
var leaseExpired = []byte(protocol.LeaseExpired)
