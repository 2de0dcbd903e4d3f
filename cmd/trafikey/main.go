// Command trafikey operates trafikey queues and runs the demo.
//
//	trafikey queues                       the queues on a server or cluster
//	trafikey stats <queue>                a queue's counts and lifetime counters
//	trafikey lanes <queue>                a queue's lanes
//	trafikey workers <queue>              the worker processes running on a queue
//	trafikey lane info|pause|resume|cap   one lane: read it, stop or restart its claims, cap it
//	trafikey jobs <queue> --state S       a page of the jobs in a state (pending: by lane too)
//	trafikey inspect <queue> <id>         one job
//	trafikey events <queue>               tail a queue's job events
//	trafikey pause|resume <queue>…        stop or restart claims
//	trafikey promote <queue>              move due delayed jobs to pending now
//	trafikey requeue|remove <queue> <id>… act on jobs (remove takes a waiting parent's flow)
//	trafikey retry|cancel <queue> <id>…   run delayed jobs now, end jobs
//	trafikey schedules …                  list, get, add, update, pause, resume, remove schedules
//	trafikey delete-queue <queue>         delete a queue and all it holds
//	trafikey dash                         the web dashboard and /metrics
//	trafikey demo                         start a local valkey-server and run jobs through it
//
// Exit codes: 0 done, 1 error, 2 usage, 3 not found, 4 refused by the job's
// state (see trafikey --help).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd(os.LookupEnv).ExecuteContext(ctx)
	stop()
	os.Exit(exitCode(err))
}
