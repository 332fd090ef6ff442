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
	"syscall"
	"time"

	"github.com/zaplens/zaplens/internal/toolbin"
)

// Process is a running Collector: Pid, Exited, Output and Kill are its
// toolbin.Proc's.
type Process struct {
	*toolbin.Proc
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
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), o.Env...)
	proc, err := toolbin.Start(cmd, 16<<10, o.Output)
	if err != nil {
		return nil, err
	}
	p := &Process{proc}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		if healthy(ctx, o.Health) {
			return p, nil
		}
		select {
		case <-p.Exited():
			return nil, fmt.Errorf("the Collector exited at start (%v):\n%s", p.Err(), p.Output())
		case <-ctx.Done():
			p.Kill()
			return nil, fmt.Errorf("the Collector's health check %s did not answer 200 within 60 s:\n%s", o.Health, p.Output())
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

// Stop stops the process gracefully (SIGTERM: the Collector drains its
// pipelines), within 30 s, else kills it.
func (p *Process) Stop() { p.Proc.Stop(syscall.SIGTERM, 30*time.Second) }

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
