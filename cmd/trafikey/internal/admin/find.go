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

// Found is a queue that discovery found: a logical queue, whose partitions
// (the queues underneath a partitioned queue) are not listed as queues of
// their own.
type Found struct {
	Name string
	// Partitions are the tags of a partitioned queue's partitions in
	// index order (the first is Name); nil for a queue never partitioned.
	Partitions []string
}

// FindQueues lists the queues on the server or cluster behind client, in
// byte order of their names (see Discover).
func FindQueues(ctx context.Context, client valkey.Client) ([]string, error) {
	found, err := Discover(ctx, client)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = f.Name
	}
	return names, nil
}

// Discover finds the queues on the server or cluster behind client, in
// byte order of their names: every key of the form emq:{name}:version,
// found by SCAN on every primary (on a cluster) or on the one node. A queue
// is there from its first Open (INSTALL stamps the version key) until its
// keys are deleted. Then every name's partitions hash
// (emq:{name}:partitions) is read, all in one round of HGETALL calls (one a
// name: far fewer than the keys a SCAN walks), and the partitions' tags,
// each with a version key of its own, are folded into their queue. A name
// is listed once even when a node changed hands during the scan.
func Discover(ctx context.Context, client valkey.Client) ([]Found, error) {
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
	layouts, err := readLayouts(ctx, client, found)
	if err != nil {
		return nil, fmt.Errorf("find queues: %w", err)
	}
	// A partition's tag is no queue of its own; a partitioned queue's
	// own name stays, even when a partition shares it.
	hidden := map[string]bool{}
	for _, tags := range layouts {
		for _, t := range tags[1:] {
			hidden[t] = true
		}
	}
	for n := range layouts {
		delete(hidden, n)
	}
	out := make([]Found, 0, len(found))
	for n := range found {
		if !hidden[n] {
			out = append(out, Found{Name: n, Partitions: layouts[n]})
		}
	}
	slices.SortFunc(out, func(a, b Found) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// readLayouts reads the partitions hash of each queue of names, all in one
// round of calls: the tags of its partitions by index, for those that have
// one.
func readLayouts(ctx context.Context, client valkey.Client, names map[string]struct{}) (map[string][]string, error) {
	out := map[string][]string{}
	if len(names) == 0 {
		return out, nil
	}
	list := make([]string, 0, len(names))
	cmds := make(valkey.Commands, 0, len(names))
	for n := range names {
		list = append(list, n)
		cmds = append(cmds, client.B().Hgetall().Key(partitionsKey(n)).Build())
	}
	for i, r := range client.DoMulti(ctx, cmds...) {
		m, err := r.AsStrMap()
		if err != nil {
			return nil, fmt.Errorf("HGETALL %s: %w", partitionsKey(list[i]), err)
		}
		if tags := tagsOf(m); tags != nil {
			out[list[i]] = tags
		}
	}
	return out, nil
}

// tagsOf reads the tags of a partitions hash in index order: fields "0",
// "1", … up to the first missing; nil when there is no "0".
func tagsOf(m map[string]string) []string {
	var tags []string
	for i := 0; ; i++ {
		t, ok := m[strconv.Itoa(i)]
		if !ok {
			return tags
		}
		tags = append(tags, t)
	}
}

// partitionsKey is the hash of queue name's partitions.
func partitionsKey(name string) string {
	return protocol.Base(name) + protocol.SuffixPartitions
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
	// layouts are the partitions of each queue as the last discovery
	// found them, by name: a queue grown since its handle was opened is
	// opened again, so its handle reads the new partitions too.
	layouts map[string]int
}

// NewCatalog returns an empty catalog over client.
func NewCatalog(client valkey.Client) *Catalog {
	return &Catalog{client: client, queues: map[string]*trafikey.Queue{}, layouts: map[string]int{}}
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

// Queues finds the queues on the server (Discover) and returns their
// handles in name order, with the partitions discovery found of each.
// Handles of queues that are gone are dropped, and those of queues whose
// partitions changed since are opened again.
func (c *Catalog) Queues(ctx context.Context) ([]*trafikey.Queue, []Found, error) {
	found, err := Discover(ctx, c.client)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	for _, f := range found {
		if n, ok := c.layouts[f.Name]; !ok || n != len(f.Partitions) {
			delete(c.queues, f.Name)
		}
		c.layouts[f.Name] = len(f.Partitions)
	}
	c.mu.Unlock()
	out := make([]*trafikey.Queue, 0, len(found))
	kept := make([]Found, 0, len(found))
	for _, f := range found {
		q, err := c.Queue(ctx, f.Name)
		if errors.Is(err, ErrNoQueue) {
			continue // deleted since the scan
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, q)
		kept = append(kept, f)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for n := range c.queues {
		if _, ok := slices.BinarySearchFunc(found, n, func(f Found, n string) int { return strings.Compare(f.Name, n) }); !ok {
			delete(c.queues, n)
			delete(c.layouts, n)
		}
	}
	return out, kept, nil
}
