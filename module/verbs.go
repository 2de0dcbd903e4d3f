package main

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
)

// verbs lists the keyed commands, one line per verb, in the order of
// docs/PROTOCOL.md: the job core, the lane and rate verbs, the retention and
// flow verbs, the bus verbs, the job-event verbs, the operations verbs, the
// rescheduling and cancellation verbs, then the schedule verbs. Each handler
// lives in the file named like its Lua script (claim.go, claim.lua;
// schedule.fire.go, schedule.fire.lua); what several verbs share lives in
// files named for what it is (verb.go, laneacct.go, flow.go, schedule.go).
func verbs() []host.Command {
	return []host.Command{
		verbCommand(protocol.Install, install, "Stamps the queue's wire version."),
		verbCommand(protocol.Add, add, "Adds 1 to 1000 jobs, each pending or delayed."),
		verbCommand(protocol.Claim, claim, "Leases up to count pending jobs, highest priority first."),
		verbCommand(protocol.Extend, extend, "Moves an active job's lease deadline."),
		verbCommand(protocol.Complete, complete, "Finishes an active job."),
		verbCommand(protocol.CompleteMany, completeMany, "Finishes up to 1000 active jobs, each with its own outcome."),
		verbCommand(protocol.Fail, fail, "Ends an active job's attempt: retry after its backoff, or dead-letter."),
		verbCommand(protocol.Recover, recoverExpired, "Takes back up to limit jobs whose lease expired: to pending, or dead."),
		verbCommand(protocol.Promote, promote, "Moves up to limit due delayed jobs to pending."),
		verbCommand(protocol.Pause, pause, "Stops CLAIM from handing out the queue's jobs."),
		verbCommand(protocol.Resume, resume, "Lets CLAIM hand out the queue's jobs again."),
		verbCommand(protocol.Remove, remove, "Deletes a job no worker holds, with its logs and unique key."),
		verbCommand(protocol.Requeue, requeue, "Sends a dead job back to pending with a fresh set of attempts."),
		verbCommand(protocol.Log, logLine, "Appends a line to an active attempt's log, keeping the last cap lines."),
		verbCommand(protocol.Progress, progress, "Stores an active attempt's progress value."),
		verbCommand(protocol.Stats, stats, "Replies the queue's sizes, pause flag and lifetime counters."),
		verbCommand(protocol.Inspect, inspect, "Replies a job's row and logs."),
		verbCommand(protocol.LaneCap, laneCap, "Sets a lane's concurrency cap (0 clears it)."),
		verbCommand(protocol.LanePause, lanePause, "Stops CLAIM from serving a lane."),
		verbCommand(protocol.LaneResume, laneResume, "Lets CLAIM serve a lane again."),
		verbCommand(protocol.Lane, lane, "Replies a lane's waiting and active counts, cap and pause flag."),
		verbCommand(protocol.Lanes, lanes, "Replies a page of the lanes with jobs, in byte order."),
		verbCommand(protocol.Rate, rate, "Sets or clears the queue's claim rate limit."),
		verbCommand(protocol.Retain, retain, "Sets how long and how many completed and dead jobs are kept."),
		verbCommand(protocol.Trim, trim, "Deletes up to limit retained jobs past the queue's bounds."),
		verbCommand(protocol.Children, children, "Replies a page of a parent's children with their results."),
		verbCommand(protocol.Append, appendEntries, "Writes 1 to 1000 stream entries with explicit ids to a bus stream: all or none."),
		verbCommand(protocol.Publish, publish, "Appends one branded event to the queue's events stream."),
		verbCommand(protocol.FailuresIncr, failuresIncr, "Counts one failure of a downstream in a window of ttl_ms."),
		verbCommand(protocol.Events, events, "Turns the job events of jobs added afterwards on with a bound on the events stream, or off."),
		verbCommand(protocol.Jobs, jobs, "Replies a page of the jobs of one state, with a cursor to continue."),
		verbCommand(protocol.RequeueDead, requeueDead, "Requeues the dead jobs a filter takes, at most limit examined per call."),
		verbCommand(protocol.RemoveDead, removeDead, "Deletes the dead jobs a filter takes, at most limit examined per call."),
		verbCommand(protocol.PromoteAll, promoteAll, "Moves up to limit delayed jobs to pending, due or not."),
		verbCommand(protocol.Retry, retry, "Moves one delayed job to pending now."),
		verbCommand(protocol.Reschedule, reschedule, "Moves a pending or delayed job to a new due time."),
		verbCommand(protocol.Cancel, cancel, "Ends a pending, delayed or active job in the dead set, cancelled."),
		verbCommand(protocol.ScheduleSet, scheduleSet, "Creates or replaces a schedule of periodic jobs."),
		verbCommand(protocol.SchedulePause, schedulePause, "Stops a schedule."),
		verbCommand(protocol.ScheduleResume, scheduleResume, "Starts a paused schedule again from the server's time."),
		verbCommand(protocol.ScheduleRemove, scheduleRemove, "Deletes a schedule; the jobs it enqueued stay."),
		verbCommand(protocol.ScheduleList, scheduleList, "Replies a page of the schedules, in byte order of their ids."),
		verbCommand(protocol.ScheduleDue, scheduleDue, "Replies the server's time and the schedules due at it."),
		verbCommand(protocol.ScheduleFire, scheduleFire, "Enqueues a schedule's occurrences and advances it, once per occurrence."),
	}
}

// verbCommand registers a keyed verb by its mode: every writer is flagged
// "write" (the server holds it during CLIENT PAUSE WRITE and failover), and
// one that grows the dataset "deny-oom" too (the server refuses it at
// maxmemory, as it refuses the Lua script without allow-oom); readers are
// "readonly". Keys are EVAL-style. The arity is -2 (the command and
// numkeys): the handler checks numkeys and the ARGV count itself, with the
// texts of the EVAL family and the verb's own.
func verbCommand(v *protocol.Verb, h host.Handler, summary string) host.Command {
	switch v.Mode {
	case protocol.Grows:
		return host.Command{Name: v.Command, Flags: "write deny-oom", Keys: host.WriteKeys, Arity: -2, Summary: summary, Handler: h}
	case protocol.Keeps:
		return host.Command{Name: v.Command, Flags: "write", Keys: host.WriteKeys, Arity: -2, Summary: summary, Handler: h}
	}
	return host.Command{Name: v.Command, Flags: "readonly", Keys: host.ReadKeys, Arity: -2, Summary: summary, Handler: h}
}

// The stats counters the job-core verbs increment, named by the protocol's
// list (protocol.StatsCounters, in STATS order) so no verb spells them.
var (
	statAdded     = protocol.StatsCounters[0]
	statCompleted = protocol.StatsCounters[1]
	statFailed    = protocol.StatsCounters[2]
	statRetried   = protocol.StatsCounters[3]
	statDead      = protocol.StatsCounters[4]
)
