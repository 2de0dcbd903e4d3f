package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
)

// schedulePause is EMQ.SCHEDULE.PAUSE: stop a schedule.
func schedulePause(c *host.Call) error { return schedulePauseResume(c, protocol.SchedulePause, true) }
