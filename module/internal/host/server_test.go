package host_test

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"trafikey/internal/valkeyserver"
	"trafikey/internal/valkeytest"
	"trafikey/lua"
	"trafikey/protocol"
)

// These tests load the module into a real server, with its debug commands.

func startDebug(t *testing.T) *valkeyserver.Server {
	t.Helper()
	return valkeytest.Start(t, valkeyserver.Options{
		Module:     valkeytest.ModulePath(t),
		ModuleArgs: []string{"debug-commands", "yes"},
		Debug:      true,
	})
}

func show(v any) string {
	s := fmt.Sprintf("%#v", v)
	if len(s) > 200 {
		s = s[:200] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// A write passes its short arguments as fresh strings: SET stores an integer
// string int-encoded, as the Lua executor's SET does.
func TestWriteValueEncoding(t *testing.T) {
	s := startDebug(t)
	sha := map[*protocol.Verb]string{}
	for _, v := range []*protocol.Verb{protocol.Install, protocol.Add} {
		sha[v] = valkeytest.Do(t, s, "SCRIPT", "LOAD", lua.Source(v)).(string)
	}
	run := func(native bool, q string, v *protocol.Verb, args ...string) {
		t.Helper()
		keys := v.KeyNames(protocol.KeysOf(q))
		line := append([]string{v.Command, strconv.Itoa(len(keys))}, keys...)
		if !native {
			line = append([]string{"EVALSHA", sha[v]}, line[1:]...)
		}
		valkeytest.Do(t, s, append(line, args...)...)
	}
	// ADD: count, then data, priority, delay, attempts, backoff, backoff ms,
	// unique key, unique TTL
	job := []string{"1", "data", "0", "0", "3", protocol.BackoffFixed, "0", "order-7", "60000"}
	// a long queue name: its keys, passed by reference, are not copied
	long := strings.Repeat("q", 60)
	for _, q := range []string{"native", "lua", "native" + long, "lua" + long} {
		native := strings.HasPrefix(q, "native")
		run(native, q, protocol.Install)
		run(native, q, protocol.Add, job...)
	}
	for _, c := range []struct {
		key   func(protocol.Keys) string
		queue string
	}{
		{func(k protocol.Keys) string { return k.Version }, ""},
		{func(k protocol.Keys) string { return k.Unique("order-7") }, ""},
		{func(k protocol.Keys) string { return k.Version }, long},
		{func(k protocol.Keys) string { return k.Unique("order-7") }, long},
	} {
		n, l := c.key(protocol.KeysOf("native"+c.queue)), c.key(protocol.KeysOf("lua"+c.queue))
		en, el := valkeytest.Do(t, s, "OBJECT", "ENCODING", n), valkeytest.Do(t, s, "OBJECT", "ENCODING", l)
		if en != el || en != "int" {
			t.Errorf("OBJECT ENCODING: %s %v, %s %v; want int on both", n, en, l, el)
		}
		if vn, vl := valkeytest.Do(t, s, "GET", n), valkeytest.Do(t, s, "GET", l); vn != vl {
			t.Errorf("GET: %s %v, %s %v", n, vn, l, vl)
		}
	}
	// the row: one HSET of 17 arguments, more than the format has specifiers
	// (its "at" is each executor's clock)
	for _, q := range []string{"", long} {
		n, l := protocol.KeysOf("native"+q).Job("1"), protocol.KeysOf("lua"+q).Job("1")
		valkeytest.Do(t, s, "HSET", n, "at", "0")
		valkeytest.Do(t, s, "HSET", l, "at", "0")
		hn, hl := valkeytest.Do(t, s, "HGETALL", n), valkeytest.Do(t, s, "HGETALL", l)
		if len(hn.([]any)) != 16 || !reflect.DeepEqual(hn, hl) {
			t.Errorf("HGETALL: %s %s, %s %s", n, show(hn), l, show(hl))
		}
	}
}
