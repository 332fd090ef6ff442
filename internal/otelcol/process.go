package otelcol

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a running Collector.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
	out  *tail
	stop sync.Once
}

// Options are the settings of a Process.
type Options struct {
	// Configs are the --config arguments, merged in order by the
	// Collector (a later map's keys override an earlier one's).
	Configs []string
	// Env is added to the process's environment: the ${env:...} of the
	// configurations.
	Env []string
	// Health is the health_check extension's host:port, polled until it
	// answers 200.
	Health string
	// Output receives the process's own log; nil keeps only its last
	// lines, for the errors Start returns.
	Output io.Writer
}

// Start starts bin and waits until its health check answers, at most 60 s.
func Start(ctx context.Context, bin string, o Options) (*Process, error) {
	var args []string
	for _, c := range o.Configs {
		args = append(args, "--config", c)
	}
	p := &Process{cmd: exec.Command(bin, args...), done: make(chan struct{}), out: &tail{}}
	p.cmd.Env = append(os.Environ(), o.Env...)
	var w io.Writer = p.out
	if o.Output != nil {
		w = io.MultiWriter(p.out, o.Output)
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		if healthy(ctx, o.Health) {
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("the Collector exited at start (%v):\n%s", p.err, p.out)
		case <-ctx.Done():
			p.Kill()
			return nil, fmt.Errorf("the Collector's health check %s did not answer 200 within 60 s:\n%s", o.Health, p.out)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func healthy(ctx context.Context, addr string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop stops the process gracefully (SIGTERM: the Collector drains its
// pipelines), within 30 s, else kills it.
func (p *Process) Stop() {
	p.stop.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Process) Kill() {
	p.stop.Do(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
}

// Exited is closed when the process has exited, for whatever reason.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Output is the process's last lines of log.
func (p *Process) Output() string { return p.out.String() }

// Metric sums the samples of the Prometheus metric name (or name_total),
// whatever their labels, from the text exposition at url: the Collector's
// own telemetry. A metric with no sample yet is 0.
func Metric(ctx context.Context, url, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, resp.Status)
	}
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		// Prometheus exporters of some releases add _total to counters.
		rest = strings.TrimPrefix(rest, "_total")
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		f := strings.Fields(line[strings.LastIndexByte(line, '}')+1:])
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", url, line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// tail keeps the last 16 KiB written to it.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - 16<<10; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
