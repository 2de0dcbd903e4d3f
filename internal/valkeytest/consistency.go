package valkeytest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// QueueProblems checks queue's dataset on s (the node that holds it) and
// returns what is inconsistent, or nothing:
//   - every job id is in at most one of pending (or a lane), delayed,
//     active, dead, waiting (parents) and completed (retained jobs);
//   - every member of a set has a row whose state names that set;
//   - every row is in the set its state names, and every logs list has its
//     row;
//   - a waiting parent's deps is the number of its children (members of its
//     kids set whose parent field names it: REQUEUE detaches a child) not
//     finished (pending, delayed, active or waiting); an unfinished child's
//     parent row exists;
//   - meta rowopts 0 or absent has no row hold lane, parent, deps, keep,
//     wait or ev, and rowopts 2 no row hold one of those but ev
//     (docs/PROTOCOL.md, "The queue's row flag": COMPLETE, COMPLETEMANY and
//     CLAIM skip them);
//   - the counters add up: added = completed + removed + trimmed + the jobs
//     in pending, the lanes, delayed, active, dead and waiting. A retained
//     completed job is counted once, by completed: it is not counted as in
//     a set, and REMOVE and TRIM do not count it again (trimmed counts the
//     dead jobs trimmed).
func QueueProblems(ctx context.Context, s *valkeyserver.Server, queue string) ([]string, error) {
	k := protocol.KeysOf(queue)
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	sets := []struct{ state, key string }{
		{protocol.StatePending, k.Pending}, {protocol.StateDelayed, k.Delayed},
		{protocol.StateActive, k.Active}, {protocol.StateDead, k.Dead},
		{protocol.StateWaiting, k.Fixed(protocol.SuffixWaiting)},
		{protocol.StateCompleted, k.Fixed(protocol.SuffixCompleted)},
	}
	in := map[string]string{} // id -> its set's state
	total := int64(0)
	for _, set := range sets {
		v, err := s.Do(ctx, "ZRANGE", set.key, "0", "-1")
		if err != nil {
			return nil, err
		}
		members, _ := v.([]any)
		if set.state != protocol.StateCompleted {
			total += int64(len(members))
		}
		for _, m := range members {
			id := fmt.Sprint(m)
			if other, ok := in[id]; ok {
				bad("job %s is in %s and %s", id, other, set.state)
			}
			in[id] = set.state
		}
	}

	// the lanes' sets hold pending jobs too
	laneOf := map[string]string{} // id -> the lane set it is in
	waiting := map[string]int64{}
	laneKeys, err := scanKeys(ctx, s, k.Base+protocol.SuffixLane+"*")
	if err != nil {
		return nil, err
	}
	for _, key := range laneKeys {
		lane := strings.TrimPrefix(key, k.Base+protocol.SuffixLane)
		v, err := s.Do(ctx, "ZRANGE", key, "0", "-1")
		if err != nil {
			return nil, err
		}
		members, _ := v.([]any)
		total += int64(len(members))
		waiting[lane] = int64(len(members))
		for _, m := range members {
			id := fmt.Sprint(m)
			if other, ok := in[id]; ok {
				bad("job %s is in lane %q and %s", id, lane, other)
			}
			in[id], laneOf[id] = protocol.StatePending, lane
		}
	}

	rows := map[string]bool{}
	var logs []string
	jobKeys, err := scanKeys(ctx, s, k.Base+protocol.SuffixJob+"*")
	if err != nil {
		return nil, err
	}
	for _, key := range jobKeys {
		id := strings.TrimPrefix(key, k.Base+protocol.SuffixJob)
		switch {
		case strings.HasSuffix(id, protocol.SuffixLogs):
			logs = append(logs, strings.TrimSuffix(id, protocol.SuffixLogs))
		case strings.HasSuffix(id, protocol.SuffixKids) || strings.HasSuffix(id, protocol.SuffixResults) ||
			strings.HasSuffix(id, protocol.SuffixFailures):
		default:
			rows[id] = true
		}
	}
	flag, err := s.Do(ctx, "HGET", k.Meta, protocol.MetaRowOpts)
	if err != nil {
		return nil, err
	}
	shown := "absent"
	if f, ok := flag.(string); ok {
		shown = strconv.Quote(f)
	}
	// the row fields the flag says no row holds, after state lane parent deps
	var skipped []string
	switch flag {
	case nil, protocol.RowOptsOff: // absent: no job was ever added
		skipped = []string{protocol.FieldLane, protocol.FieldParent, protocol.FieldDeps, protocol.FieldKeep, protocol.FieldWait, protocol.FieldEvents}
	case protocol.RowOptsEvents:
		skipped = []string{protocol.FieldLane, protocol.FieldParent, protocol.FieldDeps, protocol.FieldKeep, protocol.FieldWait}
	}
	active := map[string]int64{}
	states, parents, deps := map[string]string{}, map[string]string{}, map[string]string{}
	for id := range rows {
		v, err := s.Do(ctx, "HMGET", k.Job(id), protocol.FieldState, protocol.FieldLane, protocol.FieldParent, protocol.FieldDeps,
			protocol.FieldKeep, protocol.FieldWait, protocol.FieldEvents, protocol.FieldAttempts)
		if err != nil {
			return nil, err
		}
		f, _ := v.([]any)
		if len(f) != 8 {
			return nil, fmt.Errorf("HMGET replied %v", v)
		}
		if f[0] == nil && f[7] != nil {
			f[0] = protocol.DefaultState // a present row without state is pending
		}
		for j, field := range []string{protocol.FieldLane, protocol.FieldParent, protocol.FieldDeps, protocol.FieldKeep, protocol.FieldWait, protocol.FieldEvents} {
			if f[1+j] != nil && slices.Contains(skipped, field) {
				bad("meta rowopts %s, but job %s holds %s", shown, id, field)
			}
		}
		states[id] = fmt.Sprint(f[0])
		if p, ok := f[2].(string); ok {
			parents[id] = p
		}
		if d, ok := f[3].(string); ok {
			deps[id] = d
		}
		state, set := fmt.Sprint(f[0]), in[id]
		lane, laned := f[1].(string)
		switch {
		case set == "":
			bad("job %s (state %s) is in no set", id, state)
		case state != set:
			bad("job %s is in %s but its state is %s", id, set, state)
		case state == protocol.StatePending && laned && laneOf[id] != lane:
			bad("job %s of lane %q waits in pending or another lane (%q)", id, lane, laneOf[id])
		case state == protocol.StatePending && !laned && laneOf[id] != "":
			bad("job %s without a lane waits in lane %q", id, laneOf[id])
		}
		if state == protocol.StateActive && laned {
			active[lane]++
		}
	}
	if err := laneProblems(ctx, s, k, waiting, active, bad); err != nil {
		return nil, err
	}
	for id, set := range in {
		if !rows[id] {
			bad("job %s is in %s without a row", id, set)
		}
	}
	for _, id := range logs {
		if !rows[id] {
			bad("job %s has logs without a row", id)
		}
	}
	if err := flowProblems(ctx, s, k, states, parents, deps, bad); err != nil {
		return nil, err
	}

	counter := func(name string) int64 {
		v, err := s.Do(ctx, "HGET", k.Stats, name)
		if err != nil || v == nil {
			return 0
		}
		n, _ := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		return n
	}
	added, completed, removed, trimmed := counter("added"), counter("completed"), counter("removed"), counter("trimmed")
	if added != completed+removed+trimmed+total {
		bad("counters: added %d, but completed %d + removed %d + trimmed %d + in the sets %d = %d",
			added, completed, removed, trimmed, total, completed+removed+trimmed+total)
	}
	return problems, nil
}

// unfinished reports whether a job in state is not finished: its parent
// still counts it in deps.
func unfinished(state string) bool {
	switch state {
	case protocol.StatePending, protocol.StateDelayed, protocol.StateActive, protocol.StateWaiting:
		return true
	}
	return false
}

// flowProblems checks the flows: each waiting parent's deps against its
// unfinished children, and each unfinished child's parent.
func flowProblems(ctx context.Context, s *valkeyserver.Server, k protocol.Keys, states, parents, deps map[string]string, bad func(string, ...any)) error {
	for id, state := range states {
		if p, ok := parents[id]; ok && protocol.ValidJobID(p) && unfinished(state) {
			if _, ok := states[p]; !ok {
				bad("job %s (state %s) has parent %s without a row", id, state, p)
			}
		}
		if state != protocol.StateWaiting {
			continue
		}
		v, err := s.Do(ctx, "ZRANGE", k.Kids(id), "0", "-1")
		if err != nil {
			return err
		}
		kids, _ := v.([]any)
		open := 0
		for _, m := range kids {
			if c := fmt.Sprint(m); parents[c] == id && unfinished(states[c]) {
				open++
			}
		}
		if deps[id] != strconv.Itoa(open) {
			bad("parent %s has deps %q, %d children are not finished", id, deps[id], open)
		}
	}
	return nil
}

// laneProblems checks the lanes' bookkeeping against the jobs: each lane's
// active count, the lanes with jobs, the ready lanes in turns, and the
// number of jobs waiting in lanes.
func laneProblems(ctx context.Context, s *valkeyserver.Server, k protocol.Keys, waiting, active map[string]int64, bad func(string, ...any)) error {
	v, err := s.Do(ctx, "HGETALL", k.Fixed(protocol.SuffixLaneInfo))
	if err != nil {
		return err
	}
	info := map[string]string{}
	flat, _ := v.([]any)
	for i := 0; i+1 < len(flat); i += 2 {
		info[fmt.Sprint(flat[i])] = fmt.Sprint(flat[i+1])
	}
	num := func(field string) int64 {
		n, _ := strconv.ParseInt(info[field], 10, 64)
		return n
	}
	names := map[string]bool{}
	for l := range waiting {
		names[l] = true
	}
	for l := range active {
		names[l] = true
	}
	for field := range info {
		if l, ok := strings.CutPrefix(field, protocol.FieldLaneActive); ok {
			names[l] = true
		}
	}
	members := func(key string) (map[string]bool, error) {
		v, err := s.Do(ctx, "ZRANGE", key, "0", "-1")
		out := map[string]bool{}
		list, _ := v.([]any)
		for _, m := range list {
			out[fmt.Sprint(m)] = true
		}
		return out, err
	}
	registry, err := members(k.Fixed(protocol.SuffixLanes))
	if err != nil {
		return err
	}
	turns, err := members(k.Fixed(protocol.SuffixTurns))
	if err != nil {
		return err
	}
	for l := range registry {
		names[l] = true
	}
	for l := range turns {
		names[l] = true
	}
	var wait int64
	for l := range names {
		w, a, c := waiting[l], active[l], num(protocol.FieldLaneCap+l)
		wait += w
		if got := num(protocol.FieldLaneActive + l); got != a {
			bad("lane %q counts %d active, %d are", l, got, a)
		}
		if registry[l] != (w+a > 0) {
			bad("lane %q with %d waiting and %d active is listed in lanes: %v", l, w, a, registry[l])
		}
		ready := info[protocol.FieldLanePaused+l] != "1" && w > 0 && (c == 0 || a < c)
		if turns[l] != ready {
			bad("lane %q (waiting %d, active %d, cap %d) ready %v but in turns %v", l, w, a, c, ready, turns[l])
		}
	}
	v, err = s.Do(ctx, "HGET", k.Meta, protocol.MetaLaneWait)
	if err != nil {
		return err
	}
	got := int64(0)
	if v != nil {
		got, _ = strconv.ParseInt(fmt.Sprint(v), 10, 64)
	}
	if got != wait {
		bad("meta lanewait %d, %d jobs wait in lanes", got, wait)
	}
	// meta lanesets (absent: 0) is the number of lanes with a cap or a
	// pause (CLAIM reads no setting at 0)
	v, err = s.Do(ctx, "HGET", k.Meta, protocol.MetaLaneSets)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for field, val := range info {
		if l, ok := strings.CutPrefix(field, protocol.FieldLaneCap); ok && num(field) > 0 {
			set[l] = true
		} else if l, ok := strings.CutPrefix(field, protocol.FieldLanePaused); ok && val == "1" {
			set[l] = true
		}
	}
	sets := "0"
	if v != nil {
		sets = fmt.Sprint(v)
	}
	if sets != strconv.Itoa(len(set)) {
		bad("meta lanesets %q, %d lanes have a cap or a pause", sets, len(set))
	}
	return nil
}

// scanKeys lists the keys matching pattern.
func scanKeys(ctx context.Context, s *valkeyserver.Server, pattern string) ([]string, error) {
	var out []string
	cursor := "0"
	for {
		v, err := s.Do(ctx, "SCAN", cursor, "MATCH", pattern, "COUNT", "1000")
		if err != nil {
			return nil, err
		}
		page, _ := v.([]any)
		if len(page) != 2 {
			return nil, fmt.Errorf("SCAN replied %v", v)
		}
		cursor = fmt.Sprint(page[0])
		keys, _ := page[1].([]any)
		for _, key := range keys {
			out = append(out, fmt.Sprint(key))
		}
		if cursor == "0" {
			return out, nil
		}
	}
}

// RequireConsistentQueue fails the test when QueueProblems finds any.
func RequireConsistentQueue(t testing.TB, s *valkeyserver.Server, queue string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	problems, err := QueueProblems(ctx, s, queue)
	if err != nil {
		t.Fatalf("check queue %s: %v", queue, err)
	}
	if len(problems) > 0 {
		if len(problems) > 20 {
			problems = append(problems[:20], fmt.Sprintf("… %d more", len(problems)-20))
		}
		t.Fatalf("queue %s is inconsistent:\n  %s", queue, strings.Join(problems, "\n  "))
	}
}
