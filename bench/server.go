package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/trafikey/trafikey/internal/modbuild"
	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// benchServer is a valkey-server the systems run on (trafikey and the floor
// on the one with the module, the peers on one without), and the admin
// connection the harness reads its statistics through.
type benchServer struct {
	srv    *valkeyserver.Server
	admin  *valkeyserver.Conn
	module bool // the trafikey module is loaded
}

// startServer starts valkey-server with the trafikey module (when module is
// not empty) and opens the admin connection.
func startServer(ctx context.Context, module string) (*benchServer, error) {
	opt := valkeyserver.Options{}
	if module != "" {
		opt.Module = module
	}
	srv, err := valkeyserver.Start(ctx, opt)
	if err != nil {
		return nil, err
	}
	admin, err := srv.Dial(ctx)
	if err != nil {
		_ = srv.Stop()
		return nil, err
	}
	return &benchServer{srv: srv, admin: admin, module: module != ""}, nil
}

func (b *benchServer) Addr() string { return b.srv.Addr() }

func (b *benchServer) Stop() error {
	_ = b.admin.Close()
	return b.srv.Stop()
}

func (b *benchServer) do(ctx context.Context, args ...string) (any, error) {
	return b.admin.Do(ctx, args...)
}

// flush empties the dataset, synchronously, so the next run starts from an
// empty server whose freed memory is already returned.
func (b *benchServer) flush(ctx context.Context) error {
	_, err := b.do(ctx, "FLUSHALL", "SYNC")
	return err
}

func (b *benchServer) info(ctx context.Context, section string) (string, error) {
	v, err := b.do(ctx, "INFO", section)
	if err != nil {
		return "", err
	}
	s, _ := v.(string)
	return s, nil
}

// serverSnap is what the harness reads before and after a measured run.
type serverSnap struct {
	cpuSeconds float64 // used_cpu_user + used_cpu_sys of the server process
	usedMemory int64   // used_memory
	// dataMemory is used_memory without the clients' buffers
	// (mem_clients_normal) and the script cache (used_memory_scripts): what
	// the dataset holds, including the key space's own tables.
	dataMemory int64
}

func (b *benchServer) snap(ctx context.Context) (serverSnap, error) {
	text, err := b.info(ctx, "cpu")
	if err != nil {
		return serverSnap{}, err
	}
	mem, err := b.info(ctx, "memory")
	if err != nil {
		return serverSnap{}, err
	}
	user, _ := strconv.ParseFloat(valkeyserver.InfoField(text, "used_cpu_user"), 64)
	sys, _ := strconv.ParseFloat(valkeyserver.InfoField(text, "used_cpu_sys"), 64)
	used, _ := strconv.ParseInt(valkeyserver.InfoField(mem, "used_memory"), 10, 64)
	data, err := valkeyserver.DataMemory(mem)
	if err != nil {
		return serverSnap{}, err
	}
	return serverSnap{cpuSeconds: user + sys, usedMemory: used, dataMemory: data}, nil
}

// waitIdle waits until the admin connection is the server's only client,
// so the clients' memory is gone from used_memory.
func (b *benchServer) waitIdle(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		text, err := b.info(ctx, "clients")
		if err != nil {
			return err
		}
		n := valkeyserver.InfoField(text, "connected_clients")
		if n == "1" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s clients still connected 10 s after the system closed", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// CmdStat is one command's line of INFO commandstats.
type CmdStat struct {
	Calls int64 `json:"calls"`
	Usec  int64 `json:"usec"`
}

// commandStats parses INFO commandstats: cmdstat_<name>:calls=…,usec=…,…
func (b *benchServer) commandStats(ctx context.Context) (map[string]CmdStat, error) {
	text, err := b.info(ctx, "commandstats")
	if err != nil {
		return nil, err
	}
	return parseCommandStats(text), nil
}

func parseCommandStats(text string) map[string]CmdStat {
	out := map[string]CmdStat{}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var st CmdStat
		for kv := range strings.SplitSeq(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				st.Calls, _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				st.Usec, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		// Module commands keep their declared case (cmdstat_EMQ.ADD).
		out[strings.ToLower(strings.TrimPrefix(name, "cmdstat_"))] = st
	}
	return out
}

// resetStats zeroes the command statistics (CONFIG RESETSTAT).
func (b *benchServer) resetStats(ctx context.Context) error {
	_, err := b.do(ctx, "CONFIG", "RESETSTAT")
	return err
}

// buildModule builds root's ./module as a c-shared object, or finds it built
// in the module cache (modbuild.Cached), and returns its path.
func buildModule(ctx context.Context, root string) (string, error) {
	if fi, err := os.Stat(filepath.Join(root, "module")); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the trafikey module source (%s) does not exist; pass -module or leave trafikey-native out of -systems", filepath.Join(root, "module"))
	}
	return modbuild.Cached(ctx, root)
}

// Pinning. The server gets CPU 0; this process, its goroutines (producers,
// workers, asynq) and the Node child get CPU 1, so the load generators never
// take cycles from the server. taskset -a -p applies to every thread of a
// running process, and threads started later inherit the mask.

const (
	serverCPUCore = "0"
	clientCPUCore = "1"
)

// pinSelf pins this process to the client CPU. It returns a note for the
// report and whether pinning is in effect.
func pinSelf(enabled bool) (string, bool) {
	if !enabled {
		return "not pinned (-pin=false): server and load generators share all CPUs", false
	}
	if runtime.NumCPU() < 2 {
		return "not pinned: fewer than 2 CPUs", false
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		return "not pinned: taskset not found", false
	}
	if out, err := exec.Command(taskset, "-a", "-p", "-c", clientCPUCore, strconv.Itoa(os.Getpid())).CombinedOutput(); err != nil {
		return fmt.Sprintf("not pinned: taskset: %v: %s", err, strings.TrimSpace(string(out))), false
	}
	runtime.GOMAXPROCS(1)
	return fmt.Sprintf("valkey-server pinned to CPU %s (`taskset -a -p -c %s <pid>`); the harness, its Go clients and workers and the Node process pinned to CPU %s (GOMAXPROCS=1)", serverCPUCore, serverCPUCore, clientCPUCore), true
}

// pinServer pins every thread of the server process to the server CPU.
func pinServer(pid int) error {
	out, err := exec.Command("taskset", "-a", "-p", "-c", serverCPUCore, strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("taskset -a -p -c %s %d: %v: %s", serverCPUCore, pid, err, strings.TrimSpace(string(out)))
	}
	return nil
}
