// Package admin is what the CLI and the dashboard share to operate queues:
// finding the queues on a server or a cluster, opening them without writing,
// and the JSON forms of a queue's counts, its lanes and a job.
package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/valkey-io/valkey-go"

	"github.com/trafikey/trafikey"
	"github.com/trafikey/trafikey/internal/protocol"
)

// ErrNoQueue reports a queue that has no version key: never opened, or on
// another server.
var ErrNoQueue = errors.New("no such queue")

// ErrQueueName reports a name that cannot be a queue's.
var ErrQueueName = errors.New("not a queue name")

// scanCount is the COUNT hint of each SCAN call: large enough that a
// million keys take a thousand round trips, small enough that no call
// holds the server for long.
const scanCount = 1000

// versionPattern matches every queue's version key; SCAN's glob takes
// braces literally.
const versionPattern = protocol.KeyPrefix + "{*}:" + protocol.SuffixVersion

// FindQueues lists the queues on the server or cluster behind client, in
// byte order of their names: every key of the form emq:{name}:version,
// found by SCAN on every primary (on a cluster) or on the one node. A queue
// is there from its first Open (INSTALL stamps the version key) until its
// keys are deleted. A name is listed once even when a node changed hands
// during the scan.
func FindQueues(ctx context.Context, client valkey.Client) ([]string, error) {
	nodes := client.Nodes()
	cluster := client.Mode() == valkey.ClientModeCluster
	var (
		mu    sync.Mutex
		found = map[string]struct{}{}
		errs  []error
		wg    sync.WaitGroup
	)
	for addr, node := range nodes {
		wg.Go(func() {
			names, err := scanNode(ctx, node, cluster)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("node %s: %w", addr, err))
				return
			}
			for _, n := range names {
				found[n] = struct{}{}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, fmt.Errorf("find queues: %w", errors.Join(errs...))
	}
	out := make([]string, 0, len(found))
	for n := range found {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// scanNode lists the queue names of one node; a cluster replica lists none
// (its primary is scanned instead).
func scanNode(ctx context.Context, node valkey.Client, cluster bool) ([]string, error) {
	if cluster {
		role, err := node.Do(ctx, node.B().Role().Build()).ToArray()
		if err != nil {
			return nil, fmt.Errorf("ROLE: %w", err)
		}
		if len(role) == 0 {
			return nil, errors.New("ROLE: empty reply")
		}
		if r, _ := role[0].ToString(); r != "master" {
			return nil, nil
		}
	}
	var names []string
	var cursor uint64
	for {
		entry, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(versionPattern).Count(scanCount).Type("string").Build()).AsScanEntry()
		if err != nil {
			return nil, fmt.Errorf("SCAN: %w", err)
		}
		for _, key := range entry.Elements {
			base, ok := strings.CutSuffix(key, protocol.SuffixVersion)
			if !ok {
				continue
			}
			// A lane or unique key can end in "}:version" too; its
			// base holds a brace inside the tag and is no queue's.
			if name, ok := protocol.QueueOfBase([]byte(base)); ok {
				names = append(names, string(name))
			}
		}
		if entry.Cursor == 0 {
			return names, nil
		}
		cursor = entry.Cursor
	}
}

// Open returns a handle on an existing queue without writing to it (no
// INSTALL). A name that cannot be a queue's is ErrQueueName; a queue
// without a version key ErrNoQueue; a queue of another wire version fails
// its first call with trafikey.ErrWire.
func Open(ctx context.Context, client valkey.Client, name string) (*trafikey.Queue, error) {
	if !protocol.ValidQueueName(name) {
		return nil, fmt.Errorf("%s: %w (1..%d bytes, no braces)", strconv.Quote(name), ErrQueueName, protocol.MaxQueueName)
	}
	n, err := client.Do(ctx, client.B().Exists().Key(protocol.KeysOf(name).Version).Build()).AsInt64()
	if err != nil {
		return nil, fmt.Errorf("queue %q: %w", name, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("queue %q: %w", name, ErrNoQueue)
	}
	return trafikey.Open(ctx, client, name, &trafikey.QueueOptions{NoInstall: true})
}

// Catalog keeps one handle per queue of a server, opened on first use, for
// a long-running process (the dashboard) that reads many queues often.
type Catalog struct {
	client valkey.Client

	mu     sync.Mutex
	queues map[string]*trafikey.Queue
}

// NewCatalog returns an empty catalog over client.
func NewCatalog(client valkey.Client) *Catalog {
	return &Catalog{client: client, queues: map[string]*trafikey.Queue{}}
}

// Client returns the client the catalog's queues use.
func (c *Catalog) Client() valkey.Client { return c.client }

// Queue returns the handle on queue name, opening it (see Open) the first
// time.
func (c *Catalog) Queue(ctx context.Context, name string) (*trafikey.Queue, error) {
	c.mu.Lock()
	q, ok := c.queues[name]
	c.mu.Unlock()
	if ok {
		return q, nil
	}
	q, err := Open(ctx, c.client, name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.queues[name]; ok {
		return prev, nil
	}
	c.queues[name] = q
	return q, nil
}

// Queues finds the queues on the server (FindQueues) and returns their
// handles in name order. Handles of queues that are gone are dropped.
func (c *Catalog) Queues(ctx context.Context) ([]*trafikey.Queue, error) {
	names, err := FindQueues(ctx, c.client)
	if err != nil {
		return nil, err
	}
	out := make([]*trafikey.Queue, 0, len(names))
	for _, n := range names {
		q, err := c.Queue(ctx, n)
		if errors.Is(err, ErrNoQueue) {
			continue // deleted since the scan
		}
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for n := range c.queues {
		if _, ok := slices.BinarySearch(names, n); !ok {
			delete(c.queues, n)
		}
	}
	return out, nil
}
