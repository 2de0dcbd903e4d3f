package trafikey

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// logEvery is how often a worker logs one kind of repeated failure.
const logEvery = time.Second

// throttledLog logs a worker's failures: each message at most once per
// logEvery, with how many like it were left out since, so an outage with
// hundreds of failing calls a second leaves a few lines, not thousands.
type throttledLog struct {
	l     *slog.Logger
	every time.Duration // logEvery; 0 means logEvery

	mu   sync.Mutex
	last map[string]*logState
}

type logState struct {
	at      time.Time
	dropped int
}

func (t *throttledLog) warn(msg string, args ...any)  { t.log(slog.LevelWarn, msg, args) }
func (t *throttledLog) error(msg string, args ...any) { t.log(slog.LevelError, msg, args) }

func (t *throttledLog) log(level slog.Level, msg string, args []any) {
	now := time.Now()
	t.mu.Lock()
	if t.last == nil {
		t.last = map[string]*logState{}
	}
	s := t.last[msg]
	if s == nil {
		s = &logState{}
		t.last[msg] = s
	}
	every := t.every
	if every == 0 {
		every = logEvery
	}
	if !s.at.IsZero() && now.Sub(s.at) < every {
		s.dropped++
		t.mu.Unlock()
		return
	}
	dropped := s.dropped
	s.at, s.dropped = now, 0
	t.mu.Unlock()
	if dropped > 0 {
		args = append(args, "left_out", dropped)
	}
	t.l.Log(context.Background(), level, msg, args...)
}
