package conformance

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/internal/valkeytest"
)

// readOnlyUser may call any command but only read keys: an operator's
// dashboard or a metrics scraper.
const readOnlyUser = "reader"

// RunReadOnly checks the read verbs where writes are not allowed: a user
// whose keys are read-only (%R~*) runs STATS and INSPECT on both
// executors and is refused every write verb with nothing written; during
// CLIENT PAUSE WRITE the read verbs answer at once while the writers are
// held. It pauses the server, so env's server must be the test's own.
func RunReadOnly(t *testing.T, env Env) {
	// Each read verb on a queue of its own, prepared by its fixture.
	queues := map[*protocol.Verb]*queue{}
	args := map[*protocol.Verb][]string{}
	for _, v := range protocol.All {
		if !v.Write {
			queues[v] = newQueue(t, env)
			args[v] = fixtures[v](queues[v])
		}
	}
	q := newQueue(t, env)
	q.do("ACL", "SETUSER", readOnlyUser, "on", ">pw", "+@all", "%R~*")
	rc := valkeytest.ClientWith(t, env.Server, valkey.ClientOption{Username: readOnlyUser, Password: "pw"})
	readerEnv := Env{Server: env.Server, Client: rc, Exec: env.NewExec(rc), NewExec: env.NewExec}
	// The server refuses a write verb on its declared keys itself, in its
	// own words: a plain SET shows them. Redis words it otherwise than
	// Valkey, whose text the module's own refusals of derived keys copy.
	denied := Render(rc.Do(t.Context(), rc.B().Set().Key(q.k.Base+"denied").Value("x").Build()))
	version, err := env.Server.Version(t.Context())
	require.NoError(t, err)
	noPerm := protocol.ErrNoPerm
	if version.Product == "valkey" {
		require.Equal(t, Err(protocol.ErrNoPerm), denied, "the server's refusal of a denied key")
	} else {
		var ok bool
		noPerm, ok = strings.CutPrefix(denied, "(error) ")
		require.True(t, ok, "SET of a denied key is refused: %s", denied)
		noPerm, err = strconv.Unquote(noPerm)
		require.NoError(t, err)
	}

	t.Run("read-only user", func(t *testing.T) {
		for _, v := range protocol.All {
			if !v.Write {
				rq := queues[v]
				rq.t = t
				reader := &queue{t: t, env: readerEnv, name: rq.name, k: rq.k}
				want, got := rq.call(v, args[v]...), reader.call(v, args[v]...)
				// SCHEDULE.DUE replies the server's time in ms: a pair of
				// calls that straddles a millisecond differs in it alone,
				// and the next pair does not.
				for try := 0; v == protocol.ScheduleDue && want != got && try < 5; try++ {
					want, got = rq.call(v, args[v]...), reader.call(v, args[v]...)
				}
				require.Equal(t, want, got, "%s as a read-only user", v.Command)
				continue
			}
			// A write verb on a valid call is refused by the server's ACL on
			// the declared keys before it runs, in the server's own words
			// (noPerm).
			wq := newQueue(t, env)
			wargs := fixtures[v](wq)
			w := &queue{t: t, env: readerEnv, name: wq.name, k: wq.k}
			w.refuse(noPerm, w.verb(v, wargs...))
		}
	})

	t.Run("paused", func(t *testing.T) {
		q.t = t
		q.do("CLIENT", "PAUSE", "60000", "WRITE")
		defer q.do("CLIENT", "UNPAUSE")
		for _, v := range protocol.All {
			if v.Write {
				continue
			}
			// A held call would wait the whole pause: the bound only tells a
			// hold from an answer.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			res := env.Exec.Exec(ctx, v, v.KeyNames(queues[v].k), args[v])
			cancel()
			require.NoError(t, res.Error(), "%s answers during CLIENT PAUSE WRITE", v.Command)
		}
	})
}
