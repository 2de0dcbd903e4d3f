package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// schedulePause is EMQ.SCHEDULE.PAUSE: stop a schedule.
func schedulePause(c *host.Call) error {
	return schedulePauseResume(c, protocol.SchedulePause, func(s *verdict.SchedulePauseSeen, _ int64) (verdict.State, bool, error) {
		return verdict.SchedulePause(s)
	})
}
