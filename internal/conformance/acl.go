package conformance

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// The keys derived from a queue's base, by class, as ACL key patterns: a
// row job:<id> (ends in a digit), its logs job:<id>:logs, a unique key
// unique:<key>, the lane keys lane:<l>, laneinfo and lanes, the ready lanes
// turns, the rate window rate, and the flow keys (a job's kids, results and
// failures, the outcome lists done:<id>, waiting and completed).
const (
	classRows   = "rows"
	classLogs   = "logs"
	classUnique = "unique"
	classLanes  = "lanes"
	classTurns  = "turns"
	classRate   = "rate"
	classFlows  = "flows"
)

// fixedSuffixes are the queue's fixed keys that verbs declare.
var fixedSuffixes = []string{
	protocol.SuffixVersion, protocol.SuffixMeta, protocol.SuffixStats, protocol.SuffixPending,
	protocol.SuffixDelayed, protocol.SuffixActive, protocol.SuffixDead, protocol.SuffixSignal,
}

// aclClasses are the classes of derived keys, in the order as names them.
var aclClasses = []string{classRows, classLogs, classUnique, classLanes, classTurns, classRate, classFlows}

// aclUserSeq names the scenarios' ACL users apart.
var aclUserSeq atomic.Int64

// as returns the queue seen by a new ACL user that may run every command
// and touch the queue's declared keys, and whose access to the derived keys
// of each class is perms[class]: "RW", "R", "W" or "" (none); a class not
// named is RW. A fixed key's suffix (meta, signal, …) may be named too, for
// a verb that derives it rather than declaring it. extra are more ACL rules
// (key patterns of single keys).
func (q *queue) as(perms map[string]string, extra ...string) *queue {
	q.t.Helper()
	name := "acl" + strconv.FormatInt(aclUserSeq.Add(1), 10)
	base := q.k.Base
	patterns := map[string][]string{
		classRows:   {base + "job:*[0-9]"},
		classLogs:   {base + "job:*:logs"},
		classUnique: {base + "unique:*"},
		classLanes:  {base + "lane*"},
		classTurns:  {base + protocol.SuffixTurns},
		classRate:   {base + protocol.SuffixRate},
		classFlows: {base + "job:*" + protocol.SuffixKids, base + "job:*" + protocol.SuffixResults,
			base + "job:*" + protocol.SuffixFailures, base + protocol.SuffixDone + "*",
			base + protocol.SuffixWaiting, base + protocol.SuffixCompleted},
	}
	rules := []string{"SETUSER", name, "on", ">pw", "+@all", "%RW~" + base}
	for _, suffix := range fixedSuffixes {
		p, ok := perms[suffix]
		if !ok {
			p = "RW"
		}
		if p != "" {
			rules = append(rules, "%"+p+"~"+base+suffix)
		}
	}
	for _, class := range aclClasses {
		p, ok := perms[class]
		if !ok {
			p = "RW"
		}
		if p != "" {
			for _, pattern := range patterns[class] {
				rules = append(rules, "%"+p+"~"+pattern)
			}
		}
	}
	rules = append(rules, extra...)
	q.do(append([]string{"ACL"}, rules...)...)
	c := valkeytest.ClientWith(q.t, q.env.Server, valkey.ClientOption{Username: name, Password: "pw"})
	return &queue{t: q.t, env: Env{Server: q.env.Server, Client: c, Exec: q.env.NewExec(c)}, name: q.name, k: q.k}
}

// aclNeeds is the access each verb, called as its fixture prepares it, needs
// on each class of derived keys (docs/PROTOCOL.md, "Key layout"). The
// fixtures complete a plain job, whose flow keys are not touched; a
// parent's are (testACL).
var aclNeeds = map[*protocol.Verb]map[string]string{
	protocol.Add:          {classRows: "RW"},
	protocol.Extend:       {classRows: "R"},
	protocol.Complete:     {classRows: "RW", classLogs: "W"},
	protocol.CompleteMany: {classRows: "RW", classLogs: "W"},
	protocol.Fail:         {classRows: "RW"},
	protocol.Recover:      {classRows: "RW"},
	protocol.Promote:      {classRows: "RW"},
	protocol.Remove:       {classRows: "RW", classLogs: "W", classFlows: "W"},
	protocol.Requeue:      {classRows: "RW"},
	protocol.Log:          {classRows: "R", classLogs: "RW"},
	protocol.Progress:     {classRows: "RW"},
	protocol.Inspect:      {classRows: "R", classLogs: "R"},
	protocol.Claim:        {classRows: "RW", classTurns: "RW"},
	protocol.Stats:        {classLanes: "R", classFlows: "R"},
	protocol.LaneCap:      {classLanes: "RW", classTurns: "RW"},
	protocol.LanePause:    {classLanes: "RW", classTurns: "RW"},
	protocol.LaneResume:   {classLanes: "RW", classTurns: "RW"},
	protocol.Lane:         {classLanes: "R"},
	protocol.Lanes:        {classLanes: "R"},
	protocol.Trim:         {classRows: "RW", classLogs: "RW", classFlows: "RW"},
	protocol.Children:     {classRows: "R", classFlows: "R"},
	protocol.Jobs:         {classRows: "R"},
	protocol.RequeueDead:  {classRows: "RW"},
	protocol.RemoveDead:   {classRows: "RW", classLogs: "RW", classFlows: "RW"},
	protocol.PromoteAll:   {classRows: "RW"},
	protocol.Retry:        {classRows: "RW"},
	protocol.Reschedule:   {classRows: "RW"},
	protocol.Cancel:       {classRows: "RW"},
}

// allows reports whether access have grants every permission of need.
func allows(have, need string) bool {
	for _, p := range need {
		if !strings.ContainsRune(have, p) {
			return false
		}
	}
	return true
}

// testACL: keys derived from the base are checked against the caller's
// ACL before they are touched; a denial is NOPERM with nothing written, on
// both executors, in the place the verb would first read the key.
func testACL(t *testing.T, env Env) {
	for _, v := range protocol.All {
		for _, class := range []string{classRows, classLogs, classLanes, classTurns, classRate, classFlows} {
			for _, have := range []string{"R", "W", ""} {
				name := v.Name + " with " + class + " " + orDefault(have, "denied")
				if have != "" {
					name = v.Name + " with " + class + " " + have + " only"
				}
				scenario(t, env, name, func(t *testing.T, q *queue) {
					args := fixtures[v](q)
					user := q.as(map[string]string{class: have})
					if allows(have, aclNeeds[v][class]) {
						require.NoError(t, user.exec(v, args...).Error(), "%s needs no more than %s on %s", v.Command, have, class)
						return
					}
					user.refuse(protocol.ErrNoPerm, user.verb(v, args...))
				})
			}
		}
	}

	scenario(t, env, "add with a unique key read-only", func(t *testing.T, q *queue) {
		q.install()
		user := q.as(map[string]string{classUnique: "R"})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Add, addArgs(job{data: "a"}, job{data: "b", unique: "k"})...))
	})
	scenario(t, env, "add: a duplicate in the batch comes before a denied row", func(t *testing.T, q *queue) {
		q.install()
		user := q.as(map[string]string{classRows: "R"})
		user.refuse(protocol.ErrAddDuplicateInBatch, user.verb(protocol.Add, addArgs(job{data: "a", unique: "k"}, job{data: "b", unique: "k"})...))
	})
	for _, v := range []*protocol.Verb{protocol.Complete, protocol.CompleteMany, protocol.Remove} {
		scenario(t, env, v.Name+" of a job holding a unique key read-only", func(t *testing.T, q *queue) {
			q.install()
			id := q.add(job{data: "a", unique: "k"})[0]
			args := []string{id, "0"}
			if v != protocol.Remove {
				c := q.claimOne()
				args = []string{c.id, c.token(), ""}
				if v == protocol.CompleteMany {
					args = append([]string{"1"}, args...)
				}
			}
			user := q.as(map[string]string{classUnique: "R"})
			user.refuse(protocol.ErrNoPerm, user.verb(v, args...))
		})
	}

	scenario(t, env, "the fence comes before a denied row", func(t *testing.T, q *queue) {
		args := fixtures[protocol.Complete](q)
		q.do("SET", q.k.Version, "1")
		user := q.as(map[string]string{classRows: ""})
		user.refuse(protocol.ErrWireFound("1"), user.verb(protocol.Complete, args...))
	})
	scenario(t, env, "a stale token comes before denied logs", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		user := q.as(map[string]string{classLogs: ""})
		user.refuse(protocol.ErrStale(protocol.Complete.Name), user.verb(protocol.Complete, c.id, "99", ""))
	})
	scenario(t, env, "claim: an earlier row's type comes before a later denied row", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		q.plant(q.k.Job("1"), "hash")
		user := q.as(map[string]string{classRows: ""}, "%RW~"+q.k.Job("1"))
		user.refuse(protocol.ErrWrongType, user.verb(protocol.Claim, "30000", "2"))
	})
	scenario(t, env, "claim: a later denied row refuses the whole claim", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "a"}, job{data: "b"})
		user := q.as(map[string]string{classRows: ""}, "%RW~"+q.k.Job("1"))
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Claim, "30000", "2"))
		require.Len(t, q.claim(30000, 2), 2, "both jobs are still pending")
	})
	scenario(t, env, "completemany: a job not completed needs no logs", func(t *testing.T, q *queue) {
		c := q.active(job{data: "a"})
		user := q.as(map[string]string{classLogs: ""})
		require.Equal(t, Arr(Int(-1)), user.unchanged(user.verb(protocol.CompleteMany, "1", c.id, "99", "")))
	})
	for _, v := range []*protocol.Verb{protocol.Complete, protocol.CompleteMany} {
		args := func(c claimed) []string {
			if v == protocol.CompleteMany {
				return []string{"1", c.id, c.token(), ""}
			}
			return []string{c.id, c.token(), ""}
		}
		scenario(t, env, v.Name+": a plain job's flow keys are not checked", func(t *testing.T, q *queue) {
			c := q.active(job{data: "a"})
			user := q.as(map[string]string{classFlows: ""})
			require.NoError(t, user.exec(v, args(c)...).Error())
			require.Equal(t, Int(0), q.r("EXISTS", q.k.Job(c.id)))
		})
		scenario(t, env, v.Name+": a parent's flow keys denied", func(t *testing.T, q *queue) {
			q.install()
			q.add(job{data: "p"}, child("c", "1"))
			q.finish(q.claimOne(), "r")
			p := q.claimOne()
			require.Equal(t, "1", p.id)
			user := q.as(map[string]string{classFlows: ""})
			user.refuse(protocol.ErrNoPerm, user.verb(v, args(p)...))
			require.NoError(t, q.exec(v, args(p)...).Error())
			require.Equal(t, Int(0), q.r("EXISTS", q.k.Job(p.id), q.k.Kids(p.id), q.k.Results(p.id)))
		})
	}
}
