package conformance

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// testBinary: payloads and texts are bytes, stored and returned untouched.
func testBinary(t *testing.T, env Env) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i*7 + i>>8) // every byte value, no short period
	}
	for _, tc := range []struct{ name, data string }{
		{"empty", ""},
		{"NUL", "\x00"},
		{"NUL inside", "a\x00b\x00"},
		{"invalid UTF-8", "\xff\xfe\xc3\x28\xed\xa0\x80"},
		{"all 256 byte values", string(all)},
		{"CR LF and RESP", "\r\n$-1\r\n*1\r\n"},
		{"1 MB", string(big)},
	} {
		scenario(t, env, tc.name, func(t *testing.T, q *queue) {
			q.install()
			id := q.addOne(tc.data)
			require.True(t, Bulk(tc.data) == inspectField(q, id, "data"), "INSPECT data before the claim")
			c := q.claimOne()
			require.True(t, tc.data == c.data, "CLAIM data: %d bytes back for %d", len(c.data), len(tc.data))
			require.True(t, Bulk(tc.data) == inspectField(q, id, "data"), "INSPECT data after the claim")
			if len(tc.data) <= protocol.MaxText {
				q.must(protocol.Log, id, c.token(), tc.data, "10")
				q.must(protocol.Progress, id, c.token(), tc.data)
				require.Equal(t, Bulk(protocol.FailRetry), q.call(protocol.Fail, id, c.token(), "1", tc.data))
				require.Equal(t, Bulk(tc.data), inspectField(q, id, "err"))
				require.Equal(t, Bulk(tc.data), inspectField(q, id, "prog"))
				require.Equal(t, Bulks(tc.data), inspectField(q, id, "logs"))
			}
		})
	}
	// One CLAIM of many large payloads, sizes on either side of the 16 KB
	// from which the module replies with the stored string itself, each
	// with bytes of its own: every payload comes back whole and in order.
	scenario(t, env, "large payloads claimed together", func(t *testing.T, q *queue) {
		q.install()
		sizes := []int{16383, 16384, 16385, 70000, 1000, 16384, 300000, 0, 65536, 16384}
		var jobs []job
		for i, n := range sizes {
			b := make([]byte, n)
			for j := range b {
				b[j] = byte(i*31 + j*7 + j>>9)
			}
			jobs = append(jobs, job{data: string(b)})
		}
		ids := q.add(jobs...)
		got := q.claim(600000, len(jobs))
		require.Len(t, got, len(jobs))
		for i, c := range got {
			require.Equal(t, ids[i], c.id)
			require.True(t, jobs[i].data == c.data, "job %s: %d bytes back for %d", c.id, len(c.data), len(jobs[i].data))
		}
		// the same rows again, through the extended reply
		q.add(jobs[:3]...)
		ext := q.claimExt(3)
		for _, j := range jobs[:3] {
			require.Contains(t, ext, Bulk(j.data))
		}
	})
	scenario(t, env, "unique key", func(t *testing.T, q *queue) {
		q.install()
		key := "\x00\xff{other}:" + strings.Repeat("\xfe", 10)
		id := q.add(job{data: "a", unique: key})[0]
		require.Equal(t, Bulk(id), q.r("GET", q.k.Unique(key)))
		require.Equal(t, Bulk(key), inspectField(q, id, "uniq"))
		q.refuse(protocol.ErrAddDuplicate(id), q.verb(protocol.Add, addArgs(job{data: "b", unique: key})...))
	})
}

// inspectField is one field of INSPECT's reply, rendered, or "" when absent.
func inspectField(q *queue, id, field string) string {
	q.t.Helper()
	pairs, err := q.exec(protocol.Inspect, id).ToArray()
	require.NoError(q.t, err)
	for i := 0; i+1 < len(pairs); i += 2 {
		if name, _ := pairs[i].ToString(); name == field {
			return RenderMessage(pairs[i+1])
		}
	}
	return ""
}
