// Package childproc runs a test's child process and reads its stdout by
// lines: for the crash tests, whose children really die.
package childproc

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Proc is a child process started by Start, whose stdout is read by lines.
type Proc struct {
	// Cmd is the command given to Start, started.
	Cmd *exec.Cmd

	t        testing.TB
	describe func(problem string) string
	stdin    io.WriteCloser

	mu      sync.Mutex
	out     []string      // every line read so far
	seen    int           // of out, the lines Expect has looked at
	ended   bool          // stdout reached its end
	changed chan struct{} // closed, and made anew, when a line comes or stdout ends
}

// Start starts cmd, configured by the caller (arguments, environment,
// stderr) but for its stdin and stdout, which Start makes pipes. A
// goroutine reads stdout by lines of up to 1 MiB, and t's cleanup kills
// the process and waits for it. describe makes the messages with which
// Expect and Send fail the test: given the problem, it returns it with what
// tells the child apart, such as its name and its stderr.
func Start(t testing.TB, cmd *exec.Cmd, describe func(problem string) string) *Proc {
	t.Helper()
	p := &Proc{Cmd: cmd, t: t, describe: describe, changed: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		// Reads on whether or not a test expects: a child whose stdout
		// nobody reads would block on it once the pipe is full.
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.tell(func() { p.out = append(p.out, sc.Text()) })
		}
		p.tell(func() { p.ended = true })
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return p
}

// tell changes what was read, with f, and wakes Expect.
func (p *Proc) tell(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f()
	close(p.changed)
	p.changed = make(chan struct{})
}

// Expect waits up to a minute for a line of stdout that starts with prefix,
// skipping the lines before it, and returns the rest of that line. It
// fails the test if stdout ends first or the minute passes.
func (p *Proc) Expect(prefix string) string {
	p.t.Helper()
	return p.ExpectWithin(prefix, time.Minute)
}

// ExpectWithin is Expect waiting up to d: for a line that comes only after
// the child's own deadline (a Shutdown's), which must be shorter than d.
func (p *Proc) ExpectWithin(prefix string, d time.Duration) string {
	p.t.Helper()
	timeout := time.After(d)
	for {
		rest, found, ended, changed := p.next(prefix)
		switch {
		case found:
			return rest
		case ended:
			p.t.Fatal(p.describe(fmt.Sprintf("the child ended without a %q line; stdout %q", prefix, p.Stdout())))
		}
		select {
		case <-changed:
		case <-timeout:
			p.t.Fatal(p.describe(fmt.Sprintf("no %q line within %v; stdout so far %q", prefix, d, p.Stdout())))
		}
	}
}

// next looks, past the lines seen, for one that starts with prefix; when
// there is none, it says whether stdout ended, and what to wait on.
func (p *Proc) next(prefix string) (rest string, found, ended bool, changed <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.seen < len(p.out) {
		line := p.out[p.seen]
		p.seen++
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return rest, true, false, nil
		}
	}
	return "", false, p.ended, p.changed
}

// Send writes line and a newline to the child's stdin, failing the test if
// it cannot.
func (p *Proc) Send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatal(p.describe(fmt.Sprintf("%s: %v", line, err)))
	}
}

// CloseStdin closes the child's stdin, for a child that reads it to the end.
func (p *Proc) CloseStdin() error {
	return p.stdin.Close()
}

// Stdout returns the lines of stdout read so far.
func (p *Proc) Stdout() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.out)
}

// Kill sends SIGKILL and waits for the process to be gone, failing the test
// if it cannot send it.
func (p *Proc) Kill() {
	p.t.Helper()
	if err := p.Cmd.Process.Kill(); err != nil {
		p.t.Fatal(err)
	}
	_ = p.Cmd.Wait()
}
