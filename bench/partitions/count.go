package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/valkey-io/valkey-go"
)

// countingClient is a valkey.Client that counts the commands its user sends
// (each command of a DoMulti, a Receive's subscribe, the commands of a
// dedicated connection), so the idle run can tell the calls the queue makes
// from the commands the servers count, which include those a script or the
// module runs inside a call.
type countingClient struct {
	valkey.Client
	n *atomic.Int64
}

func newCountingClient(c valkey.Client) *countingClient {
	return &countingClient{Client: c, n: new(atomic.Int64)}
}

func (c *countingClient) Do(ctx context.Context, cmd valkey.Completed) valkey.ValkeyResult {
	c.n.Add(1)
	return c.Client.Do(ctx, cmd)
}

func (c *countingClient) DoMulti(ctx context.Context, multi ...valkey.Completed) []valkey.ValkeyResult {
	c.n.Add(int64(len(multi)))
	return c.Client.DoMulti(ctx, multi...)
}

func (c *countingClient) DoCache(ctx context.Context, cmd valkey.Cacheable, ttl time.Duration) valkey.ValkeyResult {
	c.n.Add(1)
	return c.Client.DoCache(ctx, cmd, ttl)
}

func (c *countingClient) DoMultiCache(ctx context.Context, multi ...valkey.CacheableTTL) []valkey.ValkeyResult {
	c.n.Add(int64(len(multi)))
	return c.Client.DoMultiCache(ctx, multi...)
}

func (c *countingClient) DoStream(ctx context.Context, cmd valkey.Completed) valkey.ValkeyResultStream {
	c.n.Add(1)
	return c.Client.DoStream(ctx, cmd)
}

func (c *countingClient) DoMultiStream(ctx context.Context, multi ...valkey.Completed) valkey.MultiValkeyResultStream {
	c.n.Add(int64(len(multi)))
	return c.Client.DoMultiStream(ctx, multi...)
}

func (c *countingClient) Receive(ctx context.Context, subscribe valkey.Completed, fn func(valkey.PubSubMessage)) error {
	c.n.Add(1)
	return c.Client.Receive(ctx, subscribe, fn)
}

func (c *countingClient) Dedicated(fn func(valkey.DedicatedClient) error) error {
	return c.Client.Dedicated(func(d valkey.DedicatedClient) error {
		return fn(&countingDedicated{DedicatedClient: d, n: c.n})
	})
}

func (c *countingClient) Dedicate() (valkey.DedicatedClient, func()) {
	d, cancel := c.Client.Dedicate()
	return &countingDedicated{DedicatedClient: d, n: c.n}, cancel
}

func (c *countingClient) Nodes() map[string]valkey.Client {
	nodes := c.Client.Nodes()
	out := make(map[string]valkey.Client, len(nodes))
	for addr, n := range nodes {
		out[addr] = &countingClient{Client: n, n: c.n}
	}
	return out
}

// countingDedicated counts a dedicated connection's commands into its
// client's count.
type countingDedicated struct {
	valkey.DedicatedClient
	n *atomic.Int64
}

func (d *countingDedicated) Do(ctx context.Context, cmd valkey.Completed) valkey.ValkeyResult {
	d.n.Add(1)
	return d.DedicatedClient.Do(ctx, cmd)
}

func (d *countingDedicated) DoMulti(ctx context.Context, multi ...valkey.Completed) []valkey.ValkeyResult {
	d.n.Add(int64(len(multi)))
	return d.DedicatedClient.DoMulti(ctx, multi...)
}

func (d *countingDedicated) Receive(ctx context.Context, subscribe valkey.Completed, fn func(valkey.PubSubMessage)) error {
	d.n.Add(1)
	return d.DedicatedClient.Receive(ctx, subscribe, fn)
}
