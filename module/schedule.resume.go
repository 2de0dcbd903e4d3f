package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// scheduleResume is EMQ.SCHEDULE.RESUME: start a paused schedule again,
// from the server's time.
func scheduleResume(c *host.Call) error {
	return schedulePauseResume(c, protocol.ScheduleResume, verdict.ScheduleResume)
}
