package valkeyserver

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// On Linux each server runs in its own process group, so a Ctrl-C in the
// parent's terminal does not reach it while the parent is still cleaning up,
// and gets SIGKILL when the parent dies, so a crashed or interrupted test
// binary leaves no servers behind.
//
// The parent-death signal fires when the *thread* that forked the child
// exits, and the Go runtime ends threads whose goroutine exits while locked to
// them. All servers are therefore forked from one goroutine that locks its
// thread and never returns.

type spawnRequest struct {
	cmd  *exec.Cmd
	errc chan error
}

var (
	spawnOnce sync.Once
	spawnc    chan spawnRequest
)

func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func startProcess(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnc = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread()
			for req := range spawnc {
				req.errc <- req.cmd.Start()
			}
		}()
	})
	errc := make(chan error, 1)
	spawnc <- spawnRequest{cmd: cmd, errc: errc}
	return <-errc
}
