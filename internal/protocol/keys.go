package protocol

import (
	"bytes"
	"strconv"
	"strings"
)

// KeyPrefix starts every key of every queue.
const KeyPrefix = "emq:"

// MaxQueueName bounds a queue name, in bytes.
const MaxQueueName = 128

// The suffixes of a queue's fixed keys, appended to its base emq:{q}:.
const (
	SuffixVersion = "version" // string: the wire version; the fence
	SuffixMeta    = "meta"    // hash: seq, paused, rate limit settings
	SuffixStats   = "stats"   // hash: lifetime counters
	SuffixPending = "pending" // zset: ready jobs by priority, then id
	SuffixDelayed = "delayed" // zset: delayed and retrying jobs by due ms
	SuffixActive  = "active"  // zset: claimed jobs by lease deadline ms
	SuffixDead    = "dead"    // zset: dead-lettered jobs by time of death ms
	SuffixSignal  = "signal"  // list: at most one token, pushed when pending stops being empty
)

// The prefixes of a queue's derived keys, followed by a job id or a unique key.
const (
	SuffixJob      = "job:"      // hash per job: emq:{q}:job:<id>
	SuffixLogs     = ":logs"     // list per job: emq:{q}:job:<id>:logs
	SuffixUnique   = "unique:"   // string per unique key: emq:{q}:unique:<key>
	SuffixLane     = "lane:"     // zset per lane, its waiting jobs: emq:{q}:lane:<l>
	SuffixKids     = ":kids"     // zset per parent, its children: emq:{q}:job:<id>:kids
	SuffixResults  = ":results"  // hash per parent, child id -> result: emq:{q}:job:<id>:results
	SuffixFailures = ":failures" // hash per parent, child id -> error: emq:{q}:job:<id>:failures
	SuffixDone     = "done:"     // list per waited job, its outcome: emq:{q}:done:<id>
)

// The queue's derived keys of fixed name: the lanes and the rate window. No
// verb declares them; the executors check them against the caller's ACL
// where they touch them, and a call that uses no lane or rate never does.
const (
	SuffixLaneInfo  = "laneinfo"  // hash: active:<l>, cap:<l>, paused:<l>
	SuffixLanes     = "lanes"     // zset: the lanes with waiting or active jobs, score 0
	SuffixTurns     = "turns"     // zset: the ready lanes, score = the lane's turn
	SuffixRate      = "rate"      // zset: the rate log, an entry per claiming call of the last window, expiring when its last entry leaves the window
	SuffixWaiting   = "waiting"   // zset: parents waiting for children, score = id
	SuffixCompleted = "completed" // zset: retained completed jobs, score = completion ms
)

// The worker registry: no verb reads or writes it. Each running Worker
// writes its record with SET PX and indexes it with ZADD; Admin.Workers
// reads them. A dead worker's record expires by itself.
const (
	SuffixWorkers = "workers" // zset: the workers' ids, score = the ms their record expires (the worker's clock)
	SuffixWorker  = "worker:" // string per worker, its record (JSON), with a PX TTL: emq:{q}:worker:<id>
)

// SuffixPartitions is the hash of a partitioned queue's partitions: no verb
// reads or writes it. Open creates and grows it; it maps each partition's
// index to its hash tag, and "keyed" to how many partitions (the first)
// jobs with a unique key or a lane are routed over.
const SuffixPartitions = "partitions"

// ChannelCancels is the suffix of the queue's sharded Pub/Sub channel
// emq:{q}:cancels, on which CANCEL announces a claimed job it ended (the
// message is CancelNotice's): a channel, not a key, in the queue's slot.
const ChannelCancels = "cancels"

// CancelNotice is the message CANCEL publishes on the queue's cancels
// channel for an active job it ended: the job's id, a space, and the
// attempt token of the claim it ended (the row's att as stored).
func CancelNotice(id, token string) string { return id + " " + token }

// ParseCancelNotice splits a cancels message into the job's id and the
// attempt token; ok is false for a message of another form.
func ParseCancelNotice(msg string) (id, token string, ok bool) {
	id, token, ok = strings.Cut(msg, " ")
	return id, token, ok && id != ""
}

// The laneinfo fields of a lane are these prefixes followed by its name.
const (
	FieldLaneActive = "active:" // the lane's claimed jobs; absent at 0
	FieldLaneCap    = "cap:"    // the lane's cap; absent: none
	FieldLanePaused = "paused:" // 1 when the lane is paused
)

// ValidQueueName reports whether name can be a queue name: 1..MaxQueueName
// bytes, no braces (the name is the key's hash tag).
func ValidQueueName(name string) bool {
	return len(name) > 0 && len(name) <= MaxQueueName && !strings.ContainsAny(name, "{}")
}

// Base is the queue base key emq:{name}: from which every key of the queue is
// built. All keys of a queue share the hash tag {name}, so they live in one
// cluster slot.
func Base(name string) string {
	return KeyPrefix + "{" + name + "}:"
}

// QueueOfBase returns the queue name of a base key, or false when base is not
// of the form emq:{name}: with a valid name.
func QueueOfBase(base []byte) ([]byte, bool) {
	if !bytes.HasPrefix(base, []byte(KeyPrefix+"{")) || !bytes.HasSuffix(base, []byte("}:")) {
		return nil, false
	}
	name := base[len(KeyPrefix)+1 : len(base)-2]
	if len(name) == 0 || len(name) > MaxQueueName || bytes.ContainsAny(name, "{}") {
		return nil, false
	}
	return name, true
}

// Keys holds the key names of one queue.
type Keys struct {
	Base, Version, Meta, Stats, Pending, Delayed, Active, Dead, Signal string
}

// KeysOf builds the keys of queue name. The caller validates the name.
func KeysOf(name string) Keys {
	b := Base(name)
	return Keys{
		Base:    b,
		Version: b + SuffixVersion,
		Meta:    b + SuffixMeta,
		Stats:   b + SuffixStats,
		Pending: b + SuffixPending,
		Delayed: b + SuffixDelayed,
		Active:  b + SuffixActive,
		Dead:    b + SuffixDead,
		Signal:  b + SuffixSignal,
	}
}

// Job is the row key of job id.
func (k Keys) Job(id string) string { return k.Base + SuffixJob + id }

// Logs is the log list key of job id.
func (k Keys) Logs(id string) string { return k.Base + SuffixJob + id + SuffixLogs }

// Unique is the key that holds the job id owning unique key u.
func (k Keys) Unique(u string) string { return k.Base + SuffixUnique + u }

// Kids is the zset of job id's children.
func (k Keys) Kids(id string) string { return k.Base + SuffixJob + id + SuffixKids }

// Results is the hash of job id's children's results.
func (k Keys) Results(id string) string { return k.Base + SuffixJob + id + SuffixResults }

// Failures is the hash of job id's children's errors (policy continue).
func (k Keys) Failures(id string) string { return k.Base + SuffixJob + id + SuffixFailures }

// Done is the outcome list of job id, for its waiters.
func (k Keys) Done(id string) string { return k.Base + SuffixDone + id }

// Lane is the key of lane l's waiting jobs.
func (k Keys) Lane(l string) string { return k.Base + SuffixLane + l }

// Cancels is the queue's sharded channel of cancelled claims.
func (k Keys) Cancels() string { return k.Base + ChannelCancels }

// Fixed returns the key of a fixed suffix.
func (k Keys) Fixed(suffix string) string { return k.Base + suffix }

// ValidLaneName reports whether l can be a lane name: 1..MaxLaneName bytes,
// any bytes.
func ValidLaneName(l string) bool { return len(l) > 0 && len(l) <= MaxLaneName }

// HashTag returns the part of key that Valkey Cluster hashes: the bytes
// between the first '{' and the next '}' when that is non-empty, else the
// whole key.
func HashTag(key []byte) []byte {
	open := bytes.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	closing := bytes.IndexByte(key[open+1:], '}')
	if closing <= 0 {
		return key
	}
	return key[open+1 : open+1+closing]
}

// PendingScore is a pending job's score: higher priority first, then FIFO by
// id. Both parts fit a double exactly (priority ≤ MaxPriority, id < 2^42).
func PendingScore(priority int64, id int64) int64 {
	return (MaxPriority-priority)*PriorityStride + id
}

// PriorityStride separates priority bands in the pending score.
const PriorityStride = 1 << 42

// FormatInt is strconv.FormatInt in base 10, kept here so executors spell
// integers alike.
func FormatInt(v int64) string { return strconv.FormatInt(v, 10) }

// ValidJobID reports whether id is a job id as the verbs take it: a
// canonical positive decimal (no sign, no leading zero) of at most MaxJobID.
func ValidJobID(id string) bool {
	if id == "" || len(id) > len(FormatInt(MaxJobID)) || id[0] == '0' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	n, err := strconv.ParseInt(id, 10, 64)
	return err == nil && n <= MaxJobID
}
