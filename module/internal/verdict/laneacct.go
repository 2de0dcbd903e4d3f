package verdict

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/grammar"
)

// This file is the lane accounting (docs/PROTOCOL.md, "Lane accounting"):
// the one procedure every verb that changes a lane's waiting or active count
// runs, for the lanes of the call in the order the verb first meets them.

// LaneName is a row's lane field as read: 1..MaxLaneName bytes is its lane,
// anything else (absent, empty, too long) reads as no lane (nil).
func LaneName(f Field) []byte {
	if !f.Set || !protocol.ValidLaneName(string(f.Bytes)) {
		return nil
	}
	return f.Bytes
}

// LaneReady reports whether a lane can be served: not paused, jobs waiting,
// and no cap (0) or fewer active jobs than the cap.
func LaneReady(paused bool, waiting, active, cap int64) bool {
	return !paused && waiting > 0 && (cap == 0 || active < cap)
}

// LaneSettings are a lane's settings as laneinfo holds them.
type LaneSettings struct {
	Cap    int64 // 0: no cap
	Paused bool
}

// LaneState is a lane as HMGET laneinfo active:<l> cap:<l> paused:<l> and
// ZCARD lane:<l> read it.
type LaneState struct {
	Waiting, Active int64
	LaneSettings
	// CapSet: the cap:<l> field is present (whatever its value).
	CapSet bool
}

// ReadLane reads a lane's state from its laneinfo fields (active, cap,
// paused) and its lane set's size: the numbers like a row's, paused when
// exactly "1".
func ReadLane(info [3]Field, waiting int64) LaneState {
	return LaneState{
		Waiting:      waiting,
		Active:       grammar.RowInt(info[0].Bytes, info[0].Set, grammar.MaxRowInt),
		LaneSettings: LaneSettings{Cap: grammar.RowInt(info[1].Bytes, info[1].Set, grammar.MaxRowInt), Paused: info[2].Is("1")},
		CapSet:       info[1].Set,
	}
}

// Ready reports whether the lane in this state can be served.
func (l LaneState) Ready() bool { return LaneReady(l.Paused, l.Waiting, l.Active, l.Cap) }

// LaneChange is one lane of a call: what was read, and the change the call
// makes.
type LaneChange struct {
	// Info is HMGET laneinfo active:<l> cap:<l> paused:<l>; Waiting is ZCARD
	// lane:<l>.
	Info    Reply[[3]Field]
	Waiting Reply[int64]
	// DW and DA change the lane's waiting and active counts.
	DW, DA int64
	// CapTo (with SetCap, LANECAP) and PausedTo (with SetPaused,
	// LANEPAUSE and LANERESUME) are the lane's settings after the call;
	// else the stored ones stay.
	SetCap, SetPaused bool
	CapTo             int64
	PausedTo          bool
}

// LaneSeen is what the lane accounting has read for the lanes of a call.
type LaneSeen struct {
	// Denied: the caller's ACL refuses one of laneinfo, lanes, turns, meta,
	// signal or a lane:<l>; nothing of the lanes is read.
	Denied bool
	// Lanes are the call's lanes, each once, in the order the verb first met
	// them.
	Lanes []LaneChange
	// Meta is HMGET meta turn lanewait; Turns ZCARD turns, Registry ZCARD
	// lanes, Signal LLEN signal.
	Meta     Reply[[2]Field]
	Turns    Reply[int64]
	Registry Reply[int64]
	Signal   Reply[int64]
}

// LaneEffect is what the accounting writes for one lane.
type LaneEffect struct {
	// Before and After are the lane's state read and after the call.
	Before, After LaneState
	// SetActive: HSET laneinfo active:<l> <After.Active>; DelActive: HDEL
	// laneinfo active:<l>.
	SetActive, DelActive bool
	// Register: ZADD lanes 0 <l>; Unregister: ZREM lanes <l>.
	Register, Unregister bool
	// Enter: ZADD turns <Turn> <l> (it became ready); Leave: ZREM turns <l>
	// (it stopped being ready).
	Enter, Leave bool
}

// LaneVerdict is what the lane accounting writes.
type LaneVerdict struct {
	// Effects has one entry per lane of LaneSeen.Lanes.
	Effects []LaneEffect
	// Turn is meta's turn: the score of a lane entering turns.
	Turn int64
	// SetWait: HSET meta lanewait <Wait>.
	SetWait bool
	Wait    int64
	// Signal: a lane became ready while turns was empty; the call ends with
	// signal-push. SignalLen is LLEN signal, read before the writes.
	Signal    bool
	SignalLen int64
	// Any: at least one write.
	Any bool
}

// LaneAccount decides the lane accounting over what it read, in its read
// order: the ACL check (NOPERM), per lane its laneinfo fields and its lane
// set (WRONGTYPE), then meta, turns, lanes and signal (WRONGTYPE). effects is
// memory for the verdict's Effects.
func LaneAccount(s *LaneSeen, effects []LaneEffect) (LaneVerdict, error) {
	if s.Denied {
		return LaneVerdict{}, refusal(protocol.ErrNoPerm)
	}
	effects = effects[:0]
	var dwsum int64
	for i := range s.Lanes {
		l := &s.Lanes[i]
		if l.Info.Err != nil {
			return LaneVerdict{}, l.Info.Err
		}
		if l.Waiting.Err != nil {
			return LaneVerdict{}, l.Waiting.Err
		}
		before := ReadLane(l.Info.Val, l.Waiting.Val)
		after := before
		after.Waiting = max(0, before.Waiting+l.DW)
		after.Active = max(0, before.Active+l.DA)
		if l.SetCap {
			after.Cap = l.CapTo
		}
		if l.SetPaused {
			after.Paused = l.PausedTo
		}
		dwsum += l.DW
		effects = append(effects, laneEffect(before, after))
	}
	for _, r := range [...]error{s.Meta.Err, s.Turns.Err, s.Registry.Err, s.Signal.Err} {
		if r != nil {
			return LaneVerdict{}, r
		}
	}
	v := LaneVerdict{
		Effects:   effects,
		Turn:      grammar.RowInt(s.Meta.Val[0].Bytes, s.Meta.Val[0].Set, grammar.MaxRowInt),
		SignalLen: s.Signal.Val,
	}
	wait := grammar.RowInt(s.Meta.Val[1].Bytes, s.Meta.Val[1].Set, grammar.MaxRowInt)
	if w := max(0, wait+dwsum); w != wait {
		v.SetWait, v.Wait, v.Any = true, w, true
	}
	for _, e := range effects {
		if e.Enter && s.Turns.Val == 0 {
			v.Signal = true
		}
		if e.SetActive || e.DelActive || e.Register || e.Unregister || e.Enter || e.Leave {
			v.Any = true
		}
	}
	return v, nil
}

// laneEffect is the writes that take a lane from before to after.
func laneEffect(before, after LaneState) LaneEffect {
	e := LaneEffect{Before: before, After: after}
	if after.Active != before.Active {
		e.SetActive, e.DelActive = after.Active > 0, after.Active == 0
	}
	had, has := before.Waiting+before.Active > 0, after.Waiting+after.Active > 0
	e.Register, e.Unregister = has && !had, had && !has
	was, is := before.Ready(), after.Ready()
	e.Enter, e.Leave = is && !was, was && !is
	return e
}
