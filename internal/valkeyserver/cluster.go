package valkeyserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// NumSlots is the number of hash slots in a Valkey cluster.
const NumSlots = 16384

// ClusterOptions describes a cluster of valkey-server processes.
type ClusterOptions struct {
	// Primaries is the number of primaries; the slots are split evenly
	// between them in order.
	Primaries int
	// ReplicasPerPrimary is the number of replicas of each primary.
	ReplicasPerPrimary int
	// Base holds the options of every node; Cluster is forced on. When
	// Base.Dir is set, node i uses Base.Dir/node<i>; when Base.Port is set,
	// node i uses Base.Port+i. ReplicaOf must be empty.
	Base Options
}

// Cluster is a set of servers forming one cluster.
type Cluster struct {
	nodes     []*Server
	primaries int
}

// StartCluster starts the nodes, assigns the slots evenly to the primaries
// with CLUSTER ADDSLOTSRANGE, joins the nodes with CLUSTER MEET, attaches the
// replicas with CLUSTER REPLICATE, and waits until every node reports
// cluster_state:ok, knows every node and every replica, and every replica is
// in sync. The context bounds the whole start. On failure every node that was
// started is stopped.
func StartCluster(ctx context.Context, o ClusterOptions) (*Cluster, error) {
	if o.Primaries < 1 || o.ReplicasPerPrimary < 0 {
		return nil, fmt.Errorf("valkeyserver: cluster needs at least one primary, got %d primaries and %d replicas each", o.Primaries, o.ReplicasPerPrimary)
	}
	if o.Base.ReplicaOf != "" {
		return nil, errors.New("valkeyserver: cluster nodes cannot have ReplicaOf")
	}
	n := o.Primaries * (1 + o.ReplicasPerPrimary)
	c := &Cluster{nodes: make([]*Server, n), primaries: o.Primaries}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		opt := o.Base
		opt.Cluster = true
		if o.Base.Dir != "" {
			opt.Dir = filepath.Join(o.Base.Dir, "node"+strconv.Itoa(i))
		}
		if o.Base.Port != 0 {
			opt.Port = o.Base.Port + i
		}
		wg.Go(func() {
			c.nodes[i], errs[i] = Start(ctx, opt)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("valkeyserver: start cluster nodes: %w", err)
	}
	if err := c.form(ctx, o.ReplicasPerPrimary); err != nil {
		_ = c.Stop()
		return nil, fmt.Errorf("valkeyserver: form cluster: %w", err)
	}
	return c, nil
}

func (c *Cluster) form(ctx context.Context, replicas int) error {
	n := len(c.nodes)
	ids := make([]string, n)
	for i, s := range c.nodes {
		v, err := s.Do(ctx, "CLUSTER", "MYID")
		if err != nil {
			return fmt.Errorf("CLUSTER MYID on %s: %w", s.Addr(), err)
		}
		ids[i], _ = v.(string)
	}
	for i := range c.primaries {
		lo, hi := i*NumSlots/c.primaries, (i+1)*NumSlots/c.primaries-1
		if _, err := c.nodes[i].Do(ctx, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return fmt.Errorf("CLUSTER ADDSLOTSRANGE %d %d on %s: %w", lo, hi, c.nodes[i].Addr(), err)
		}
	}
	for _, s := range c.nodes[1:] {
		if _, err := c.nodes[0].Do(ctx, "CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(s.Port()), strconv.Itoa(s.BusPort())); err != nil {
			return fmt.Errorf("CLUSTER MEET %s: %w", s.Addr(), err)
		}
	}
	// A replica can only follow a primary it already knows.
	for r := c.primaries; r < n; r++ {
		primary := (r - c.primaries) / replicas
		err := poll(ctx, func() (bool, string) {
			_, err := c.nodes[r].Do(ctx, "CLUSTER", "REPLICATE", ids[primary])
			if err != nil {
				return false, fmt.Sprintf("CLUSTER REPLICATE %s on %s: %v", ids[primary], c.nodes[r].Addr(), err)
			}
			return true, ""
		})
		if err != nil {
			return err
		}
	}
	wantReplicas := n - c.primaries
	for _, s := range c.nodes {
		err := poll(ctx, func() (bool, string) {
			info, err := s.Do(ctx, "CLUSTER", "INFO")
			if err != nil {
				return false, err.Error()
			}
			text, _ := info.(string)
			state, known := InfoField(text, "cluster_state"), InfoField(text, "cluster_known_nodes")
			if state != "ok" || known != strconv.Itoa(n) {
				return false, fmt.Sprintf("%s: cluster_state:%s cluster_known_nodes:%s", s.Addr(), state, known)
			}
			nodes, err := s.Do(ctx, "CLUSTER", "NODES")
			if err != nil {
				return false, err.Error()
			}
			if got := countReplicas(nodes); got != wantReplicas {
				return false, fmt.Sprintf("%s knows %d of %d replicas", s.Addr(), got, wantReplicas)
			}
			return true, ""
		})
		if err != nil {
			return err
		}
	}
	for _, s := range c.nodes[c.primaries:] {
		if err := s.WaitReplicaSync(ctx); err != nil {
			return err
		}
	}
	return nil
}

func countReplicas(nodes any) int {
	text, _ := nodes.(string)
	count := 0
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		for flag := range strings.SplitSeq(f[2], ",") {
			if flag == "slave" || flag == "replica" {
				count++
				break
			}
		}
	}
	return count
}

// poll calls check every 20 ms until it reports done or ctx ends; the error
// then carries the last status.
func poll(ctx context.Context, check func() (done bool, status string)) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		done, status := check()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s", ctx.Err(), status)
		case <-tick.C:
		}
	}
}

// Nodes returns the nodes: the primaries first, in slot order, then the
// replicas, those of primary 0 first. Roles are as started; a failover
// changes them.
func (c *Cluster) Nodes() []*Server { return append([]*Server(nil), c.nodes...) }

// Primaries returns the nodes started as primaries, in slot order.
func (c *Cluster) Primaries() []*Server { return append([]*Server(nil), c.nodes[:c.primaries]...) }

// Replicas returns the nodes started as replicas.
func (c *Cluster) Replicas() []*Server { return append([]*Server(nil), c.nodes[c.primaries:]...) }

// Addrs returns the client addresses of all nodes, in the order of Nodes.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Stop stops every node (in parallel) as Server.Stop does.
func (c *Cluster) Stop() error {
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, s := range c.nodes {
		if s == nil {
			continue
		}
		wg.Go(func() { errs[i] = s.Stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
