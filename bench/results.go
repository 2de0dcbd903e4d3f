package main

import (
	"maps"
	"slices"
	"strings"
)

// Agg is a median with its spread over rounds.
type Agg struct {
	N             int
	Med, Min, Max float64
}

func aggregate(vals []float64) Agg {
	if len(vals) == 0 {
		return Agg{}
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Agg{N: len(s), Med: med, Min: s[0], Max: s[len(s)-1]}
}

// Cell is one system on one workload, over all rounds.
type Cell struct {
	System, Workload string
	Runs, Failed     int
	Rate             Agg // jobs/s
	P50, P90, P99    Agg // µs, lifecycle workloads
	ServerUS         Agg // server CPU µs per job
	ClientUS         Agg // client CPU µs per job
	VerbUS           Agg // µs per job inside the queue's own commands (commandstats)
	MemPerJob        Agg // dataset memory per job beyond the payload (add)
	UsedPerJob       Agg // used_memory per job (add)
	Cmds             map[string]CmdStat
	CmdJobs          int // jobs behind Cmds
}

// cell aggregates the successful runs of system on workload.
func (r *Results) cell(system, workload string) *Cell {
	c := &Cell{System: system, Workload: workload, Cmds: map[string]CmdStat{}}
	var rate, p50, p90, p99, srv, cli, verb, mem, used []float64
	payload := float64(r.Cfg.Payload)
	for _, rec := range r.Records {
		if rec.System != system || rec.Workload != workload {
			continue
		}
		c.Runs++
		if rec.Err != "" {
			c.Failed++
			continue
		}
		jobs := float64(rec.Jobs)
		rate = append(rate, rec.JobsPerSec())
		srv = append(srv, float64(rec.ServerCPU.Microseconds())/jobs)
		cli = append(cli, float64(rec.ClientCPU.Microseconds())/jobs)
		if rec.Lat.N > 0 {
			p50 = append(p50, rec.Lat.P50)
			p90 = append(p90, rec.Lat.P90)
			p99 = append(p99, rec.Lat.P99)
		}
		if us, ok := verbUsec(system, rec.Cmds); ok {
			verb = append(verb, float64(us)/jobs)
		}
		if workload == "add" {
			mem = append(mem, float64(rec.DataDelta)/jobs-payload)
			used = append(used, float64(rec.MemDelta)/jobs)
		}
		for name, st := range rec.Cmds {
			acc := c.Cmds[name]
			acc.Calls += st.Calls
			acc.Usec += st.Usec
			c.Cmds[name] = acc
		}
		c.CmdJobs += rec.Jobs
	}
	c.Rate, c.P50, c.P90, c.P99 = aggregate(rate), aggregate(p50), aggregate(p90), aggregate(p99)
	c.ServerUS, c.ClientUS, c.VerbUS, c.MemPerJob = aggregate(srv), aggregate(cli), aggregate(verb), aggregate(mem)
	c.UsedPerJob = aggregate(used)
	return c
}

// perJob is the commandstats µs per job of the named commands of system
// on workload, over the successful runs.
func (r *Results) perJob(system, workload string, names []string) Agg {
	var vals []float64
	for _, rec := range r.Records {
		if rec.System != system || rec.Workload != workload || rec.Err != "" || rec.Jobs == 0 {
			continue
		}
		var us int64
		for _, n := range names {
			us += rec.Cmds[n].Usec
		}
		vals = append(vals, float64(us)/float64(rec.Jobs))
	}
	return aggregate(vals)
}

// verbUsec sums the server time of the queue's own top-level commands: the
// EMQ.* commands of the native executor, EVALSHA/EVAL of the Lua executor,
// and every command of the floor. Commands a script or module calls are
// also listed under their own names in commandstats, and their time is
// included in the caller's, so only the callers are summed. asynq and
// BullMQ mix scripts with plain commands and are not summed.
func verbUsec(system string, cmds map[string]CmdStat) (int64, bool) {
	var sum int64
	switch system {
	case sysNative, sysNativeSingle:
		for name, st := range cmds {
			if strings.HasPrefix(name, "emq.") {
				sum += st.Usec
			}
		}
	case sysLua:
		for _, name := range []string{"evalsha", "eval", "evalsha_ro", "eval_ro", "fcall", "fcall_ro"} {
			sum += cmds[name].Usec
		}
	case sysFloor, sysFloorGrouped:
		for _, st := range cmds {
			sum += st.Usec
		}
	default:
		return 0, false
	}
	return sum, true
}

// topCommands returns the commands of a cell by total time, largest first.
func (c *Cell) topCommands(n int) []string {
	names := slices.Collect(maps.Keys(c.Cmds))
	slices.SortFunc(names, func(a, b string) int {
		if d := c.Cmds[b].Usec - c.Cmds[a].Usec; d != 0 {
			if d > 0 {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	var out []string
	for _, name := range names {
		if len(out) == n {
			break
		}
		if name == "info" || name == "config|resetstat" || name == "config" {
			continue // the harness's own reads
		}
		out = append(out, name)
	}
	return out
}
