package protocol

import (
	"strconv"
	"strings"
)

// The schedule verbs (docs/PROTOCOL.md, "Schedules"): periodic jobs of a
// queue, defined once and enqueued, occurrence by occurrence, by a step that
// every worker runs on its timer. SCHEDULE.DUE reads the due schedules with
// the server's time; the client computes their occurrences (cron with time
// zones is not evaluated on the server) and SCHEDULE.FIRE enqueues them,
// verifying the schedule's revision and last fired time, so each occurrence
// is enqueued once however many workers race.
var (
	// ScheduleSet creates or replaces a schedule: it stores a definition of
	// any size, so it grows.
	ScheduleSet = verb("schedule.set", Grows, SuffixVersion, SuffixSchedules, SuffixScheduleDue, SuffixScheduleIDs)
	// SchedulePause and ScheduleResume rewrite the schedule's state, a
	// bounded value.
	SchedulePause  = verb("schedule.pause", Keeps, SuffixVersion, SuffixSchedules, SuffixScheduleDue)
	ScheduleResume = verb("schedule.resume", Keeps, SuffixVersion, SuffixSchedules, SuffixScheduleDue)
	ScheduleRemove = verb("schedule.remove", Keeps, SuffixVersion, SuffixSchedules, SuffixScheduleDue, SuffixScheduleIDs)
	ScheduleList   = verb("schedule.list", Reads, SuffixVersion, SuffixSchedules, SuffixScheduleIDs)
	// ScheduleDue is the step's first phase: the server's time and the due
	// schedules, read only.
	ScheduleDue = verb("schedule.due", Reads, SuffixVersion, SuffixSchedules, SuffixScheduleDue)
	// ScheduleFire is the step's second phase: it adds jobs (ADD's path),
	// so it grows.
	ScheduleFire = verb("schedule.fire", Grows, SuffixVersion, SuffixMeta, SuffixStats, SuffixPending, SuffixDelayed,
		SuffixSignal, SuffixSchedules, SuffixScheduleDue)
)

// ScheduleVerbs lists the schedule verbs in the order docs/PROTOCOL.md gives
// them.
var ScheduleVerbs = []*Verb{ScheduleSet, SchedulePause, ScheduleResume, ScheduleRemove, ScheduleList, ScheduleDue, ScheduleFire}

// The schedule keys.
const (
	SuffixSchedules   = "schedules" // hash: d:<id> the definition, s:<id> the state
	SuffixScheduleDue = "scheddue"  // zset: the active schedules, score = next due ms
	SuffixScheduleIDs = "schedids"  // zset: every schedule, score 0 (byte order, for SCHEDULE.LIST)
)

// The schedules hash's field prefixes, followed by the schedule id.
const (
	ScheduleDefField   = "d:" // the definition (EncodeList of SCHEDULE.SET's arguments after id)
	ScheduleStateField = "s:" // the state: rev count last next paused
)

// Schedule kinds, SCHEDULE.SET's kind argument.
const (
	ScheduleCron  = "cron"  // spec is a cron expression with seconds, in the time zone tz
	ScheduleEvery = "every" // spec is an interval, ms
)

// Row fields of a job a schedule enqueued, written last in its row.
const (
	FieldSchedule    = "sched" // the schedule's id
	FieldScheduledAt = "sat"   // the occurrence's scheduled time, ms: with sched, the job's dedupe key
)

// Schedule value domains, inclusive.
const (
	MaxScheduleID     = 128               // bytes of a schedule id (ValidBusName's alphabet)
	MaxCronSpec       = 256               // bytes of a cron expression
	MaxTimeZone       = 64                // bytes of a time zone name
	MaxScheduleEvery  = MaxDelayMS        // an interval, ms (ten years)
	MaxScheduleJitter = 86_400_000        // a day
	MaxScheduleTime   = 253402300799999   // start, end and occurrence times, ms: the end of year 9999
	MaxScheduleLimit  = 1_000_000_000_000 // the cap on occurrences, and the revision
	MaxScheduleGrace  = 86_400_000        // how late an occurrence is still on time, ms
	MaxScheduleCatch  = MaxCount          // late occurrences caught up per step
	MaxScheduleFire   = MaxCount          // occurrences of one SCHEDULE.FIRE
	ScheduleSetFixed  = 18                // SCHEDULE.SET's arguments before the option pairs (id … k)
	ScheduleDefFixed  = 17                // a definition's elements before the option pairs (kind … k)
	MaxScheduleOption = MaxAddOptions     // option pairs of a template
)

// EncodeList is the encoding of a schedule's definition: each element's
// byte length in canonical decimal, a colon, then its bytes, with nothing
// between elements.
func EncodeList(elems []string) string {
	var b strings.Builder
	for _, e := range elems {
		b.WriteString(strconv.Itoa(len(e)))
		b.WriteByte(':')
		b.WriteString(e)
	}
	return b.String()
}

// DecodeList is EncodeList's inverse; false when s is not an encoding (a
// length that is not a canonical decimal, or that runs past the end).
func DecodeList(s string) ([]string, bool) {
	var out []string
	for len(s) > 0 {
		colon := strings.IndexByte(s, ':')
		if colon <= 0 || colon > MaxDecimalSize || (s[0] == '0' && colon > 1) {
			return nil, false
		}
		n := 0
		for i := range colon {
			c := s[i]
			if c < '0' || c > '9' {
				return nil, false
			}
			n = n*10 + int(c-'0')
		}
		if n > len(s)-colon-1 {
			return nil, false
		}
		out = append(out, s[colon+1:colon+1+n])
		s = s[colon+1+n:]
	}
	return out, true
}
