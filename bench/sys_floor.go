package main

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/groupcommit"
	"github.com/trafikey/trafikey/internal/protocol"
)

// The floor: the primitive commands each trafikey verb consists of
// (docs/PROTOCOL.md, the verbs' writes), issued directly by the client with
// the same valkey-go client, the same producers and the same worker
// concurrency as the trafikey systems. What it costs the server is the least
// any executor can cost for the same dataset changes; it skips every read,
// check and guard a verb makes.
//
//	ADD           HINCRBY meta seq n · per job HSET row (data att at, the row of a job at the defaults) + ZADD pending · HINCRBY stats added n
//	CLAIM         ZPOPMIN pending n (BZPOPMIN when empty) · per job HINCRBY row att 1 + HSET row state active + ZADD active + HGET row data
//	COMPLETEMANY  ZREM active ids… · DEL rows logs… · HINCRBY stats completed k
//
// HINCRBY meta seq comes first (its reply is the id), so an add is two round
// trips; the rest of a verb's commands go out as one pipeline (DoMulti). A
// claim is two round trips too: the pop, then one pipeline for the batch.
// Completions are grouped the way the client groups COMPLETEMANY
// (internal/groupcommit, the same senders and limits). A single add is one
// add of one job (HINCRBY meta seq 1, then its pipeline) in the floor row,
// and grouped as the client coalesces concurrent Adds in the floor-grouped
// row: the floor of the one-call-per-job add and of the coalesced one.

const floorLeaseMS = 30_000

type floorQueue struct {
	c valkey.Client
	k protocol.Keys
	// adds and completes group concurrent single adds and completions into
	// shared pipelines, as emq's Queue does with ADD and COMPLETEMANY; adds
	// is nil when single adds are not grouped.
	adds      *groupcommit.Queue[*floorItem]
	completes *groupcommit.Queue[*floorItem]
}

// floorItem is one job waiting for its group: its payload (an add) or id (a
// completion), and where its result goes.
type floorItem struct {
	payload []byte
	id      string
	done    chan error
}

// floorLanes is the number of grouped pipelines in flight, the client's.
const floorLanes = 2

// floorMaxBytes is emq's cap on the payload bytes of one coalesced ADD.
const floorMaxBytes = 1 << 20

// takeFloor takes up to MaxCount items and, like the client's coalesced
// adds, no more payload bytes than floorMaxBytes (beyond the first item).
// Completions carry no payload, and their ids are distinct: a job completes
// once.
func takeFloor(queue []*floorItem) (batch, rest []*floorItem) {
	n, size := 0, 0
	for n < len(queue) && n < protocol.MaxCount {
		if n > 0 && size+len(queue[n].payload) > floorMaxBytes {
			break
		}
		size += len(queue[n].payload)
		n++
	}
	return slices.Clone(queue[:n]), queue[n:]
}

// grouped pushes it and waits for its group's result.
func grouped(ctx context.Context, g *groupcommit.Queue[*floorItem], it *floorItem) error {
	it.done = make(chan error, 1)
	g.Push(it)
	select {
	case err := <-it.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func answer(batch []*floorItem, err error) {
	for _, it := range batch {
		it.done <- err
	}
}

// openFloor opens the floor, its single adds grouped or one by one.
func openFloor(groupAdds bool) func(ctx context.Context, env Env, w Workload) (goQueue, error) {
	return func(ctx context.Context, env Env, w Workload) (goQueue, error) {
		f, err := newFloor(env, groupAdds)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}

func newFloor(env Env, groupAdds bool) (*floorQueue, error) {
	c, err := newValkeyClient(env.Addr)
	if err != nil {
		return nil, err
	}
	f := &floorQueue{c: c, k: protocol.KeysOf(env.Queue)}
	if groupAdds {
		f.adds = groupcommit.New(floorLanes, takeFloor, func(batch []*floorItem) {
			payloads := make([][]byte, len(batch))
			for i, it := range batch {
				payloads[i] = it.payload
			}
			answer(batch, f.addBatch(context.Background(), payloads))
		})
	}
	f.completes = groupcommit.New(floorLanes, takeFloor, func(batch []*floorItem) {
		ids := make([]string, len(batch))
		for i, it := range batch {
			ids[i] = it.id
		}
		answer(batch, f.complete(context.Background(), ids))
	})
	return f, nil
}

func newValkeyClient(addr string) (valkey.Client, error) {
	return valkey.NewClient(valkey.ClientOption{InitAddress: []string{addr}, DisableCache: true})
}

func (f *floorQueue) batch() bool { return true }

func (f *floorQueue) add(ctx context.Context, payload []byte) error {
	if f.adds == nil {
		return f.addBatch(ctx, [][]byte{payload})
	}
	return grouped(ctx, f.adds, &floorItem{payload: payload})
}

func (f *floorQueue) addBatch(ctx context.Context, payloads [][]byte) error {
	c := f.c
	n := int64(len(payloads))
	last, err := c.Do(ctx, c.B().Hincrby().Key(f.k.Meta).Field(protocol.MetaSeq).Increment(n).Build()).AsInt64()
	if err != nil {
		return err
	}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	cmds := make(valkey.Commands, 0, 2*len(payloads)+1)
	for i, p := range payloads {
		id := last - n + 1 + int64(i)
		ids := strconv.FormatInt(id, 10)
		cmds = append(cmds,
			c.B().Hset().Key(f.k.Job(ids)).FieldValue().
				FieldValue(protocol.FieldData, valkey.BinaryString(p)).
				FieldValue(protocol.FieldAttempts, "0").
				FieldValue(protocol.FieldAdded, now).Build(),
			c.B().Zadd().Key(f.k.Pending).ScoreMember().ScoreMember(float64(protocol.PendingScore(0, id)), ids).Build(),
		)
	}
	cmds = append(cmds, c.B().Hincrby().Key(f.k.Stats).Field("added").Increment(n).Build())
	return firstErr(c.DoMulti(ctx, cmds...))
}

func firstErr(rs []valkey.ValkeyResult) error {
	for _, r := range rs {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}

// work runs the floor's worker the way trafikey.Worker runs: one loop claims as
// many jobs as there are free handler slots with one ZPOPMIN and one
// pipeline, and each job runs on its own goroutine and completes through the
// completion group. On an empty
// queue the loop blocks in BZPOPMIN (50 ms) instead of the signal list.
func (f *floorQueue) work(ctx context.Context, concurrency int, done func([]byte)) (func() error, error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errc := make(chan error, concurrency+1)
	report := func(err error) {
		if err != nil && ctx.Err() == nil {
			select {
			case errc <- err:
			default:
			}
			cancel()
		}
	}
	slots := make(chan struct{}, concurrency)
	limit := min(concurrency, protocol.MaxCount)
	wg.Go(func() {
		for {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			n := 1
		take:
			for n < limit {
				select {
				case slots <- struct{}{}:
					n++
				default:
					break take
				}
			}
			ids, err := f.pop(ctx, n)
			for range n - len(ids) {
				<-slots
			}
			if err != nil {
				report(err)
				return
			}
			if len(ids) == 0 {
				continue
			}
			datas, err := f.claim(ctx, ids)
			if err != nil {
				report(err)
				return
			}
			for i, id := range ids {
				wg.Go(func() {
					defer func() { <-slots }()
					// The handler is a no-op.
					err := grouped(ctx, f.completes, &floorItem{id: id})
					if err == nil {
						done(datas[i])
					}
					report(err)
				})
			}
		}
	})
	return func() error {
		cancel()
		wg.Wait()
		select {
		case err := <-errc:
			return err
		default:
			return nil
		}
	}, nil
}

// pop takes up to n ids from pending: ZPOPMIN, or BZPOPMIN for one id with a
// 50 ms timeout when pending is empty.
func (f *floorQueue) pop(ctx context.Context, n int) ([]string, error) {
	c := f.c
	zs, err := c.Do(ctx, c.B().Zpopmin().Key(f.k.Pending).Count(int64(n)).Build()).AsZScores()
	if err != nil {
		return nil, err
	}
	if len(zs) > 0 {
		ids := make([]string, len(zs))
		for i, z := range zs {
			ids[i] = z.Member
		}
		return ids, nil
	}
	arr, err := c.Do(ctx, c.B().Bzpopmin().Key(f.k.Pending).Timeout(0.05).Build()).ToArray()
	if valkey.IsValkeyNil(err) || ctx.Err() != nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(arr) < 2 {
		return nil, errors.New("floor: short BZPOPMIN reply")
	}
	id, err := arr[1].ToString()
	if err != nil {
		return nil, err
	}
	return []string{id}, nil
}

// claim marks the popped jobs active, in one pipeline, and returns their
// payloads.
func (f *floorQueue) claim(ctx context.Context, ids []string) ([][]byte, error) {
	c := f.c
	deadline := float64(time.Now().UnixMilli() + floorLeaseMS)
	cmds := make(valkey.Commands, 0, 4*len(ids))
	for _, id := range ids {
		row := f.k.Job(id)
		cmds = append(cmds,
			c.B().Hincrby().Key(row).Field(protocol.FieldAttempts).Increment(1).Build(),
			c.B().Hset().Key(row).FieldValue().FieldValue(protocol.FieldState, protocol.StateActive).Build(),
			c.B().Zadd().Key(f.k.Active).ScoreMember().ScoreMember(deadline, id).Build(),
			c.B().Hget().Key(row).Field(protocol.FieldData).Build(),
		)
	}
	rs := c.DoMulti(ctx, cmds...)
	if err := firstErr(rs); err != nil {
		return nil, err
	}
	datas := make([][]byte, len(ids))
	for i := range ids {
		b, err := rs[4*i+3].AsBytes()
		if err != nil {
			return nil, err
		}
		datas[i] = b
	}
	return datas, nil
}

// complete is COMPLETEMANY's writes for a group of jobs, in one pipeline.
func (f *floorQueue) complete(ctx context.Context, ids []string) error {
	c := f.c
	keys := make([]string, 0, 2*len(ids))
	for _, id := range ids {
		keys = append(keys, f.k.Job(id), f.k.Logs(id))
	}
	return firstErr(c.DoMulti(ctx,
		c.B().Zrem().Key(f.k.Active).Member(ids...).Build(),
		c.B().Del().Key(keys...).Build(),
		c.B().Hincrby().Key(f.k.Stats).Field("completed").Increment(int64(len(ids))).Build(),
	))
}

func (f *floorQueue) completed(ctx context.Context) (int64, error) {
	return f.stat(ctx, "completed")
}

func (f *floorQueue) stat(ctx context.Context, field string) (int64, error) {
	v, err := f.c.Do(ctx, f.c.B().Hget().Key(f.k.Stats).Field(field).Build()).AsInt64()
	if valkey.IsValkeyNil(err) {
		return 0, nil
	}
	return v, err
}

func (f *floorQueue) pending(ctx context.Context) (int64, error) {
	return f.c.Do(ctx, f.c.B().Zcard().Key(f.k.Pending).Build()).AsInt64()
}

func (f *floorQueue) close() error {
	f.c.Close()
	return nil
}
