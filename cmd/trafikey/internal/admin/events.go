package admin

import (
	"context"
	"fmt"
	"strconv"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey/internal/protocol"
)

// EventsOn reports, for each queue of names, whether it publishes job
// events: its meta field events_max, which EVENTS sets, is above 0
// (docs/PROTOCOL.md, "Job events"). It reads one field per queue, the
// reads pipelined; it writes nothing.
func EventsOn(ctx context.Context, client valkey.Client, names []string) ([]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	cmds := make(valkey.Commands, len(names))
	for i, n := range names {
		cmds[i] = client.B().Hget().Key(protocol.KeysOf(n).Meta).Field(protocol.MetaEventsMax).Build()
	}
	out := make([]bool, len(names))
	for i, res := range client.DoMulti(ctx, cmds...) {
		s, err := res.ToString()
		if valkey.IsValkeyNil(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("queue %q: events: %w", names[i], err)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		out[i] = err == nil && n > 0
	}
	return out, nil
}
