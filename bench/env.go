package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/trafikey/trafikey/internal/valkeyserver"
)

// envInfo describes the machine and the versions a run used.
type envInfo struct {
	CPUs      int
	CPUModel  string
	MemTotal  string
	Kernel    string
	Go        string
	Valkey    string
	Node      string
	BullMQ    string
	IORedis   string
	Asynq     string
	GoRedis   string
	ValkeyGo  string
	Commit    string
	Module    string
	Pinning   string
	ServerPID int
	LoadStart string // /proc/loadavg's 1-minute load when the run started
	LoadEnd   string // and when it ended
}

// loadAvg returns the 1-minute load average, or "" when unknown.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func collectEnv(ctx context.Context, cfg *Config, srv *benchServer, module, pinNote string) envInfo {
	e := envInfo{Go: runtime.Version(), Pinning: pinNote, ServerPID: srv.srv.PID(), LoadStart: loadAvg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "processor":
				e.CPUs++
			case "model name":
				if e.CPUModel == "" {
					e.CPUModel = strings.TrimSpace(v)
				}
			}
		}
	}
	if e.CPUs == 0 {
		e.CPUs = runtime.NumCPU()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				f := strings.Fields(v)
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					e.MemTotal = strconv.FormatFloat(float64(kb)/(1<<20), 'f', 1, 64) + " GiB"
				}
			}
		}
	}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		e.Kernel = utsString(u.Sysname[:]) + " " + utsString(u.Release[:]) + " " + utsString(u.Machine[:])
	}
	if text, err := srv.info(ctx, "server"); err == nil {
		e.Valkey = valkeyserver.InfoField(text, "valkey_version")
		if e.Valkey == "" {
			e.Valkey = valkeyserver.InfoField(text, "redis_version")
		}
	}
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		e.Node = strings.TrimSpace(string(out))
	}
	dir := bullmqDir(cfg.Root)
	e.BullMQ = packageVersion(filepath.Join(dir, "node_modules", "bullmq", "package.json"))
	e.IORedis = packageVersion(filepath.Join(dir, "node_modules", "ioredis", "package.json"))
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/hibiken/asynq":
				e.Asynq = d.Version
			case "github.com/redis/go-redis/v9":
				e.GoRedis = d.Version
			case "github.com/valkey-io/valkey-go":
				e.ValkeyGo = d.Version
			}
		}
	}
	if out, err := exec.Command("git", "-C", cfg.Root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		e.Commit = strings.TrimSpace(string(out))
		// docs/ is left out: it holds this report and its chart, which a
		// run rewrites, not code that was measured.
		if st, err := exec.Command("git", "-C", cfg.Root, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)docs").Output(); err == nil && len(strings.TrimSpace(string(st))) > 0 {
			e.Commit += " (with uncommitted changes)"
		}
	}
	if module != "" {
		e.Module = "loaded"
	} else {
		e.Module = "not loaded"
	}
	return e
}

func utsString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

func packageVersion(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.Version
}
