package valkeytest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/protocol"
)

// QueueProblems checks queue's dataset on s (the node that holds it) and
// returns what is inconsistent, or nothing:
//   - every job id is in at most one of pending, delayed, active and dead;
//   - every member of a set has a row whose state names that set;
//   - every row is in the set its state names, and every logs list has its
//     row;
//   - the counters add up: added = completed + removed + the four sets.
func QueueProblems(ctx context.Context, s *valkeyserver.Server, queue string) ([]string, error) {
	k := protocol.KeysOf(queue)
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	sets := []struct{ state, key string }{
		{protocol.StatePending, k.Pending}, {protocol.StateDelayed, k.Delayed},
		{protocol.StateActive, k.Active}, {protocol.StateDead, k.Dead},
	}
	in := map[string]string{} // id -> its set's state
	total := int64(0)
	for _, set := range sets {
		v, err := s.Do(ctx, "ZRANGE", set.key, "0", "-1")
		if err != nil {
			return nil, err
		}
		members, _ := v.([]any)
		total += int64(len(members))
		for _, m := range members {
			id := fmt.Sprint(m)
			if other, ok := in[id]; ok {
				bad("job %s is in %s and %s", id, other, set.state)
			}
			in[id] = set.state
		}
	}

	rows := map[string]bool{}
	var logs []string
	cursor := "0"
	for {
		v, err := s.Do(ctx, "SCAN", cursor, "MATCH", k.Base+protocol.SuffixJob+"*", "COUNT", "1000")
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
			id := strings.TrimPrefix(fmt.Sprint(key), k.Base+protocol.SuffixJob)
			if strings.HasSuffix(id, protocol.SuffixLogs) {
				logs = append(logs, strings.TrimSuffix(id, protocol.SuffixLogs))
				continue
			}
			rows[id] = true
		}
		if cursor == "0" {
			break
		}
	}
	for id := range rows {
		v, err := s.Do(ctx, "HGET", k.Job(id), protocol.FieldState)
		if err != nil {
			return nil, err
		}
		state, set := fmt.Sprint(v), in[id]
		switch {
		case set == "":
			bad("job %s (state %s) is in no set", id, state)
		case state != set:
			bad("job %s is in %s but its state is %s", id, set, state)
		}
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

	counter := func(name string) int64 {
		v, err := s.Do(ctx, "HGET", k.Stats, name)
		if err != nil || v == nil {
			return 0
		}
		n, _ := strconv.ParseInt(fmt.Sprint(v), 10, 64)
		return n
	}
	added, completed, removed := counter("added"), counter("completed"), counter("removed")
	if added != completed+removed+total {
		bad("counters: added %d, but completed %d + removed %d + in the sets %d = %d", added, completed, removed, total, completed+removed+total)
	}
	return problems, nil
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
