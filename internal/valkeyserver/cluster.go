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
func (c *Cluster) Stop() error { return c.each((*Server).Stop) }

// Discard ends every node as Server.Discard does, at once.
func (c *Cluster) Discard() error { return c.each((*Server).Discard) }

// each runs end on every node at once.
func (c *Cluster) each(end func(*Server) error) error {
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, s := range c.nodes {
		if s == nil {
			continue
		}
		wg.Go(func() { errs[i] = end(s) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// NodeID returns the cluster node id of s (CLUSTER MYID).
func NodeID(ctx context.Context, s *Server) (string, error) {
	v, err := s.Do(ctx, "CLUSTER", "MYID")
	if err != nil {
		return "", fmt.Errorf("valkeyserver: CLUSTER MYID on %s: %w", s.Addr(), err)
	}
	id, _ := v.(string)
	return id, nil
}

// Migration is what MigrateSlot did.
type Migration struct {
	// Keys is how many keys were moved, in Batches MIGRATE calls.
	Keys, Batches int
	// Window is the time from the source's SETSLOT MIGRATING to the
	// target's SETSLOT NODE: while it lasts, a command naming several
	// keys of the slot of which one is missing (on the source while some
	// have moved, or on the target while some have not) is refused with
	// TRYAGAIN. Once the target owns the slot the source's ASK, then its
	// MOVED, lead to it.
	Window time.Duration
}

// MigrateSlot moves slot from primary from to primary to the classic way,
// as valkey-cli --cluster reshard does, while clients keep using it:
// CLUSTER SETSLOT IMPORTING on to, SETSLOT MIGRATING on from, then
// CLUSTER GETKEYSINSLOT and MIGRATE ... KEYS in calls of batch keys until
// from holds none, then SETSLOT NODE on to, on from and on every other
// primary. It waits until every node sees to as the slot's owner. The
// context bounds the whole move; on error the slot may be left migrating.
func (c *Cluster) MigrateSlot(ctx context.Context, slot int, from, to *Server, batch int) (Migration, error) {
	var m Migration
	if batch < 1 {
		return m, fmt.Errorf("valkeyserver: migrate slot %d: batch %d below 1", slot, batch)
	}
	fromID, err := NodeID(ctx, from)
	if err != nil {
		return m, err
	}
	toID, err := NodeID(ctx, to)
	if err != nil {
		return m, err
	}
	s := strconv.Itoa(slot)
	if _, err := to.Do(ctx, "CLUSTER", "SETSLOT", s, "IMPORTING", fromID); err != nil {
		return m, fmt.Errorf("valkeyserver: SETSLOT %d IMPORTING on %s: %w", slot, to.Addr(), err)
	}
	conn, err := from.Dial(ctx)
	if err != nil {
		return m, err
	}
	defer conn.Close()
	start := time.Now()
	if _, err := conn.Do(ctx, "CLUSTER", "SETSLOT", s, "MIGRATING", toID); err != nil {
		return m, fmt.Errorf("valkeyserver: SETSLOT %d MIGRATING on %s: %w", slot, from.Addr(), err)
	}
	host, port := "127.0.0.1", strconv.Itoa(to.Port())
	for {
		v, err := conn.Do(ctx, "CLUSTER", "GETKEYSINSLOT", s, strconv.Itoa(batch))
		if err != nil {
			return m, fmt.Errorf("valkeyserver: GETKEYSINSLOT %d on %s: %w", slot, from.Addr(), err)
		}
		keys, _ := v.([]any)
		if len(keys) == 0 {
			break
		}
		args := []string{"MIGRATE", host, port, "", "0", "10000", "KEYS"}
		for _, k := range keys {
			args = append(args, k.(string))
		}
		if _, err := conn.Do(ctx, args...); err != nil {
			return m, fmt.Errorf("valkeyserver: MIGRATE %d keys of slot %d to %s: %w", len(keys), slot, to.Addr(), err)
		}
		m.Keys += len(keys)
		m.Batches++
	}
	// The target first: from then on the source's redirects reach an owner.
	if _, err := to.Do(ctx, "CLUSTER", "SETSLOT", s, "NODE", toID); err != nil {
		return m, fmt.Errorf("valkeyserver: SETSLOT %d NODE on %s: %w", slot, to.Addr(), err)
	}
	m.Window = time.Since(start)
	if _, err := conn.Do(ctx, "CLUSTER", "SETSLOT", s, "NODE", toID); err != nil {
		return m, fmt.Errorf("valkeyserver: SETSLOT %d NODE on %s: %w", slot, from.Addr(), err)
	}
	for _, n := range c.nodes {
		if n == from || n == to || !isPrimary(ctx, n) {
			continue
		}
		if _, err := n.Do(ctx, "CLUSTER", "SETSLOT", s, "NODE", toID); err != nil {
			return m, fmt.Errorf("valkeyserver: SETSLOT %d NODE on %s: %w", slot, n.Addr(), err)
		}
	}
	return m, c.waitOwner(ctx, slot, toID)
}

// MigrateSlotAtomic moves slot from primary from to primary to with
// atomic slot migration (Valkey 9.0+): CLUSTER MIGRATESLOTS SLOTSRANGE
// slot slot NODE <to> on from, then CLUSTER GETSLOTMIGRATIONS on from until
// the job succeeds. It waits until every node sees to as the slot's owner.
// A job that fails or is cancelled is an error with the server's message.
func (c *Cluster) MigrateSlotAtomic(ctx context.Context, slot int, from, to *Server) error {
	toID, err := NodeID(ctx, to)
	if err != nil {
		return err
	}
	s := strconv.Itoa(slot)
	before, err := slotMigrations(ctx, from)
	if err != nil {
		return err
	}
	if _, err := from.Do(ctx, "CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", s, s, "NODE", toID); err != nil {
		return fmt.Errorf("valkeyserver: MIGRATESLOTS %d to %s on %s: %w", slot, to.Addr(), from.Addr(), err)
	}
	var failed error
	err = poll(ctx, func() (bool, string) {
		jobs, err := slotMigrations(ctx, from)
		if err != nil {
			return false, err.Error()
		}
		for _, j := range jobs {
			if _, old := before[j["name"]]; old || j["operation"] != "EXPORT" || j["target_node"] != toID {
				continue
			}
			switch j["state"] {
			case "success":
				return true, ""
			case "failed", "cancelled", "canceled":
				failed = fmt.Errorf("job %s %s: %s", j["name"], j["state"], j["message"])
				return true, ""
			}
			return false, "job " + j["name"] + " " + j["state"]
		}
		return false, "no migration job of slot " + s + " on " + from.Addr()
	})
	if err = errors.Join(err, failed); err != nil {
		return fmt.Errorf("valkeyserver: migrate slot %d: %w", slot, err)
	}
	return c.waitOwner(ctx, slot, toID)
}

// slotMigrations reads CLUSTER GETSLOTMIGRATIONS on s: each job's fields by
// name, the jobs by name.
func slotMigrations(ctx context.Context, s *Server) (map[string]map[string]string, error) {
	v, err := s.Do(ctx, "CLUSTER", "GETSLOTMIGRATIONS")
	if err != nil {
		return nil, fmt.Errorf("valkeyserver: CLUSTER GETSLOTMIGRATIONS on %s: %w", s.Addr(), err)
	}
	out := map[string]map[string]string{}
	list, _ := v.([]any)
	for _, e := range list {
		fields, _ := e.([]any)
		job := map[string]string{}
		for i := 0; i+1 < len(fields); i += 2 {
			k, _ := fields[i].(string)
			switch val := fields[i+1].(type) {
			case string:
				job[k] = val
			case int64:
				job[k] = strconv.FormatInt(val, 10)
			}
		}
		out[job["name"]] = job
	}
	return out, nil
}

// isPrimary reports whether s answers ROLE as a primary.
func isPrimary(ctx context.Context, s *Server) bool {
	v, err := s.Do(ctx, "ROLE")
	r, _ := v.([]any)
	return err == nil && len(r) > 0 && r[0] == "master"
}

// waitOwner waits until every running node's CLUSTER NODES gives slot to
// node id.
func (c *Cluster) waitOwner(ctx context.Context, slot int, id string) error {
	for _, n := range c.nodes {
		if !n.Running() {
			continue
		}
		err := poll(ctx, func() (bool, string) {
			owner, err := SlotOwner(ctx, n, slot)
			if err != nil {
				return false, err.Error()
			}
			return owner == id, fmt.Sprintf("%s gives slot %d to %q, not %s", n.Addr(), slot, owner, id)
		})
		if err != nil {
			return fmt.Errorf("valkeyserver: migrate slot %d: %w", slot, err)
		}
	}
	return nil
}

// SlotOwner returns the id of the node that s's CLUSTER NODES gives slot
// to, or "" when none serves it.
func SlotOwner(ctx context.Context, s *Server, slot int) (string, error) {
	v, err := s.Do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return "", fmt.Errorf("valkeyserver: CLUSTER NODES on %s: %w", s.Addr(), err)
	}
	text, _ := v.(string)
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 9 {
			continue
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue // a slot being imported or migrated: [slot->-id]
			}
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 == nil && err2 == nil && a <= slot && slot <= b {
				return f[0], nil
			}
		}
	}
	return "", nil
}
