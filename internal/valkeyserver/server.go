// Package valkeyserver starts and stops real valkey-server processes for the
// command-line tool, the benchmarks and the tests.
//
// Every server listens on 127.0.0.1 only, keeps no RDB snapshots, logs to a
// file in its data directory and is addressed by the PID it was started with:
// stopping a server never signals anything by name. On Linux a server is also
// killed when the process that started it dies.
package valkeyserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// EnvServer names the environment variable that points every server this
// package starts (the tests', trafikeytest's, the demo's and the
// benchmarks') at another server build: a valkey-server or redis-server
// binary, or a wrapper such as scripts/fetch-server.sh prints.
const EnvServer = "TRAFIKEY_VALKEY_SERVER"

// DefaultBin is the server binary Start runs when Options.Bin is empty: the
// value of EnvServer, else "valkey-server" on PATH.
func DefaultBin() string {
	if bin := os.Getenv(EnvServer); bin != "" {
		return bin
	}
	return "valkey-server"
}

// Tool returns the path of one of the server build's tools (valkey-cli,
// valkey-benchmark): the one beside the server binary DefaultBin names,
// such as the wrappers scripts/fetch-server.sh writes, else the one on
// PATH, so a tool and its server come from the same build.
func Tool(name string) (string, error) {
	if bin, err := exec.LookPath(DefaultBin()); err == nil {
		if p, err := exec.LookPath(filepath.Join(filepath.Dir(bin), name)); err == nil {
			return p, nil
		}
	}
	return exec.LookPath(name)
}

// StopTimeout is how long Stop waits after SIGTERM before it sends SIGKILL.
const StopTimeout = 10 * time.Second

// Options describes one valkey-server process. The zero value is a plain
// standalone server on a free loopback port with a temporary data directory.
type Options struct {
	// Bin is the server binary (or a wrapper), looked up in PATH; default
	// DefaultBin().
	Bin string
	// Dir is the data directory. When empty, a new temporary directory is
	// created and Stop removes it unless Keep is set. A directory given here
	// is created if missing and always kept.
	Dir string
	// Keep keeps the temporary data directory after Stop.
	Keep bool
	// Module is the path of a module to load with --loadmodule, and
	// ModuleArgs its arguments.
	Module     string
	ModuleArgs []string
	// AOF turns on the append-only file with an fsync after every write.
	AOF bool
	// ReplicaOf makes the server a replica of the primary at host:port.
	ReplicaOf string
	// Cluster runs the server in cluster mode (nodes.conf in Dir, a node
	// timeout of 2 s, and a cluster bus on its own free port).
	Cluster bool
	// Users are ACL users created with ACL SETUSER after every start. Each
	// string is a user name followed by its rules, separated by spaces, e.g.
	// "alice on >pw ~emq:{a}:* +@all". The default user is left as it is.
	Users []string
	// Debug enables the DEBUG command (needed for DEBUG DIGEST, DEBUG RELOAD
	// and friends). The MODULE command is always enabled.
	Debug bool
	// Config holds extra configuration as alternating names and values,
	// e.g. {"maxmemory", "64mb", "hz", "100"}. A leading "--" on a name is
	// optional. These come last on the command line, so they override the
	// defaults set by this package.
	Config []string
	// Port is the client port; 0 picks a free one.
	Port int
	// Stdout, when set, also receives the server's standard output and error.
	// Its log goes to LogPath in any case.
	Stdout io.Writer
}

// Server is a running (or stopped) valkey-server process.
type Server struct {
	opts    Options
	bin     string
	dir     string
	ownDir  bool
	port    int
	busPort int
	portSet bool // port fixed by the caller
	busSet  bool // bus port fixed (after the first successful start)

	life sync.Mutex // serialises Stop, Kill and Restart

	mu      sync.Mutex
	proc    *process
	removed bool
}

type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // result of Wait, valid once done is closed
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// errAddrInUse marks a start that failed because a port was taken.
var errAddrInUse = errors.New("address already in use")

// Start starts a server and waits until it answers PING, then creates the ACL
// users. The context bounds the wait; the process itself outlives it. On
// failure the error includes the tail of the server's log.
func Start(ctx context.Context, o Options) (*Server, error) {
	if len(o.Config)%2 != 0 {
		return nil, fmt.Errorf("valkeyserver: Config needs name/value pairs, got %d strings", len(o.Config))
	}
	if o.ReplicaOf != "" {
		if _, _, err := net.SplitHostPort(o.ReplicaOf); err != nil {
			return nil, fmt.Errorf("valkeyserver: ReplicaOf %q: %w", o.ReplicaOf, err)
		}
	}
	for _, u := range o.Users {
		if len(strings.Fields(u)) == 0 {
			return nil, errors.New("valkeyserver: empty ACL user")
		}
	}
	bin := o.Bin
	if bin == "" {
		bin = DefaultBin()
	}
	binPath, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("valkeyserver: %w (run scripts/install-valkey.sh, or scripts/fetch-server.sh for %s)", err, EnvServer)
	}
	if o.Module != "" {
		if o.Module, err = filepath.Abs(o.Module); err != nil {
			return nil, fmt.Errorf("valkeyserver: module path: %w", err)
		}
	}
	s := &Server{opts: o, bin: binPath, port: o.Port, portSet: o.Port != 0}
	if o.Dir == "" {
		if s.dir, err = os.MkdirTemp("", "valkey-"); err != nil {
			return nil, fmt.Errorf("valkeyserver: data dir: %w", err)
		}
		s.ownDir = true
	} else {
		if s.dir, err = filepath.Abs(o.Dir); err != nil {
			return nil, fmt.Errorf("valkeyserver: data dir: %w", err)
		}
		if err = os.MkdirAll(s.dir, 0o755); err != nil {
			return nil, fmt.Errorf("valkeyserver: data dir: %w", err)
		}
	}

	attempts := 1
	if !s.portSet || o.Cluster {
		attempts = 5 // a free port may be taken between picking and binding
	}
	for range attempts {
		if err = s.pickPorts(); err != nil {
			break
		}
		if err = s.launch(ctx); err == nil {
			s.busSet = true
			return s, nil
		}
		if !errors.Is(err, errAddrInUse) || ctx.Err() != nil {
			break
		}
	}
	s.removeDir()
	return nil, err
}

func (s *Server) pickPorts() error {
	if !s.portSet {
		p, err := freePort()
		if err != nil {
			return err
		}
		s.port = p
	}
	if s.opts.Cluster && !s.busSet {
		for {
			p, err := freePort()
			if err != nil {
				return err
			}
			if p != s.port {
				s.busPort = p
				break
			}
		}
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("valkeyserver: pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) args() []string {
	a := []string{
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(s.port),
		"--save", "",
		"--daemonize", "no",
		"--dir", s.dir,
		"--logfile", s.LogPath(),
		"--protected-mode", "no",
		"--enable-module-command", "yes",
		// Start a replica's full sync at once instead of waiting 5 s for
		// more replicas to join the diskless transfer.
		"--repl-diskless-sync-delay", "0",
	}
	if s.opts.Debug {
		a = append(a, "--enable-debug-command", "yes")
	}
	if s.opts.AOF {
		a = append(a, "--appendonly", "yes", "--appendfsync", "always")
	}
	if s.opts.ReplicaOf != "" {
		host, port, _ := net.SplitHostPort(s.opts.ReplicaOf)
		a = append(a, "--replicaof", host, port)
	}
	if s.opts.Cluster {
		a = append(a,
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000",
			"--cluster-port", strconv.Itoa(s.busPort),
		)
	}
	if s.opts.Module != "" {
		a = append(a, "--loadmodule", s.opts.Module)
		a = append(a, s.opts.ModuleArgs...)
	}
	for i := 0; i+1 < len(s.opts.Config); i += 2 {
		a = append(a, "--"+strings.TrimPrefix(s.opts.Config[i], "--"), s.opts.Config[i+1])
	}
	return a
}

// launch runs the process once on the current ports, waits for it and
// applies the ACL users.
func (s *Server) launch(ctx context.Context) error {
	logFrom := fileSize(s.LogPath())
	outPath := filepath.Join(s.dir, "valkey.stdout")
	outFrom := fileSize(outPath)
	out, err := os.OpenFile(outPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("valkeyserver: %w", err)
	}
	cmd := exec.Command(s.bin, s.args()...)
	cmd.Dir = s.dir
	if s.opts.Stdout != nil {
		w := io.MultiWriter(out, s.opts.Stdout)
		cmd.Stdout, cmd.Stderr = w, w
	} else {
		cmd.Stdout, cmd.Stderr = out, out
	}
	setProcAttr(cmd)
	if err := startProcess(cmd); err != nil {
		out.Close()
		return fmt.Errorf("valkeyserver: start %s: %w", s.bin, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()

	err = s.waitReady(ctx, p)
	if err == nil {
		err = s.applyUsers(ctx)
	}
	if err == nil {
		return nil
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	logText := readFrom(s.LogPath(), logFrom)
	outText := readFrom(outPath, outFrom)
	if strings.Contains(logText+outText, "Address already in use") {
		err = fmt.Errorf("%w: %w", errAddrInUse, err)
	}
	msg := fmt.Sprintf("valkeyserver: start on port %d: %v", s.port, err)
	if t := tailLines(logText, 30); t != "" {
		msg += "\n--- " + s.LogPath() + " (tail) ---\n" + t
	}
	if t := tailLines(outText, 20); t != "" {
		msg += "\n--- output (tail) ---\n" + t
	}
	return &startError{msg: msg, err: err}
}

type startError struct {
	msg string
	err error
}

func (e *startError) Error() string { return e.msg }
func (e *startError) Unwrap() error { return e.err }

func (s *Server) waitReady(ctx context.Context, p *process) error {
	pid := p.cmd.Process.Pid
	var last error
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return fmt.Errorf("valkey-server exited before answering PING: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("waiting for PING: %w (last attempt: %v)", ctx.Err(), last)
		default:
		}
		if last = s.probe(ctx, pid); last == nil {
			return nil
		}
		select {
		case <-p.done:
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// probe checks that the port answers PONG and belongs to process pid, so a
// server that lost a race for its port is not mistaken for a ready one.
func (s *Server) probe(ctx context.Context, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := Dial(ctx, s.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.Do(ctx, "PING")
	if err != nil {
		return err
	}
	if v != "PONG" {
		return fmt.Errorf("PING answered %v", v)
	}
	info, err := c.Do(ctx, "INFO", "server")
	if err != nil {
		return err
	}
	text, _ := info.(string)
	if got := InfoField(text, "process_id"); got != strconv.Itoa(pid) {
		return fmt.Errorf("port %d is served by process %s, not %d", s.port, got, pid)
	}
	return nil
}

func (s *Server) applyUsers(ctx context.Context) error {
	if len(s.opts.Users) == 0 {
		return nil
	}
	c, err := Dial(ctx, s.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	for _, u := range s.opts.Users {
		args := append([]string{"ACL", "SETUSER"}, strings.Fields(u)...)
		if _, err := c.Do(ctx, args...); err != nil {
			return fmt.Errorf("ACL SETUSER %s: %w", u, err)
		}
	}
	return nil
}

// Addr returns the client address, 127.0.0.1:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Port returns the client port.
func (s *Server) Port() int { return s.port }

// BusPort returns the cluster bus port, or 0 when not in cluster mode.
func (s *Server) BusPort() int { return s.busPort }

// PID returns the process id of the current (or last) server process.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Running reports whether the server process is alive.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.exited()
}

// Dir returns the data directory.
func (s *Server) Dir() string { return s.dir }

// LogPath returns the path of the server's log file.
func (s *Server) LogPath() string { return filepath.Join(s.dir, "valkey.log") }

// Log returns the contents of the server's log file, or "" if it cannot be
// read (e.g. after Stop removed the directory).
func (s *Server) Log() string {
	b, err := os.ReadFile(s.LogPath())
	if err != nil {
		return ""
	}
	return string(b)
}

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) string { return tailLines(s.Log(), n) }

// Options returns the options the server was started with.
func (s *Server) Options() Options { return s.opts }

// Dial opens a RESP2 connection to the server as the default user.
func (s *Server) Dial(ctx context.Context) (*Conn, error) { return Dial(ctx, s.Addr()) }

// Do runs one command on a fresh connection as the default user and returns
// the decoded reply (see Conn). An error reply is returned as a ReplyError.
func (s *Server) Do(ctx context.Context, args ...string) (any, error) {
	c, err := s.Dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(ctx, args...)
}

// Info returns the text of INFO section.
func (s *Server) Info(ctx context.Context, section string) (string, error) {
	v, err := s.Do(ctx, "INFO", section)
	if err != nil {
		return "", fmt.Errorf("INFO %s on %s: %w", section, s.Addr(), err)
	}
	text, _ := v.(string)
	return text, nil
}

// Stop sends SIGTERM to the server's PID, waits up to StopTimeout, then sends
// SIGKILL to that PID and waits for it to exit. It removes the temporary data
// directory unless Keep is set. Stop is idempotent.
func (s *Server) Stop() error {
	s.life.Lock()
	defer s.life.Unlock()
	err := s.terminate()
	s.removeDir()
	return err
}

// Discard ends a server whose data nobody reads again, such as a test's at
// its end, faster than Stop: SHUTDOWN NOSAVE NOW FORCE runs at once, where
// SIGTERM waits for the server's next cron tick (up to 100 ms at hz 10)
// and for lagging replicas. A server that keeps its data (Keep, or a Dir
// of the caller's) is stopped as by Stop, and so is one that does not exit
// within a second of the command (paused, or refusing it). It removes the
// temporary data directory unless Keep is set.
func (s *Server) Discard() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.ownDir && !s.opts.Keep {
		s.shutdownNow()
	}
	err := s.terminate()
	s.removeDir()
	return err
}

// shutdownNow sends SHUTDOWN NOSAVE NOW FORCE and waits up to a second for
// the process to exit; the caller stops it otherwise.
func (s *Server) shutdownNow() {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || p.exited() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := s.Dial(ctx)
	if err != nil {
		return
	}
	// the reply is the connection closing; an error reply is a refusal
	_, err = c.Do(ctx, "SHUTDOWN", "NOSAVE", "NOW", "FORCE")
	_ = c.Close()
	var re ReplyError
	if errors.As(err, &re) {
		return
	}
	select {
	case <-p.done:
	case <-ctx.Done():
	}
}

func (s *Server) terminate() error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || p.exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("valkeyserver: SIGTERM %d: %w", p.cmd.Process.Pid, err)
	}
	timer := time.NewTimer(StopTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("valkeyserver: SIGKILL %d: %w", p.cmd.Process.Pid, err)
	}
	<-p.done
	return fmt.Errorf("valkeyserver: %s did not exit within %v of SIGTERM; killed", s.Addr(), StopTimeout)
}

func (s *Server) removeDir() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ownDir && !s.opts.Keep && !s.removed {
		_ = os.RemoveAll(s.dir)
		s.removed = true
	}
}

// Kill sends SIGKILL to the server's PID and waits for it to exit, keeping
// the data directory, as a crash would. Restart brings it back.
func (s *Server) Kill() error {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil || p.exited() {
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("valkeyserver: SIGKILL %d: %w", p.cmd.Process.Pid, err)
	}
	<-p.done
	return nil
}

// Restart starts the server again with the same options, port and data
// directory, e.g. after Kill to reload its append-only file. A running server
// is stopped first as by Stop, but its directory is kept. ACL users are
// created again.
func (s *Server) Restart(ctx context.Context) error {
	return s.RestartAfter(ctx, 0)
}

// RestartAfter stops the server with SIGTERM, waits gap (an outage: its
// port refuses connections meanwhile), and starts it again on the same
// port and directory, where it loads its data. ctx bounds the wait and the
// start.
func (s *Server) RestartAfter(ctx context.Context, gap time.Duration) error {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	removed := s.removed
	s.mu.Unlock()
	if removed {
		return fmt.Errorf("valkeyserver: restart %s: stopped and its data directory removed", s.Addr())
	}
	if err := s.terminate(); err != nil {
		return err
	}
	if gap > 0 {
		t := time.NewTimer(gap)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.launch(ctx)
}

// WaitReplicaSync waits until a replica's link to its primary is up and no
// sync is in progress. The context bounds the wait.
func (s *Server) WaitReplicaSync(ctx context.Context) error {
	var last string
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		info, err := s.Info(ctx, "replication")
		if err == nil {
			last = info
			if InfoField(info, "master_link_status") == "up" && InfoField(info, "master_sync_in_progress") == "0" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("valkeyserver: %s: replica not in sync: %w\n%s", s.Addr(), ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// WaitCaughtUp waits until the replica s has applied everything its primary
// had written when it was called: its replication offset reaches the
// primary's. WAIT cannot tell that to a connection other than the writer's,
// as it waits for the caller's own last write only. The context bounds the
// wait.
func (s *Server) WaitCaughtUp(ctx context.Context, primary *Server) error {
	info, err := primary.Info(ctx, "replication")
	if err != nil {
		return err
	}
	want, err := strconv.ParseInt(InfoField(info, "master_repl_offset"), 10, 64)
	if err != nil {
		return fmt.Errorf("valkeyserver: %s: master_repl_offset: %w", primary.Addr(), err)
	}
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	got := int64(-1)
	for {
		if info, err := s.Info(ctx, "replication"); err == nil {
			if got, err = strconv.ParseInt(InfoField(info, "master_repl_offset"), 10, 64); err == nil && got >= want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("valkeyserver: %s: replica at offset %d, its primary %s at %d: %w", s.Addr(), got, primary.Addr(), want, ctx.Err())
		case <-tick.C:
		}
	}
}

// InfoField returns the value of field in the text of an INFO reply, or "".
func InfoField(info, field string) string {
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r\n"), ":")
		if ok && k == field {
			return v
		}
	}
	return ""
}

// DataMemory is used_memory in the text of an INFO memory reply without the
// clients' buffers (mem_clients_normal) and the script cache
// (used_memory_scripts): what the dataset holds, the key space's own tables
// included. A field missing or not a number is an error.
func DataMemory(info string) (int64, error) {
	var v [3]int64
	for i, f := range [...]string{"used_memory", "mem_clients_normal", "used_memory_scripts"} {
		n, err := strconv.ParseInt(InfoField(info, f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("INFO memory %s: %w", f, err)
		}
		v[i] = n
	}
	return v[0] - v[1] - v[2], nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func readFrom(path string, off int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(f)
	return string(b)
}

func tailLines(text string, n int) string {
	text = strings.TrimRight(text, "\n")
	if text == "" || n <= 0 {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Version is a server build's product and release, read from INFO server.
type Version struct {
	// Product is "valkey" or "redis".
	Product string
	// Major, Minor and Patch number the release, e.g. 9, 1 and 2.
	Major, Minor, Patch int
}

// String returns the version as "valkey 9.1.2".
func (v Version) String() string {
	return fmt.Sprintf("%s %d.%d.%d", v.Product, v.Major, v.Minor, v.Patch)
}

// AtLeast reports whether v is product's release major.minor or later; a
// version of another product is not.
func (v Version) AtLeast(product string, major, minor int) bool {
	return v.Product == product && (v.Major > major || v.Major == major && v.Minor >= minor)
}

// ParseVersion reads the version from the text of an INFO server reply.
// Valkey also reports a redis_version (7.2.4, for clients that check it),
// so its own valkey_version is read first.
func ParseVersion(info string) (Version, error) {
	v := Version{Product: "valkey"}
	text := InfoField(info, "valkey_version")
	if text == "" {
		v.Product, text = "redis", InfoField(info, "redis_version")
	}
	if _, err := fmt.Sscanf(text, "%d.%d.%d", &v.Major, &v.Minor, &v.Patch); err != nil {
		return Version{}, fmt.Errorf("valkeyserver: server version %q: %w", text, err)
	}
	return v, nil
}

// BinVersion returns the version a server binary (or wrapper) prints with
// --version, e.g. "Valkey server v=9.1.2 sha=…", without starting a server.
func BinVersion(bin string) (Version, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return Version{}, fmt.Errorf("valkeyserver: %s --version: %w", bin, err)
	}
	var v Version
	var product string
	if _, err := fmt.Sscanf(string(out), "%s server v=%d.%d.%d", &product, &v.Major, &v.Minor, &v.Patch); err != nil {
		return Version{}, fmt.Errorf("valkeyserver: %s --version printed %q: %w", bin, out, err)
	}
	v.Product = strings.ToLower(product)
	return v, nil
}

// Version returns the version of the running server.
func (s *Server) Version(ctx context.Context) (Version, error) {
	info, err := s.Info(ctx, "server")
	if err != nil {
		return Version{}, err
	}
	return ParseVersion(info)
}
