// Package groupcommit sends queued items in batches, group-commit style:
// nothing waits on a timer, so at low load each item leaves alone and at
// once, and under load items pile up behind the calls in flight and leave
// together. The client uses it to share ADD and COMPLETEMANY calls among
// concurrent callers; the benchmark's floor uses it to group the same
// primitive commands the same way.
package groupcommit

import "sync"

// Queue sends queued items in batches: an item queued while fewer than maxSenders
// calls are in flight starts a sender at once; a sender takes what is queued
// (as much as take allows), sends it, and goes on while items wait. Senders
// exit when the queue is empty: an idle Queue holds no goroutine and needs
// no Close.
type Queue[T any] struct {
	maxSenders int
	// take picks the next batch from a non-empty queue, under mu. It
	// returns a batch of its own (not aliasing queue) and the items left;
	// it returns an empty batch only when nothing is left to send.
	take func(queue []T) (batch, rest []T)
	// send runs one batch and hands every item its result.
	send func(batch []T)

	mu      sync.Mutex
	queue   []T
	senders int
	// stopped is signalled when the last sender exits.
	stopped sync.Cond
}

// New returns a Queue with at most maxSenders sends in flight. take picks the
// next batch from a non-empty queue (see Queue); send runs one batch.
func New[T any](maxSenders int, take func([]T) ([]T, []T), send func([]T)) *Queue[T] {
	b := &Queue[T]{maxSenders: maxSenders, take: take, send: send}
	b.stopped.L = &b.mu
	return b
}

// Push queues item and starts a sender if fewer than maxSenders are running.
func (b *Queue[T]) Push(item T) {
	b.mu.Lock()
	b.queue = append(b.queue, item)
	start := b.senders < b.maxSenders
	if start {
		b.senders++
	}
	b.mu.Unlock()
	if start {
		go b.run()
	}
}

func (b *Queue[T]) run() {
	for {
		b.mu.Lock()
		var batch []T
		if len(b.queue) > 0 {
			batch, b.queue = b.take(b.queue)
			if len(b.queue) == 0 {
				b.queue = nil
			}
		}
		if len(batch) == 0 {
			b.senders--
			if b.senders == 0 {
				b.stopped.Broadcast()
			}
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.send(batch)
	}
}

// Locked runs f under the Queue's lock, for state of queued items that
// take reads.
func (b *Queue[T]) Locked(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f()
}

// Wait returns when no sender runs. A sender exits once the queue is
// empty, so this returns soon after the last push has been answered.
func (b *Queue[T]) Wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.senders > 0 {
		b.stopped.Wait()
	}
}

// Idle reports whether nothing is queued and no sender runs.
func (b *Queue[T]) Idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.senders == 0 && len(b.queue) == 0
}

// State reports how many items are queued and how many senders run.
func (b *Queue[T]) State() (queued, senders int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue), b.senders
}
