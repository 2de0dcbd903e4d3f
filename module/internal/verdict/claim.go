package verdict

import (
	"slices"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// ClaimRead is a read CLAIM's verdict asks for.
type ClaimRead uint8

// CLAIM's reads, in order.
const (
	// ClaimNone: the verdict is final.
	ClaimNone ClaimRead = iota
	// ClaimFirst: one batch, GET version (the fence), HMGET meta
	// <ClaimMetaFields…>, ZRANGE pending 0 <count-1>, ZCARD active and ZCARD
	// turns. turns is checked against the caller's ACL first (read and
	// write); a denial is ZCARD turns' error, and it is not read. The
	// handler may leave turns out (Turns unmade): then ClaimTurnsSize.
	ClaimFirst
	// ClaimRate (meta sets a rate; Verdict.RateWindow is its window): the
	// ACL check of rate (read and write; a denial is Rate's error), then
	// ZRANGEBYSCORE rate (<now-window> +inf WITHSCORES LIMIT 0 1 and ZRANGE
	// rate -1 -1 WITHSCORES, at the call's clock: Rate.
	ClaimRate
	// ClaimTurnsSize (Turns was not read with ClaimFirst): the ACL check of
	// turns (a denial is Turns' error, and it is not read), then ZCARD
	// turns. The handler may read with it, in one batch, the rows of
	// pending's head as ClaimRows reads them (Rows, one per member of
	// Pending), which the verdict takes when turns is empty.
	ClaimTurnsSize
	// ClaimTurns (lanes are ready): ZRANGE turns 0 <Verdict.Count-1>
	// WITHSCORES into Ready; then the ACL check of laneinfo, lanes and each
	// lane:<l> (LaneDenied).
	ClaimTurns
	// ClaimHeads: one batch of the lanes' reads: when the lanes' Info is not
	// made yet, one HMGET laneinfo active:<l> cap:<l> paused:<l> … of every
	// lane of Ready (its reply, or its error, is each lane's Info); then per
	// lane of Ready, in order, ZRANGE lane:<l> 0 <Ask-1> (Heads, with Asked
	// set to Ask) when Ask > 0 and ZCARD lane:<l> (Waiting) when Card. The
	// handler counts the batches in LaneReads. The verdict asks again, at
	// most a few times, when a lane turned out to hold fewer jobs than the
	// turns its first read allowed for.
	ClaimHeads
	// ClaimRows: HMGET <row> att data for each of Members that is a
	// JobMember, in order, checked against the caller's ACL first (a denied
	// row is its read's error, and it and the rows after it are not read);
	// with lanes, ZCARD lanes too (Registry).
	ClaimRows
)

// ClaimMetaFields are the meta fields CLAIM reads, in order.
var ClaimMetaFields = [...]string{
	protocol.MetaPaused, protocol.MetaRateMax, protocol.MetaRateWindow,
	protocol.MetaTurn, protocol.MetaPendingTurn, protocol.MetaLaneWait,
	protocol.MetaJobFields, protocol.MetaRowOpts, protocol.MetaLaneSets,
}

// The indexes of ClaimMetaFields.
const (
	claimPaused = iota
	claimRateMax
	claimRateWindow
	claimTurn
	claimPendingTurn
	claimLaneWait
	// ClaimMetaJobFields is meta jobfields' index, which the handler reads
	// (ClaimRowFields): the verdict does not.
	ClaimMetaJobFields
	// ClaimMetaRowOpts is meta rowopts' index, which the handler reads (a
	// row's ev is read unless it is 0): the verdict does not.
	ClaimMetaRowOpts
	// ClaimMetaLaneSets is meta lanesets' index, which the handler reads
	// (which laneinfo fields it asks for): the verdict takes the lanes'
	// settings as read.
	ClaimMetaLaneSets
)

// ClaimLane is one lane of turns as CLAIM reads it.
//
// Both executors read a lane's head, one member more than the turns they
// expect to give (Ask), which tells the size exactly when the set holds
// fewer, and "more than Asked-1" otherwise: all the turns and the writes
// need. The spec's first allocation knows laneinfo's settings; the native
// one reads laneinfo with the heads, so it guesses every lane ready, and
// reads again where that was wrong: the turns are the same. A lane the
// first allocation gives no turn has its size read (Card), so every lane
// key is read, and typed, before any turn is given, as in the spec.
type ClaimLane struct {
	// Name and Score are its member and score in turns.
	Name  []byte
	Score float64
	// Info is laneinfo's active:<l> cap:<l> paused:<l>; Waiting ZCARD
	// lane:<l>, made when read (Card).
	Info    Reply[[3]Field]
	Waiting Reply[int64]
	// Heads is ZRANGE lane:<l> 0 <Asked-1>, made when read (Ask).
	Heads Reply[[][]byte]
	Asked int64
	// Ask and Card are set by the verdict with Need ClaimHeads: the reads
	// of this lane the batch makes.
	Ask  int64
	Card bool

	// Set by the verdict: State is the lane as read (State.Waiting is the
	// size, or a lower bound above Taken when the size is not known);
	// Stale, not ready by these reads (it gets no turn and leaves turns);
	// Taken and Last its turns (FairParticipant).
	State       LaneState
	Stale       bool
	Taken, Last int64
	// Drained: its turns take every job it holds (its size known): the
	// lane key is deleted with the other drained lanes' in one DEL, in
	// place of its ZPOPMIN.
	Drained bool
}

// maxLaneReads bounds ClaimHeads batches: the first; one more for lanes
// found short or given turns by the settings; one with every size not yet
// known (then the allocation is final); one for the heads it lengthens.
const maxLaneReads = 4

// ClaimSeen is what CLAIM has read so far.
type ClaimSeen struct {
	Version Reply[Field]
	Meta    Reply[[len(ClaimMetaFields)]Field]
	// Rate is the rate log as ClaimRate read it.
	Rate Reply[RateLog]
	// Pending are the members at the head of pending, in order.
	Pending Reply[[][]byte]
	Active  Reply[int64]
	Turns   Reply[int64]
	// Ready is ZRANGE turns WITHSCORES with each lane's reads; LaneDenied,
	// the ACL refuses laneinfo, lanes or a lane:<l>.
	Ready      Reply[[]ClaimLane]
	LaneDenied bool
	// LaneReads counts the ClaimHeads batches made.
	LaneReads int
	// Registry is ZCARD lanes.
	Registry Reply[int64]
	// PendingRows: Rows were read with ClaimTurnsSize, for pending's head;
	// they are dropped when lanes are ready.
	PendingRows bool
	// Members are the jobs the claim takes, in turn order: pending's head
	// without lanes; with lanes the verdict fills it (its array is reused)
	// from the heads given turns. From is each member's participant: -1
	// pending, else its lane's index in Ready.
	Members [][]byte
	From    []int32
	// Rows holds each member's att (HMGET's first field), one entry per
	// member of Members; the entries of members that are not ids stay
	// unmade.
	Rows []Reply[Field]
	// Jobs, Order, Parts, Live, Who, Next and Scores are scratch for the
	// verdict (their arrays are reused).
	Jobs      []ClaimJob
	Order     []int32
	Parts     []FairParticipant
	Live, Who []int32
	Next      []int64
	Scores    []float64
	Exact     []bool
	Dups      []uint64
}

// ClaimJob is one job the claim takes.
type ClaimJob struct {
	// Member is its index in ClaimSeen.Members.
	Member int
	// Attempt is HINCRBY <row> att 1's predicted reply: the attempt token,
	// and the att the native executor writes (HSET row … att <Attempt>).
	Attempt int64
}

// ClaimVerdict is what CLAIM writes and replies.
type ClaimVerdict struct {
	// Empty: the queue is paused or nothing is ready; reply the empty array
	// and write nothing.
	Empty bool
	// Count is the count after the rate limit's cut.
	Count int64
	// Jobs are the members whose row is present, in turn order: each gets
	// att + 1, state active and a place in active. Every member of Members
	// is popped; the others are dropped.
	Jobs []ClaimJob
	// Rate: a rate is set; after claiming k jobs, ZREMRANGEBYSCORE rate
	// -inf <RateNow-RateWindow>, ZADD rate <RateAt> <RateNext>:<k>,
	// PEXPIREAT rate <RateAt+RateWindow>.
	Rate                                  bool
	RateNext, RateNow, RateAt, RateWindow int64

	// Lanes: lanes were ready (ZCARD turns > 0): the writes below follow.
	Lanes bool
	// PendingTaken is ZPOPMIN pending's count (without lanes: the whole
	// head read); PendingLast the last turn of pending (pturn <Turn +
	// PendingLast> when it was served).
	PendingTaken, PendingLast int64
	// Turn is meta's turn as read and Given the turns given: HSET meta turn
	// <Turn+Given>.
	Turn, Given int64
	// SetWait: HSET meta … lanewait <Wait>.
	SetWait bool
	Wait    int64
}

// ClaimStep is CLAIM's verdict, a refusal, or the next read it needs. With
// Need ClaimTurns or later, Verdict.Count is set.
type ClaimStep struct {
	Need    ClaimRead
	Err     error
	Verdict ClaimVerdict
}

// Claim decides EMQ.CLAIM of count jobs, in the order of internal/lua/claim.lua: the
// fence; meta (paused exactly "1": empty); the rate log when a rate is
// set (EMQRATE, or count cut); the head of pending; turns (NOPERM,
// WRONGTYPE; both empty: empty). Without lanes: each row in pending order
// (WRONGTYPE; att predicted for HINCRBY; no att: the member is dropped),
// then active typed. With lanes: the ready lanes and their reads (stale
// lanes get no turn), the turns given (none: empty), each served lane's
// heads, the rows in turn order, then active and lanes typed.
func Claim(count int64, s *ClaimSeen) ClaimStep {
	if !s.Version.Made {
		return ClaimStep{Need: ClaimFirst}
	}
	if err := Fence(s.Version); err != nil {
		return ClaimStep{Err: err}
	}
	if s.Meta.Err != nil {
		return ClaimStep{Err: s.Meta.Err}
	}
	meta := &s.Meta.Val
	if meta[claimPaused].Is("1") {
		return ClaimStep{Verdict: ClaimVerdict{Empty: true}}
	}
	v := ClaimVerdict{Count: count}
	rmax := rowInt(meta[claimRateMax])
	window := rowInt(meta[claimRateWindow])
	if rmax > 0 && window > 0 {
		if !s.Rate.Made {
			return ClaimStep{Need: ClaimRate, Verdict: ClaimVerdict{RateWindow: window}}
		}
		if s.Rate.Err != nil {
			return ClaimStep{Err: s.Rate.Err}
		}
		used, next, at, wait := RateUsed(rmax, window, s.Rate.Val)
		if wait > 0 {
			return ClaimStep{Err: refusal(protocol.ErrRateLimited(wait))}
		}
		v.Rate, v.RateNext, v.RateNow, v.RateAt, v.RateWindow = true, next, s.Rate.Val.Now, at, window
		v.Count = min(count, rmax-used)
	}
	if s.Pending.Err != nil {
		return ClaimStep{Err: s.Pending.Err}
	}
	if int64(len(s.Pending.Val)) > v.Count {
		s.Pending.Val = s.Pending.Val[:v.Count] // ZRANGE pending 0 <cut-1>: a prefix
	}
	if !s.Turns.Made {
		return ClaimStep{Need: ClaimTurnsSize, Verdict: v}
	}
	if s.Turns.Err != nil {
		return ClaimStep{Err: s.Turns.Err}
	}
	if s.Turns.Val == 0 {
		return claimPending(s, v)
	}
	return claimLanes(s, v)
}

// claimPending is CLAIM without lanes: pending's head, in order.
func claimPending(s *ClaimSeen, v ClaimVerdict) ClaimStep {
	if len(s.Pending.Val) == 0 {
		return ClaimStep{Verdict: ClaimVerdict{Empty: true}}
	}
	// a copy, in Members' own array: the next command reuses both arrays
	s.Members = append(s.Members[:0], s.Pending.Val...)
	v.PendingTaken = int64(len(s.Members))
	return claimRows(s, v)
}

// claimRows is the rows' verdict, in Members order, then active typed (and
// lanes, with lanes).
func claimRows(s *ClaimSeen, v ClaimVerdict) ClaimStep {
	members := s.Members
	if len(s.Rows) < len(members) {
		return ClaimStep{Need: ClaimRows, Verdict: v}
	}
	jobs := s.Jobs[:0]
	for i, m := range members {
		if !JobMember(m) {
			continue
		}
		row := s.Rows[i]
		if !row.Made {
			return ClaimStep{Need: ClaimRows, Verdict: v}
		}
		if row.Err != nil {
			return ClaimStep{Err: row.Err}
		}
		if !row.Val.Set {
			continue
		}
		att, err := predict(row.Val, 1)
		if err != nil {
			return ClaimStep{Err: err}
		}
		jobs = append(jobs, ClaimJob{Member: i, Attempt: att})
	}
	if v.Lanes && len(jobs) > 1 {
		repeats(s, jobs)
	}
	s.Jobs = jobs
	if s.Active.Err != nil {
		return ClaimStep{Err: s.Active.Err}
	}
	if v.Lanes {
		if !s.Registry.Made {
			return ClaimStep{Need: ClaimRows, Verdict: v}
		}
		if s.Registry.Err != nil {
			return ClaimStep{Err: s.Registry.Err}
		}
	}
	v.Jobs = jobs
	return ClaimStep{Verdict: v}
}

// claimLanes is CLAIM with lanes ready: fair claiming.
func claimLanes(s *ClaimSeen, v ClaimVerdict) ClaimStep {
	if s.PendingRows {
		s.Rows, s.PendingRows = s.Rows[:0], false
	}
	if !s.Ready.Made {
		return ClaimStep{Need: ClaimTurns, Verdict: v}
	}
	if s.Ready.Err != nil {
		return ClaimStep{Err: s.Ready.Err}
	}
	lanes := s.Ready.Val
	if len(lanes) > 0 && s.LaneDenied {
		return ClaimStep{Err: refusal(protocol.ErrNoPerm)}
	}
	v.Lanes = true
	meta := &s.Meta.Val
	v.Turn = rowInt(meta[claimTurn])
	pturn := rowInt(meta[claimPendingTurn])
	scores := s.Scores[:0]
	for i := range lanes {
		scores = append(scores, lanes[i].Score)
	}
	s.Scores = scores
	place := -1
	if len(s.Pending.Val) > 0 {
		place = PendingPlace(pturn, scores)
	}
	if len(lanes) > 0 && !lanes[0].Info.Made {
		// the first batch: the turns every lane would get if all were ready
		// without a cap, each lane's head one member longer, and the size of
		// each lane given no turn
		claimParts(s, v, place, true)
		for i := range lanes {
			l := &lanes[i]
			l.Ask, l.Card = 0, l.Taken == 0
			if l.Taken > 0 {
				l.Ask = l.Taken + 1
			}
		}
		return ClaimStep{Need: ClaimHeads, Verdict: v}
	}
	if err := claimLaneStates(s); err != nil {
		return ClaimStep{Err: err}
	}
	parts := claimParts(s, v, place, false)
	if step, again := claimReadAgain(s); again {
		if step.Err == nil {
			step.Verdict = v
		}
		return step
	}
	for i := range lanes {
		l := &lanes[i]
		l.Drained = l.Taken > 0 && s.Exact[i] && l.State.Waiting == l.Taken
	}
	v.Given = int64(len(s.Order))
	if v.Given == 0 {
		return ClaimStep{Verdict: ClaimVerdict{Empty: true}}
	}
	claimTaken(s, &v, parts)
	claimMembers(s, parts)
	return claimRows(s, v)
}

// claimLaneStates judges the lanes' reads, in order: laneinfo, then the
// lane's set (every lane's set was read by the first batch); it sets each
// lane's State and Stale, and s.Exact: whether its size is known.
func claimLaneStates(s *ClaimSeen) error {
	lanes := s.Ready.Val
	exact := s.Exact[:0]
	for i := range lanes {
		l := &lanes[i]
		if l.Info.Err != nil {
			return l.Info.Err
		}
		if l.Waiting.Made && l.Waiting.Err != nil {
			return l.Waiting.Err
		}
		if l.Heads.Made && l.Heads.Err != nil {
			return l.Heads.Err
		}
		var w int64
		known := true
		switch {
		case l.Waiting.Made:
			w = l.Waiting.Val
		case l.Heads.Made && int64(len(l.Heads.Val)) < l.Asked:
			w = int64(len(l.Heads.Val))
		case l.Heads.Made:
			w, known = l.Asked, false
		default:
			return errHostReply
		}
		l.State = ReadLane(l.Info.Val, w)
		l.Stale = !l.State.Ready()
		exact = append(exact, known)
	}
	s.Exact = exact
	return nil
}

// claimReadAgain reports whether the lanes need reading again: a lane
// served must have its head read as far as its turns, and its size known
// beyond them; else read again (every size, from the third batch on, so
// the next allocation is final). The step is the read, or the refusal when
// the reads are spent.
func claimReadAgain(s *ClaimSeen) (ClaimStep, bool) {
	lanes, exact := s.Ready.Val, s.Exact
	more := false
	for i := range lanes {
		l := &lanes[i]
		l.Ask, l.Card = 0, false
		if l.Taken == 0 {
			continue
		}
		switch {
		case exact[i] && (!l.Heads.Made || int64(len(l.Heads.Val)) < l.Taken):
			l.Ask, more = l.Taken, true
		case !exact[i] && l.Asked <= l.Taken:
			l.Ask, more = l.Taken+1, true
		}
	}
	if !more {
		return ClaimStep{}, false
	}
	if s.LaneReads >= maxLaneReads {
		return ClaimStep{Err: errHostReply}, true
	}
	if s.LaneReads >= 2 {
		for i := range lanes {
			lanes[i].Card = !exact[i] && !lanes[i].Stale
		}
	}
	return ClaimStep{Need: ClaimHeads}, true
}

// claimTaken sets what the jobs without a lane take (pending's part) and
// meta lanewait's new value, the jobs the lanes took off it.
func claimTaken(s *ClaimSeen, v *ClaimVerdict, parts []FairParticipant) {
	for k, p := range parts {
		if s.Who[k] < 0 {
			v.PendingTaken, v.PendingLast = p.Taken, p.Last
		}
	}
	lanes := s.Ready.Val
	var taken int64
	for i := range lanes {
		taken += lanes[i].Taken
	}
	wait := rowInt(s.Meta.Val[claimLaneWait])
	if w := max(0, wait-taken); w != wait {
		v.SetWait, v.Wait = true, w
	}
}

// claimMembers lists the members in turn order (s.Members), with the lane
// each comes from (s.From, -1 for pending).
func claimMembers(s *ClaimSeen, parts []FairParticipant) {
	lanes, who := s.Ready.Val, s.Who
	members, from := s.Members[:0], s.From[:0]
	next := s.Next[:0]
	for range parts {
		next = append(next, 0)
	}
	s.Next = next
	for _, k := range s.Order {
		j := next[k]
		next[k]++
		if who[k] < 0 {
			members = append(members, s.Pending.Val[j])
		} else {
			members = append(members, lanes[who[k]].Heads.Val[j])
		}
		from = append(from, who[k])
	}
	s.Members, s.From = members, from
}

// claimParts orders the participants, pending (at place, when its head is
// not empty) and the lanes that are not stale, by turn, gives the turns
// (s.Order) and sets each lane's Taken and Last. A lane's supply is its
// jobs, capped by cap − active; a lane whose size is not known yet (or, for
// guess, every lane) counts as holding count jobs, which no claim exhausts.
func claimParts(s *ClaimSeen, v ClaimVerdict, place int, guess bool) []FairParticipant {
	lanes := s.Ready.Val
	// parts[k]: participant k; who[k] is -1 for pending, else the lane
	parts := s.Parts[:0]
	who := s.Who[:0]
	for i := 0; i <= len(lanes); i++ {
		if i == place {
			parts = append(parts, FairParticipant{Supply: int64(len(s.Pending.Val))})
			who = append(who, -1)
		}
		if i == len(lanes) {
			break
		}
		l := &lanes[i]
		l.Taken, l.Last = 0, 0
		supply := v.Count
		if !guess {
			if l.Stale {
				continue
			}
			if s.Exact[i] {
				supply = l.State.Waiting
			}
			if l.State.Cap > 0 {
				supply = min(supply, l.State.Cap-l.State.Active)
			}
		}
		parts = append(parts, FairParticipant{Supply: supply})
		who = append(who, int32(i))
	}
	s.Parts, s.Who = parts, who
	s.Order, s.Live = FairTurns(parts, v.Count, s.Order, s.Live)
	for k, p := range parts {
		if who[k] >= 0 {
			l := &lanes[who[k]]
			l.Taken, l.Last = p.Taken, p.Last
		}
	}
	return parts
}

// repeats numbers the attempts of a job taken more than once by one claim
// (its id both in pending and in a lane, or in two lanes, behind the verbs'
// back): the Lua executor's HINCRBYs run one after another, so each
// occurrence after the first gets the attempt after the one before it. The
// refusals stay those of the row as read, which every occurrence shares.
func repeats(s *ClaimSeen, jobs []ClaimJob) {
	// id << 20 | job index: sorted, equal ids are adjacent in job order
	keys := s.Dups[:0]
	for k, j := range jobs {
		var id uint64
		for _, c := range s.Members[j.Member] {
			id = id*10 + uint64(c-'0')
		}
		keys = append(keys, id<<20|uint64(k))
	}
	slices.Sort(keys)
	s.Dups = keys
	for i := 1; i < len(keys); i++ {
		if keys[i]>>20 == keys[i-1]>>20 {
			prev, k := &jobs[keys[i-1]&(1<<20-1)], &jobs[keys[i]&(1<<20-1)]
			k.Attempt = prev.Attempt + 1
		}
	}
}

// rowInt reads a meta or rate field like a row's number.
func rowInt(f Field) int64 { return grammar.RowInt(f.Bytes, f.Set, grammar.MaxRowInt) }

// errHostReply is a host reply that contradicts what was read before it in
// the same command.
var errHostReply = refusal(protocol.ErrHostReply)
