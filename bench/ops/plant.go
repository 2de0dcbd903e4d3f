package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// plantDead writes n dead jobs into queue q (already installed) as FAIL
// leaves them after their last attempt: the row with state dead, att = max
// = 3 and an error, each a member of dead scored by its time of death, then
// meta seq and the added and dead counters. It writes the keys directly,
// in pipelines, because adding, claiming and failing a million jobs through
// the verbs takes minutes and measures nothing this benchmark reports.
// Deaths are spread over the time before now, perMS jobs dying in each ms,
// oldest first.
func plantDead(ctx context.Context, c *valkeyserver.Conn, q string, n, perMS int, now time.Time) error {
	keys := protocol.KeysOf(q)
	base := protocol.Base(q)
	dead := base + protocol.SuffixDead
	start := now.UnixMilli() - int64(n/perMS) - 1
	const chunk = 2000
	cmds := make([][]string, 0, chunk+1)
	for from := 1; from <= n; from += chunk {
		to := min(from+chunk-1, n)
		cmds = cmds[:0]
		zadd := []string{"ZADD", dead}
		for id := from; id <= to; id++ {
			sid := strconv.Itoa(id)
			at := strconv.FormatInt(start+int64(id/perMS), 10)
			cmds = append(cmds, []string{"HSET", keys.Job(sid),
				protocol.FieldData, "payload " + sid,
				protocol.FieldState, protocol.StateDead,
				protocol.FieldAttempts, "3",
				protocol.FieldMax, "3",
				protocol.FieldPriority, "0",
				protocol.FieldBackoff, protocol.BackoffFixed + ":1000",
				protocol.FieldAdded, at,
				protocol.FieldError, "boom",
			})
			zadd = append(zadd, at, sid)
		}
		cmds = append(cmds, zadd)
		replies, err := c.DoMulti(ctx, cmds...)
		if err != nil {
			return err
		}
		for _, r := range replies {
			if re, ok := r.(valkeyserver.ReplyError); ok {
				return fmt.Errorf("planting: %w", re)
			}
		}
	}
	total := strconv.Itoa(n)
	_, err := c.DoMulti(ctx,
		[]string{"HSET", base + protocol.SuffixMeta, protocol.MetaSeq, total},
		[]string{"HSET", base + protocol.SuffixStats, "added", total, "failed", total, "dead", total})
	return err
}

// pinger measures a concurrent client's PING round trips on its own
// connection, one after the other, until stopped.
type pinger struct {
	mu    sync.Mutex
	rtts  []time.Duration
	times []time.Time // when each round trip started
	stop  chan struct{}
	done  chan error
}

// startPinger dials addr and pings until Stop, every 200 µs at most (a
// client that checks in often, not a flood that would itself load the
// server).
func startPinger(ctx context.Context, addr string) (*pinger, error) {
	c, err := valkeyserver.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	p := &pinger{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		defer c.Close()
		for {
			select {
			case <-p.stop:
				p.done <- nil
				return
			default:
			}
			t0 := time.Now()
			if _, err := c.Do(ctx, "PING"); err != nil {
				p.done <- err
				return
			}
			d := time.Since(t0)
			p.mu.Lock()
			p.rtts = append(p.rtts, d)
			p.times = append(p.times, t0)
			p.mu.Unlock()
			if d < 200*time.Microsecond {
				time.Sleep(200*time.Microsecond - d)
			}
		}
	}()
	return p, nil
}

// Stop ends the pings and returns their round trips.
func (p *pinger) Stop() ([]time.Duration, []time.Time, error) {
	close(p.stop)
	err := <-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rtts, p.times, err
}

// quantile is the q-quantile (0..1) of ds, nearest rank.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// worstWindow is the highest q-quantile of the round trips over consecutive
// windows of w (the p99 "throughout" the run, not only over all of it);
// windows with fewer than 100 pings are merged into the next.
func worstWindow(rtts []time.Duration, times []time.Time, w time.Duration, q float64) time.Duration {
	if len(rtts) == 0 {
		return 0
	}
	worst := time.Duration(0)
	from := 0
	for i := range rtts {
		if times[i].Sub(times[from]) < w && i < len(rtts)-1 || i-from < 100 && i < len(rtts)-1 {
			continue
		}
		worst = max(worst, quantile(rtts[from:i+1], q))
		from = i + 1
		if from >= len(rtts) {
			break
		}
	}
	return worst
}
