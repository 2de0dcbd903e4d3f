package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeyserver"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// These tests drive CLAIM's block time on the native executor: a CLAIM
// that finds nothing blocks its client on the queue's pending key, and the
// verbs that make a job claimable answer it (docs/PROTOCOL.md, "Blocking
// claims").

// blockedClaim is a CLAIM sent on a connection of its own, its reply read
// in the background.
type blockedClaim struct {
	conn  *valkeyserver.Conn
	reply chan claimOutcome
}

type claimOutcome struct {
	v   any
	err error
}

// startBlocked sends CLAIM lease 1 0 block_ms on a new connection of s and
// waits until the server lists one more blocked client than before.
func (q *verbQueue) startBlocked(s *valkeyserver.Server, blockMS int) *blockedClaim {
	q.t.Helper()
	before := blockedClients(q.t, s)
	conn, err := s.Dial(ctxT(q.t))
	if err != nil {
		q.t.Fatal(err)
	}
	q.t.Cleanup(func() { conn.Close() })
	b := &blockedClaim{conn: conn, reply: make(chan claimOutcome, 1)}
	args := q.args(protocol.Claim, "60000", "1", "0", strconv.Itoa(blockMS))
	go func() {
		v, err := conn.Do(context.Background(), args...)
		b.reply <- claimOutcome{v, err}
	}()
	waitBlocked(q.t, s, before+1)
	return b
}

// wait returns the claim's reply.
func (b *blockedClaim) wait(t *testing.T) claimOutcome {
	t.Helper()
	select {
	case r := <-b.reply:
		return r
	case <-ctxT(t).Done():
		t.Fatal("the blocked CLAIM was not answered")
		return claimOutcome{}
	}
}

// stillBlocked fails unless the claim has no reply yet and the server still
// counts n blocked clients, after every command sent before it ran (a PING
// on the same server answers after them).
func (b *blockedClaim) stillBlocked(t *testing.T, s *valkeyserver.Server, n int) {
	t.Helper()
	valkeytest.Do(t, s, "PING")
	select {
	case r := <-b.reply:
		t.Fatalf("the CLAIM was answered: %#v, %v", r.v, r.err)
	default:
	}
	if got := blockedClients(t, s); got != n {
		t.Fatalf("blocked_clients %d, want %d", got, n)
	}
}

func blockedClients(t *testing.T, s *valkeyserver.Server) int {
	t.Helper()
	n, err := strconv.Atoi(infoField(t, s, "clients", "blocked_clients"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func waitBlocked(t *testing.T, s *valkeyserver.Server, n int) {
	t.Helper()
	waitInfo(t, s, "clients", "blocked_clients", strconv.Itoa(n))
}

// claimedIDs is the ids of a CLAIM reply.
func claimedIDs(t *testing.T, v any) []string {
	t.Helper()
	jobs, ok := v.([]any)
	if !ok {
		t.Fatalf("CLAIM reply %#v", v)
	}
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.([]any)[0].(string))
	}
	return ids
}

func wantClaimed(t *testing.T, r claimOutcome, ids ...string) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("CLAIM: %v", r.err)
	}
	if got := claimedIDs(t, r.v); strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Fatalf("CLAIM returned %q, want %q", got, ids)
	}
}

func TestBlockingClaimAnsweredByAdd(t *testing.T) {
	s := startModule(t, valkeyserver.Options{Debug: true})
	q := newVerbQueue(t, s, "b")
	q.do(protocol.Install)
	b := q.startBlocked(s, 30000)
	ids := q.add([3]string{"x", "0", "3"})
	wantClaimed(t, b.wait(t), ids...)
	if got := valkeytest.Do(t, s, "HGET", q.k.Job(ids[0]), "state"); got != protocol.StateActive {
		t.Fatalf("state %#v, want active", got)
	}
	if got := valkeytest.Do(t, s, "ZCARD", q.k.Active); got != int64(1) {
		t.Fatalf("ZCARD active %#v", got)
	}
	waitBlocked(t, s, 0)
	// a job already there is answered at once, block time or not
	ids = q.add([3]string{"y", "0", "3"})
	if got := claimedIDs(t, q.do(protocol.Claim, "60000", "1", "0", "30000")); len(got) != 1 || got[0] != ids[0] {
		t.Fatalf("CLAIM with a job ready: %q", got)
	}
}

// Two clients blocked on one queue: one job answers the first blocked, the
// other stays blocked until the next job.
func TestBlockingClaimsServedInOrder(t *testing.T) {
	s := startModule(t, valkeyserver.Options{Debug: true})
	q := newVerbQueue(t, s, "b")
	q.do(protocol.Install)
	first := q.startBlocked(s, 30000)
	second := q.startBlocked(s, 30000)
	a := q.add([3]string{"a", "0", "3"})
	wantClaimed(t, first.wait(t), a...)
	second.stillBlocked(t, s, 1)
	b := q.add([3]string{"b", "0", "3"})
	wantClaimed(t, second.wait(t), b...)
}

func TestBlockingClaimAnsweredByPromoteRecoverResume(t *testing.T) {
	s := startModule(t, valkeyserver.Options{Debug: true})
	t.Run("promote", func(t *testing.T) {
		q := newVerbQueue(t, s, "promote")
		q.t = t
		q.do(protocol.Install)
		ids := q.add([3]string{"later", "600000", "3"})
		b := q.startBlocked(s, 30000)
		if got := q.do(protocol.Promote, "10"); got != int64(0) {
			// nothing due: PROMOTE moves nothing and the claim stays blocked
			t.Fatalf("PROMOTE %#v", got)
		}
		b.stillBlocked(t, s, 1)
		q.do(protocol.PromoteAll, "10")
		wantClaimed(t, b.wait(t), ids...)
	})
	t.Run("recover", func(t *testing.T) {
		q := newVerbQueue(t, s, "recover")
		q.t = t
		q.do(protocol.Install)
		ids := q.add([3]string{"x", "0", "3"})
		q.claim(1, 1) // a lease of 1 ms, expired at once
		time.Sleep(5 * time.Millisecond)
		b := q.startBlocked(s, 30000)
		q.do(protocol.Recover, "10")
		wantClaimed(t, b.wait(t), ids...)
	})
	t.Run("resume", func(t *testing.T) {
		q := newVerbQueue(t, s, "resume")
		q.t = t
		q.do(protocol.Install)
		q.do(protocol.Pause)
		b := q.startBlocked(s, 30000)
		// the ADD creates pending, which wakes the claim: paused, it finds
		// nothing and stays blocked, writing nothing
		ids := q.add([3]string{"x", "0", "3"})
		b.stillBlocked(t, s, 1)
		if got := valkeytest.Do(t, s, "ZCARD", q.k.Pending); got != int64(1) {
			t.Fatalf("ZCARD pending %#v", got)
		}
		q.do(protocol.Resume)
		wantClaimed(t, b.wait(t), ids...)
	})
}

// A claim that times out answers the empty array and writes nothing; one
// whose client goes away while blocked writes nothing either, and leaves
// the next job to the next claim.
func TestBlockingClaimTimeoutAndDisconnect(t *testing.T) {
	s := startModule(t, valkeyserver.Options{Debug: true})
	q := newVerbQueue(t, s, "b")
	q.do(protocol.Install)
	before := valkeytest.Digest(t, s)
	v := q.do(protocol.Claim, "60000", "1", "0", "20")
	if got, ok := v.([]any); !ok || len(got) != 0 {
		t.Fatalf("CLAIM timed out: %#v, want the empty array", v)
	}
	if after := valkeytest.Digest(t, s); after != before {
		t.Fatal("a CLAIM that timed out changed the dataset")
	}
	b := q.startBlocked(s, 30000)
	b.conn.Close()
	waitBlocked(t, s, 0)
	if after := valkeytest.Digest(t, s); after != before {
		t.Fatal("a CLAIM whose client went away changed the dataset")
	}
	ids := q.add([3]string{"x", "0", "3"})
	if got := valkeytest.Do(t, s, "ZCARD", q.k.Active); got != int64(0) {
		t.Fatalf("ZCARD active %#v after the blocked client went away", got)
	}
	if got := claimedIDs(t, q.do(protocol.Claim, "60000", "1")); len(got) != 1 || got[0] != ids[0] {
		t.Fatalf("CLAIM after: %q", got)
	}
	// CLIENT UNBLOCK answers as a timeout
	b = q.startBlocked(s, 30000)
	list := valkeytest.Do(t, s, "CLIENT", "LIST")
	cid := blockedClientID(t, list.(string))
	before = valkeytest.Digest(t, s)
	if got := valkeytest.Do(t, s, "CLIENT", "UNBLOCK", cid); got != int64(1) {
		t.Fatalf("CLIENT UNBLOCK %#v", got)
	}
	r := b.wait(t)
	if got, ok := r.v.([]any); r.err != nil || !ok || len(got) != 0 {
		t.Fatalf("CLAIM after CLIENT UNBLOCK: %#v, %v", r.v, r.err)
	}
	if after := valkeytest.Digest(t, s); after != before {
		t.Fatal("CLIENT UNBLOCK of a CLAIM changed the dataset")
	}
}

// blockedClientID finds the id of the client blocked in EMQ.CLAIM in a
// CLIENT LIST reply.
func blockedClientID(t *testing.T, list string) string {
	t.Helper()
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(strings.ToLower(line), "cmd=emq.claim") || !strings.Contains(line, "flags=b") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if id, ok := strings.CutPrefix(f, "id="); ok {
				return id
			}
		}
	}
	t.Fatalf("no client blocked in EMQ.CLAIM:\n%s", list)
	return ""
}

// claimConn starts a server with the module, installs queue "b" and dials
// a connection of the test's own, closed at cleanup.
func claimConn(t *testing.T) (*valkeyserver.Server, *verbQueue, *valkeyserver.Conn) {
	t.Helper()
	s := startModule(t, valkeyserver.Options{Debug: true})
	q := newVerbQueue(t, s, "b")
	q.do(protocol.Install)
	conn, err := s.Dial(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return s, q, conn
}

// requireAnsweredAtOnce checks that no client is blocked and the dataset
// is still the one whose digest was before.
func requireAnsweredAtOnce(t *testing.T, s *valkeyserver.Server, before string) {
	t.Helper()
	if got := blockedClients(t, s); got != 0 {
		t.Fatalf("blocked_clients %d", got)
	}
	if after := valkeytest.Digest(t, s); after != before {
		t.Fatal("the dataset changed")
	}
}

// Inside MULTI and inside a script a CLAIM cannot block: it answers at once.
func TestBlockingClaimAnswersAtOnceInMultiAndScripts(t *testing.T) {
	s, q, conn := claimConn(t)
	before := valkeytest.Digest(t, s)
	res, err := conn.DoMulti(ctxT(t), []string{"MULTI"}, q.args(protocol.Claim, "60000", "1", "0", "30000"), []string{"EXEC"})
	if err != nil {
		t.Fatal(err)
	}
	if got := flat(res[2]); got != "" {
		t.Fatalf("EXEC of a CLAIM on an empty queue: %#v, want one empty array", res[2])
	}
	if inner, ok := res[2].([]any); !ok || len(inner) != 1 {
		t.Fatalf("EXEC: %#v", res[2])
	}
	// a script: the caller's user is not visible there, so the claim's
	// derived keys are refused, at once
	args := q.args(protocol.Claim, "60000", "1", "0", "30000")
	script := append([]string{"EVAL", "return redis.pcall(unpack(ARGV))", "0"}, args...)
	_, err = conn.Do(ctxT(t), script...)
	var re valkeyserver.ReplyError
	if !errors.As(err, &re) || !strings.HasPrefix(string(re), "NOPERM") {
		t.Fatalf("CLAIM from a script: %v, want NOPERM at once", err)
	}
	requireAnsweredAtOnce(t, s, before)
	// with a job, the claim inside MULTI returns it
	ids := q.add([3]string{"x", "0", "3"})
	res, err = conn.DoMulti(ctxT(t), []string{"MULTI"}, q.args(protocol.Claim, "60000", "1", "0", "30000"), []string{"EXEC"})
	if err != nil {
		t.Fatal(err)
	}
	if got := claimedIDs(t, res[2].([]any)[0]); len(got) != 1 || got[0] != ids[0] {
		t.Fatalf("EXEC: %q", got)
	}
}

// TestBlockingClaimAnswersAtOnceWhenSubscribed: a RESP3 client subscribed to
// a channel may send any command, but Valkey 9.1 answers nothing to such a
// client's module command that blocks, and runs its next command at once.
// So a subscribed client's CLAIM does not block: it answers the empty array
// at once, writing nothing, as inside MULTI; one that finds a job returns
// it. A CLAIM that blocked would hold the PING behind it for a day (8.0) or
// leave it the CLAIM's reply (9.1).
func TestBlockingClaimAnswersAtOnceWhenSubscribed(t *testing.T) {
	s, q, conn := claimConn(t)
	if _, err := conn.Do(ctxT(t), "HELLO", "3"); err != nil {
		t.Fatal(err)
	}
	if v, err := conn.Do(ctxT(t), "SSUBSCRIBE", "ch"); err != nil || flat(v) != "ssubscribe ch 1" {
		t.Fatalf("SSUBSCRIBE: %#v, %v", v, err)
	}
	block := strconv.Itoa(protocol.MaxBlockMS)
	before := valkeytest.Digest(t, s)
	res, err := conn.DoMulti(ctxT(t), q.args(protocol.Claim, "60000", "1", "0", block), []string{"PING"})
	if err != nil {
		t.Fatalf("CLAIM then PING: %v", err)
	}
	if jobs, ok := res[0].([]any); !ok || len(jobs) != 0 || res[1] != "PONG" {
		t.Fatalf("CLAIM then PING: %#v, want the empty array, then PONG", res)
	}
	requireAnsweredAtOnce(t, s, before)
	ids := q.add([3]string{"x", "0", "3"})
	v, err := conn.Do(ctxT(t), q.args(protocol.Claim, "60000", "1", "0", block)...)
	wantClaimed(t, claimOutcome{v, err}, ids...)
}

// The writes of a claim answered from its block reach a replica and the AOF
// as the writes of any CLAIM: their effects, never EMQ.CLAIM (the replica
// has no module, as the differential's).
func TestBlockingClaimReplicatesItsEffects(t *testing.T) {
	p := startModule(t, valkeyserver.Options{Debug: true, AOF: true})
	r := valkeytest.Start(t, valkeyserver.Options{Debug: true, ReplicaOf: p.Addr()})
	if err := r.WaitReplicaSync(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	q := newVerbQueue(t, p, "b")
	q.do(protocol.Install)
	b := q.startBlocked(p, 30000)
	ids := q.add([3]string{"x", "0", "3"}, [3]string{"y", "0", "3"})
	wantClaimed(t, b.wait(t), ids[0])
	want := valkeytest.Snapshot(t, p, "emq:*")
	valkeytest.WaitReplicated(t, p, r)
	valkeytest.RequireUnchanged(t, want, valkeytest.Snapshot(t, r, "emq:*"))
	if got := valkeytest.Do(t, r, "HGET", q.k.Job(ids[0]), "state"); got != protocol.StateActive {
		t.Fatalf("replica: state %#v", got)
	}
	aof := readAOF(t, p)
	if strings.Contains(strings.ToUpper(aof), "EMQ.") {
		t.Fatalf("the AOF holds an EMQ command:\n%s", aof)
	}
	if !strings.Contains(aof, "ZPOPMIN") {
		t.Fatalf("the AOF lacks the claim's ZPOPMIN:\n%s", aof)
	}
	// the AOF replays to the same dataset
	if err := p.Restart(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	valkeytest.RequireUnchanged(t, want, valkeytest.Snapshot(t, p, "emq:*"))
}

// A role change (the primary becomes a replica) unblocks the claim with the
// server's error; nothing was written for it.
func TestBlockingClaimOnRoleChange(t *testing.T) {
	p := startModule(t, valkeyserver.Options{Debug: true})
	r := valkeytest.Start(t, valkeyserver.Options{Debug: true, Module: valkeytest.ModulePath(t), ReplicaOf: p.Addr()})
	if err := r.WaitReplicaSync(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	q := newVerbQueue(t, p, "b")
	q.do(protocol.Install)
	b := q.startBlocked(p, 30000)
	before := valkeytest.Digest(t, p)
	valkeytest.Do(t, p, "FAILOVER")
	res := b.wait(t)
	var re valkeyserver.ReplyError
	if !errors.As(res.err, &re) || !strings.HasPrefix(string(re), "UNBLOCKED") {
		t.Fatalf("blocked CLAIM on a role change: %#v, %v; want UNBLOCKED", res.v, res.err)
	}
	ctx := ctxT(t)
	for {
		if role, _ := r.Do(ctx, "ROLE"); role != nil && role.([]any)[0] == "master" {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the failover did not happen")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := valkeytest.Digest(t, r); got != before {
		t.Fatal("the new primary's dataset differs from the old one's while the claim was blocked")
	}
}

// In a cluster the blocked claim waits on its queue's node and an ADD
// through the cluster answers it.
func TestBlockingClaimInCluster(t *testing.T) {
	c := valkeytest.StartCluster(t, valkeyserver.ClusterOptions{Primaries: 3, Base: valkeyserver.Options{Module: valkeytest.ModulePath(t)}})
	cc := valkeytest.ClusterClient(t, c)
	k := protocol.KeysOf("blocked")
	var node *valkeyserver.Server
	for _, n := range c.Primaries() {
		if _, err := n.Do(ctxT(t), "EXISTS", k.Pending); err == nil {
			node = n
		}
	}
	if node == nil {
		t.Fatal("no primary serves the queue's slot")
	}
	q := newVerbQueue(t, node, "blocked")
	q.do(protocol.Install)
	b := q.startBlocked(node, 30000)
	add := protocol.Add
	keys := add.KeyNames(k)
	args := append([]string{add.Command, strconv.Itoa(len(keys))}, keys...)
	args = append(args, "1", "0", "x", "0", "0", "3", "fixed", "0", "", "0")
	v, err := cc.Do(ctxT(t), cc.B().Arbitrary(args...).Build()).ToArray()
	if err != nil {
		t.Fatal(err)
	}
	id, _ := v[0].ToString()
	wantClaimed(t, b.wait(t), id)
}

// A job added to a lane (pending absent) answers a blocked claim, and a
// lane at its cap keeps the claim blocked until a completion frees a slot.
func TestBlockingClaimWithLanes(t *testing.T) {
	s := startModule(t, valkeyserver.Options{Debug: true})
	q := newVerbQueue(t, s, "bl")
	q.do(protocol.Install)
	q.do(protocol.LaneCap, "l", "1")
	b := q.startBlocked(s, 30000)
	add := func(data string) string {
		t.Helper()
		v := valkeytest.Do(t, s, verbArgs(protocol.Add, "bl", laneAddArgs(append(job(data), "l"))...)...)
		return v.([]any)[0].(string)
	}
	first := add("a")
	r := b.wait(t)
	wantClaimed(t, r, first)
	token := strconv.FormatInt(r.v.([]any)[0].([]any)[2].(int64), 10)
	b = q.startBlocked(s, 30000)
	second := add("b") // the lane is at its cap: nothing to claim
	b.stillBlocked(t, s, 1)
	q.do(protocol.Complete, first, token, "")
	wantClaimed(t, b.wait(t), second)
}

// A wake whose rerun is refused answers the refusal and ends the block,
// writing nothing: here the fence, the queue's version changed while the
// claim waited, and a job planted in pending by hand wakes it.
func TestBlockingClaimRefusedOnWake(t *testing.T) {
	s := startModule(t, valkeyserver.Options{Debug: true})
	q := newVerbQueue(t, s, "b")
	q.do(protocol.Install)
	b := q.startBlocked(s, 30000)
	valkeytest.Do(t, s, "SET", q.k.Version, "99")
	valkeytest.Do(t, s, "HSET", q.k.Job("1"), "data", "x", "att", "0", "state", "pending")
	valkeytest.Do(t, s, "ZADD", q.k.Pending, "1", "1")
	r := b.wait(t)
	var re valkeyserver.ReplyError
	if !errors.As(r.err, &re) || string(re) != protocol.ErrWireFound("99") {
		t.Fatalf("woken CLAIM: %#v, %v; want %q", r.v, r.err, protocol.ErrWireFound("99"))
	}
	// the planted job is where it was put: nothing popped, leased or counted
	if got := valkeytest.Do(t, s, "ZRANGE", q.k.Pending, "0", "-1"); flat(got) != "1" {
		t.Fatalf("pending %#v", got)
	}
	if got := valkeytest.Do(t, s, "HGETALL", q.k.Job("1")); flat(got) != "data x att 0 state pending" {
		t.Fatalf("row %#v", got)
	}
	if got := valkeytest.Do(t, s, "EXISTS", q.k.Active); got != int64(0) {
		t.Fatalf("EXISTS active %#v", got)
	}
	waitBlocked(t, s, 0)
}
