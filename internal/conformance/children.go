package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testChildren: CHILDREN's pages of a parent's children, each with its
// state, result and failure, and its refusals. The flow scenarios
// (flows.go) read the children of the parents they run too.
func testChildren(t *testing.T, env Env) {
	scenario(t, env, "children in pages", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("a", "1"), child("b", "1"), child("c", "1"), child("d", "1"), child("e", "1"))
		pend := "pending"
		require.Equal(t, Arr(childEntry("2", pend, "", ""), childEntry("3", pend, "", "")), q.call(protocol.Children, "1", "0", "2"))
		require.Equal(t, Arr(childEntry("4", pend, "", ""), childEntry("5", pend, "", "")), q.call(protocol.Children, "1", "3", "2"))
		require.Equal(t, Arr(childEntry("6", pend, "", "")), q.call(protocol.Children, "1", "5", "2"))
		require.Equal(t, Arr(), q.call(protocol.Children, "1", "6", "2"))
		require.Equal(t, Arr(), q.call(protocol.Children, "2", "0", "2"), "a job without children")
	})
	scenario(t, env, "kids denied before its type", func(t *testing.T, q *queue) {
		q.install()
		q.plant(q.k.Kids("1"), "zset")
		user := q.as(map[string]string{classFlows: ""})
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Children, "1", "0", "10"))
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Children, "1", "0", "10"))
	})
	scenario(t, env, "a child's row of another type", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("c", "1"))
		q.plant(q.k.Job("2"), "hash")
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Children, "1", "0", "10"))
	})
	scenario(t, env, "no parent, no children", func(t *testing.T, q *queue) {
		q.install()
		require.Equal(t, Arr(), q.unchanged(q.verb(protocol.Children, "9", "0", "10")))
		q.addOne("x")
		require.Equal(t, Arr(), q.call(protocol.Children, "1", "0", "10"), "a job without children")
	})
	scenario(t, env, "each child's state, result and failure", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"},
			job{data: "a", parent: "1", attempts: "1", onfail: protocol.OnFailContinue},
			child("b", "1"), child("c", "1"),
			job{data: "d", parent: "1", delay: "600000"})
		cs := q.claimAll()
		require.Len(t, cs, 3)
		q.kill(cs["2"], "boom")
		q.finish(cs["3"], "ok")
		require.Equal(t, Arr(
			childEntry("2", "dead", "", "boom"),
			childEntry("3", "", "ok", ""), // completed and gone: no state
			childEntry("4", "active", "", ""),
			childEntry("5", "delayed", "", ""),
		), q.call(protocol.Children, "1", "0", "10"))
	})
	scenario(t, env, "an empty result reads as none", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("a", "1"), child("b", "1"))
		cs := q.claimAll()
		q.finish(cs["2"], "")
		require.Equal(t, Arr(childEntry("2", "", "", ""), childEntry("3", "active", "", "")), q.call(protocol.Children, "1", "0", "10"))
	})
	scenario(t, env, "a child past the page is not read", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("a", "1"), child("b", "1"))
		q.plant(q.k.Job("3"), "hash")
		require.Equal(t, Arr(childEntry("2", "pending", "", "")), q.call(protocol.Children, "1", "0", "1"))
		q.refuse(protocol.ErrWrongType, q.verb(protocol.Children, "1", "2", "1"))
	})
	scenario(t, env, "the fence before the flow keys", func(t *testing.T, q *queue) {
		q.install()
		q.plant(q.k.Kids("1"), "zset")
		q.do("DEL", q.k.Version)
		q.refuse(protocol.ErrWireMissing, q.verb(protocol.Children, "1", "0", "10"))
	})
	scenario(t, env, "a child's row denied", func(t *testing.T, q *queue) {
		q.install()
		q.add(job{data: "p"}, child("a", "1"))
		user := q.as(map[string]string{classRows: ""}, "%R~"+q.k.Job("1"))
		user.refuse(protocol.ErrNoPerm, user.verb(protocol.Children, "1", "0", "10"))
		require.Equal(t, Arr(), user.call(protocol.Children, "1", "2", "10"), "an empty page reads no row")
	})
}
