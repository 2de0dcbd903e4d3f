package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
	"github.com/trafikey/trafikey/module/internal/verdict"
)

// laneResume is EMQ.LANERESUME (internal/lua/laneresume.lua): let CLAIM serve a lane
// again, waking idle workers when it becomes ready. Crossings as LANECAP's.
func laneResume(c *host.Call) error {
	return lanePaused(c, protocol.LaneResume, verdict.LaneResuming, verdict.LaneResumeChange)
}
