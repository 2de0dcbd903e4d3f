package conformance

import (
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/trafikey/trafikey/internal/protocol"
)

// The bus verbs' entries in the generic groups' tables (fixtures, values,
// types, ACL), added here so the tables' own files stay as they are.
func init() {
	fixtures[protocol.Append] = func(q *queue) []string {
		q.install()
		return []string{"1", "1-1", "1", "f", "v"}
	}
	fixtures[protocol.Publish] = func(q *queue) []string {
		q.install()
		return []string{"added", "1"}
	}
	fixtures[protocol.FailuresIncr] = func(q *queue) []string {
		q.install()
		return []string{"60000"}
	}
	countGroups[protocol.Append] = []string{"1-1", "1", "f", "v"}
	argCount[protocol.Append] = 5
	argCount[protocol.Publish] = 2
	argCount[protocol.FailuresIncr] = 1
	firstValue[protocol.Append] = argRef{1, "id"}
	firstValue[protocol.Publish] = argRef{1, "id"}
	firstValue[protocol.FailuresIncr] = argRef{0, "ttl"}
	intDomains = append(intDomains,
		intDomain{protocol.Publish, argRef{1, "id"}, 1, protocol.MaxJobID},
		intDomain{protocol.FailuresIncr, argRef{0, "ttl"}, 1, protocol.MaxFailuresTTL},
	)
	textDomains = append(textDomains,
		textDomain{protocol.Publish, argRef{0, "event"}, []string{"e", strings.Repeat("e", protocol.MaxEventName), "\x00\xff"},
			[]string{"", strings.Repeat("e", protocol.MaxEventName+1)}, nil},
	)
	busKey := protocol.SuffixBus + protocol.DefaultBusName
	failuresKey := protocol.SuffixFailuresCount + protocol.DefaultBusName
	keyTypes[busKey] = "stream"
	keyTypes[protocol.SuffixEvents] = "stream"
	keyTypes[failuresKey] = "string"
	planted[protocol.Append] = []string{busKey}
	planted[protocol.Publish] = []string{protocol.SuffixEvents}
	planted[protocol.FailuresIncr] = []string{failuresKey}
	fixedSuffixes = append(fixedSuffixes, busKey, protocol.SuffixEvents, failuresKey)
}

// busKey is the queue's bus stream of name.
func (q *queue) busKey(name string) string { return protocol.Append.NamedKey(q.k, name) }

// xrange is a stream's entries, rendered.
func (q *queue) xrange(key string) string {
	q.t.Helper()
	return q.r("XRANGE", key, "-", "+")
}

// top is a stream's last generated id.
func (q *queue) top(key string) string {
	q.t.Helper()
	m, err := q.cmd("XINFO", "STREAM", key).AsMap()
	require.NoError(q.t, err)
	top := m["last-generated-id"]
	s, err := top.ToString()
	require.NoError(q.t, err)
	return s
}

// namedLayouts are bus names a named key refuses, and ones it takes.
var (
	busNamesBad = []string{"", "a b", "a\x00", "{x}", "x}", "\xff", "a\r\n", strings.Repeat("n", protocol.MaxBusName+1)}
	busNamesOK  = []string{"a", "a-b_c.d:e/f@g", "A9", strings.Repeat("n", protocol.MaxBusName)}
)
