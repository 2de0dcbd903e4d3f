package host_test

import (
	"github.com/trafikey/trafikey/internal/protocol"
	"github.com/trafikey/trafikey/module/internal/host"
)

// A verb handler: read, check the caller's ACL on a derived key, pass the
// guard, write, reply. (EMQ.DEBUG.KEYS in package main is a real one.)
func Example() {
	complete := func(c *host.Call) error {
		active, row, id, token := c.Arg(2), c.Arg(3), c.Arg(4), c.Arg(5)
		metrics := append(append([]byte(nil), c.Arg(2)[:len(c.Arg(2))-len("active")]...), "metrics"...)
		res, err := c.Read().
			Cmd(host.HGET).Arg(row).Str("attempts").
			Cmd(host.ZSCORE).Arg(active).Arg(id).
			Run() // one crossing, stops at the first error (WRONGTYPE …)
		if err != nil {
			return err
		}
		v, _ := res.At(0)
		attempts, found, err := v.OptBytes()
		if err != nil {
			return err
		}
		if !found {
			c.ReplyInt(0)
			return nil
		}
		if string(attempts) != string(token) {
			return host.Error(protocol.ErrStale("complete"))
		}
		if err := c.CheckKeys(host.KeyUpdate, metrics); err != nil {
			return err // NOPERM No permissions to access a key
		}
		w, err := c.BeginWrites()
		if err != nil {
			return err // ERR EMQ write-paused, nothing written
		}
		if _, err := w.Write().
			Cmd("HINCRBY").Arg(metrics).Str("count").Int(1).
			Cmd("ZREM").Arg(active).Arg(id).
			Run(); err != nil {
			return err
		}
		c.ReplyInt(1)
		return nil
	}
	_ = host.Command{Name: "EMQ.EXAMPLE", Flags: "write deny-oom", Keys: host.WriteKeys, Arity: -6, Handler: complete}
}
