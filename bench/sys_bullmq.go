package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// BullMQ runs in Node: bench/bullmq/bench.mjs, with the versions pinned by
// its package-lock.json. The harness starts one Node process per run with the
// workload as a JSON argument; the script does the unmeasured setup, prints
// {"ready":true}, waits for a line on stdin, runs the measured part and
// prints one JSON result line. Queue and Worker follow BullMQ's guide:
// addBulk for batches, the Worker's concurrency option, and
// removeOnComplete so completed jobs do not pile up (trafikey and asynq
// delete completed jobs too).

// bullmqDir is the Node project of the BullMQ side.
func bullmqDir(root string) string { return filepath.Join(root, "bench", "bullmq") }

// nodeAvailable reports whether node is on PATH.
func nodeAvailable() bool {
	_, err := exec.LookPath("node")
	return err == nil
}

var npmOnce sync.Once
var npmErr error

// ensureNodeModules runs `npm ci` once when node_modules is missing.
func ensureNodeModules(ctx context.Context, dir string) error {
	npmOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "bullmq", "package.json")); err == nil {
			return
		}
		cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			npmErr = fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
		}
	})
	return npmErr
}

type bullmqSystem struct {
	env    Env
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  *bufio.Scanner
	stderr *bytes.Buffer
	waited bool
}

func newBullMQ(env Env) System { return &bullmqSystem{env: env} }

type bullmqArgs struct {
	Addr        string `json:"addr"`
	Queue       string `json:"queue"`
	Kind        string `json:"kind"`
	Jobs        int    `json:"jobs"`
	Payload     int    `json:"payload"`
	Producers   int    `json:"producers"`
	Batch       int    `json:"batch"`
	Concurrency int    `json:"concurrency"`
	Rate        int    `json:"rate"`
	Warmup      int    `json:"warmup"`
}

type bullmqReply struct {
	Ready       bool       `json:"ready"`
	OK          bool       `json:"ok"`
	Error       string     `json:"error"`
	Added       int        `json:"added"`
	Processed   int        `json:"processed"`
	Waiting     int64      `json:"waiting"`
	ElapsedNS   int64      `json:"elapsed_ns"`
	ClientCPUUS int64      `json:"client_cpu_us"`
	Lat         LatSummary `json:"lat_us"`
}

func (b *bullmqSystem) Prepare(ctx context.Context, w Workload) error {
	node, err := exec.LookPath("node")
	if err != nil {
		return errors.New("node not found on PATH")
	}
	dir := bullmqDir(b.env.Root)
	if err := ensureNodeModules(ctx, dir); err != nil {
		return err
	}
	args, _ := json.Marshal(bullmqArgs{
		Addr: b.env.Addr, Queue: b.env.Queue, Kind: w.Kind, Jobs: w.Jobs, Payload: w.Payload,
		Producers: w.Producers, Batch: w.Batch, Concurrency: w.Concurrency, Rate: w.Rate, Warmup: warmupJobs(w),
	})
	// Not CommandContext: the process is ended by Close, after its reply.
	b.cmd = exec.Command(node, "bench.mjs", string(args))
	b.cmd.Dir = dir
	b.stderr = &bytes.Buffer{}
	b.cmd.Stderr = b.stderr
	if b.stdin, err = b.cmd.StdinPipe(); err != nil {
		return err
	}
	stdout, err := b.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := b.cmd.Start(); err != nil {
		return err
	}
	b.lines = bufio.NewScanner(stdout)
	b.lines.Buffer(make([]byte, 64<<10), 16<<20)
	r, err := b.read(ctx)
	if err != nil {
		return err
	}
	if !r.Ready {
		return fmt.Errorf("bench.mjs: expected the ready line, got %+v", r)
	}
	return nil
}

// read reads the next JSON line, bounded by ctx.
func (b *bullmqSystem) read(ctx context.Context) (bullmqReply, error) {
	type result struct {
		r   bullmqReply
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var r bullmqReply
		if !b.lines.Scan() {
			err := b.lines.Err()
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			ch <- result{err: err}
			return
		}
		err := json.Unmarshal(b.lines.Bytes(), &r)
		if err != nil {
			err = fmt.Errorf("%w: %q", err, b.lines.Text())
		}
		ch <- result{r, err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			return res.r, fmt.Errorf("bench.mjs: %w%s", res.err, b.stderrTail())
		}
		if !res.r.Ready && !res.r.OK {
			return res.r, fmt.Errorf("bench.mjs: %s%s", res.r.Error, b.stderrTail())
		}
		return res.r, nil
	case <-ctx.Done():
		_ = b.cmd.Process.Kill()
		return bullmqReply{}, fmt.Errorf("bench.mjs: %w%s", ctx.Err(), b.stderrTail())
	}
}

func (b *bullmqSystem) stderrTail() string {
	s := strings.TrimSpace(b.stderr.String())
	if s == "" {
		return ""
	}
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return "\n" + s
}

func (b *bullmqSystem) Run(ctx context.Context, w Workload) (Outcome, error) {
	if _, err := io.WriteString(b.stdin, "go\n"); err != nil {
		return Outcome{}, err
	}
	r, err := b.read(ctx)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{
		Added:     r.Added,
		Processed: r.Processed,
		Pending:   -1,
		Elapsed:   time.Duration(r.ElapsedNS),
		ClientCPU: time.Duration(r.ClientCPUUS) * time.Microsecond,
		Lat:       r.Lat,
	}
	if w.Kind == "add" || w.Kind == "batch" {
		out.Pending = r.Waiting
	}
	if err := b.wait(); err != nil {
		return out, err
	}
	return out, nil
}

func (b *bullmqSystem) wait() error {
	if b.waited {
		return nil
	}
	b.waited = true
	_ = b.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- b.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("bench.mjs: %w%s", err, b.stderrTail())
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = b.cmd.Process.Kill()
		<-done
		return errors.New("bench.mjs did not exit within 30 s of its reply; killed")
	}
}

func (b *bullmqSystem) Close() error {
	if b.cmd == nil || b.cmd.Process == nil || b.waited {
		return nil
	}
	_ = b.cmd.Process.Kill()
	b.waited = true
	_ = b.cmd.Wait()
	return nil
}
