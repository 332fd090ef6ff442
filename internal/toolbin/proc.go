package toolbin

import (
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Proc is a running program of the cache: its output's tail, its end, and
// the ways to stop it, each waiting until it is gone.
type Proc struct {
	cmd  *exec.Cmd
	out  *Tail
	done chan struct{}
	err  error // cmd.Wait's, once done is closed
	stop sync.Once
}

// Start starts cmd with its stdout and stderr kept in a tail of keep bytes
// and copied to output, if not nil.
func Start(cmd *exec.Cmd, keep int, output io.Writer) (*Proc, error) {
	p := &Proc{cmd: cmd, out: &Tail{Max: keep}, done: make(chan struct{})}
	var w io.Writer = p.out
	if output != nil {
		w = io.MultiWriter(p.out, output)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited, for whatever reason.
func (p *Proc) Exited() <-chan struct{} { return p.done }

// Err is how the process ended; only after Exited is closed.
func (p *Proc) Err() error { return p.err }

// Output is the process's last lines of output.
func (p *Proc) Output() string { return p.out.String() }

// Stop sends sig and waits up to grace for the process to end, then kills
// it. Where sig cannot be sent (Windows has no SIGTERM nor interrupt), it
// kills at once.
func (p *Proc) Stop(sig os.Signal, grace time.Duration) {
	p.stop.Do(func() {
		if err := p.cmd.Process.Signal(sig); err != nil {
			_ = p.cmd.Process.Kill()
		}
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Proc) Kill() {
	p.stop.Do(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
}
