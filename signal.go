package trafikey

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/slots"
)

// The signal list lets idle workers sleep without polling: ADD, PROMOTE,
// RECOVER and REQUEUE push one token when pending goes from empty to
// non-empty, and RESUME pushes one when pending is not empty. An idle worker
// blocks on BLPOP; the list never holds more than one token, so a burst of
// adds costs one wake-up. Each push is also published on the sharded
// channel named as the list; the workers of a partitioned queue wait for
// that instead (worker_cancels.go, channels), as a BLPOP per partition
// would take a connection per partition.

// signalGroup is signal lists that one BLPOP can wait on: of queues on one
// client and, on a cluster client, in one hash slot.
type signalGroup struct {
	client valkey.Client
	keys   []string
}

// signalGroups groups the signal lists of queues for BLPOP, in the order
// the queues come: one group per client, split by hash slot on a cluster
// client, whose BLPOP must name keys of one slot (it panics on others).
// Partitions are left out: an idle worker learns their pushes from their
// signal channels (channels).
func signalGroups(queues []QueueWeight) []signalGroup {
	type at struct {
		client valkey.Client
		slot   uint16
	}
	index := map[at]int{}
	var groups []signalGroup
	for _, qw := range queues {
		q := qw.Queue
		if q.of != nil {
			continue
		}
		k := at{client: q.client}
		if q.cluster {
			k.slot = hashSlot(q.keys.Signal)
		}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, signalGroup{client: q.client})
		}
		groups[i].keys = append(groups[i].keys, q.keys.Signal)
	}
	return groups
}

// wait blocks until a token arrives on one of g's lists or timeout passes,
// and reports whether a token arrived. valkey-go runs the blocking BLPOP on
// a dedicated connection, so it does not hold up the pipelined calls of
// other goroutines; when ctx ends, it releases the BLPOP with CLIENT
// UNBLOCK and keeps the connection (with unblock; else it closes the
// connection: see signalWaits).
func (g signalGroup) wait(ctx context.Context, timeout time.Duration, unblock bool) (bool, error) {
	cmd := g.client.B().Blpop().Key(g.keys...).Timeout(timeout.Seconds()).Build()
	if unblock {
		cmd = cmd.UnblockOnCancel()
	}
	err := g.client.Do(ctx, cmd).Error()
	switch {
	case err == nil:
		return true, nil
	case valkey.IsValkeyNil(err):
		return false, nil
	default:
		return false, fmt.Errorf("trafikey: wait for signal: %w", err)
	}
}

// hashSlot is the cluster hash slot of key: of its hash tag, the bytes
// between the first '{' and the next '}' when there are any, else of the
// whole key. Queue keys are emq:{name}:..., so every key of a queue has
// the slot of {name}.
func hashSlot(key string) uint16 {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if n := strings.IndexByte(key[open+1:], '}'); n > 0 {
			key = key[open+1 : open+1+n]
		}
	}
	return slots.Of(key)
}

// pokeSignal leaves one token for the next idle worker, the way the verbs
// do: a worker that claimed a full batch tells the others that more jobs
// may be waiting, since the verbs only signal the first job into an empty
// pending set. For a partition it also announces the token on the signal
// channel, which every idle worker of the queue hears; as in the verbs, a
// caller that may not publish there leaves the announcement out
// (NOPERM is not an error here).
func (q *Queue) pokeSignal(ctx context.Context) error {
	cmds := valkey.Commands{
		q.client.B().Lpush().Key(q.keys.Signal).Element("1").Build(),
		q.client.B().Ltrim().Key(q.keys.Signal).Start(0).Stop(0).Build(),
	}
	if q.of != nil {
		cmds = append(cmds, q.client.B().Spublish().Channel(q.keys.Signal).Message("1").Build())
	}
	for i, r := range q.client.DoMulti(ctx, cmds...) {
		err := r.Error()
		if ve, ok := valkey.IsValkeyErr(err); i == 2 && ok && strings.HasPrefix(ve.Error(), "NOPERM") {
			continue
		}
		if err != nil {
			return fmt.Errorf("trafikey: signal: %w", err)
		}
	}
	return nil
}

// signalWaits waits on several groups' signal lists at once, for a worker
// of several queues or slots, without ever releasing a wait: each group's
// BLPOP runs to its token or its timeout, and a group still waiting from an
// earlier idle wait is not waited on again. A token one of them takes is
// kept for the worker's next idle wait, so none is lost. Releasing the
// other waits when one got a token (CLIENT UNBLOCK) would be cheaper in
// connections, but a Valkey 8.0 server that gets CLIENT UNBLOCK for a
// BLPOP it received while its writes were paused (a failover) crashes
// (valkey-io/valkey#2111). It also takes the announcements of partitions'
// signal channels (announced), the idle wait of a partitioned queue's
// worker, which holds no BLPOP.
type signalWaits struct {
	mu sync.Mutex
	// out marks the groups, by first key, with a BLPOP in flight.
	out map[string]bool
	// err is the last error of a BLPOP, reported by the next wait that
	// ends without a token.
	err error
	// woke holds a token a BLPOP took.
	woke chan struct{}
}

// tokens is the channel of the tokens taken for the next wait, made on
// first use; s.mu is held.
func (s *signalWaits) tokens() chan struct{} {
	if s.woke == nil {
		s.woke, s.out = make(chan struct{}, 1), map[string]bool{}
	}
	return s.woke
}

// announced is told of a message on a partition's signal channel: a token
// for the next idle wait, as a BLPOP's. A message that comes while the
// worker claims is kept, so the wait after a claim that found nothing
// returns at once rather than miss it.
func (s *signalWaits) announced() {
	s.mu.Lock()
	woke := s.tokens()
	s.mu.Unlock()
	offer(woke)
}

// wait blocks until a token arrives on one of groups' lists or a
// partition's signal channel (or one came since the last wait), timeout
// passes, or ctx ends; it returns the error of a BLPOP that failed since
// the last wait that came to its timeout. When ctx ends, the BLPOPs in
// flight end with it (valkey-go closes their connections).
func (s *signalWaits) wait(ctx context.Context, groups []signalGroup, timeout time.Duration) error {
	s.mu.Lock()
	woke := s.tokens()
	for _, g := range groups {
		key := g.keys[0]
		if s.out[key] {
			continue
		}
		s.out[key] = true
		go func() {
			got, err := g.wait(ctx, timeout, false)
			s.mu.Lock()
			delete(s.out, key)
			switch {
			case got:
				offer(woke)
			case err != nil && ctx.Err() == nil:
				s.err = err
			}
			s.mu.Unlock()
		}()
	}
	s.mu.Unlock()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-woke:
		return nil
	case <-timer.C:
	case <-ctx.Done():
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	s.err = nil
	return err
}

// offer leaves a token in woke (one slot) unless one is there already.
func offer(woke chan struct{}) {
	select {
	case woke <- struct{}{}:
	default:
	}
}
