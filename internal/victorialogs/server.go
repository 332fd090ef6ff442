package victorialogs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/zaplens/zaplens/internal/toolbin"
)

// Server is a running VictoriaLogs process listening on 127.0.0.1.
// Pid, Exited and Output are its toolbin.Proc's.
type Server struct {
	*toolbin.Proc
	addr string // "127.0.0.1:PORT"
}

// Options are the settings of a Server.
type Options struct {
	// Addr is "127.0.0.1:PORT" to listen on; empty picks a free port.
	Addr string
	// DataDir is the -storageDataPath; it should be empty or one an
	// earlier Server used.
	DataDir string
	// Output receives the process's own log; nil keeps only its last
	// lines, for the errors Start and Wait return.
	Output io.Writer
	// Args are more flags: -storageNode=... makes the process a cluster's
	// vlinsert or vlselect.
	Args []string
}

// Start starts bin and waits until it answers /health, at most 30 s.
func Start(ctx context.Context, bin string, o Options) (*Server, error) {
	addr := o.Addr
	if addr == "" {
		var err error
		if addr, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin,
		"-httpListenAddr="+addr,
		"-storageDataPath="+o.DataDir,
		// Its own log at WARN: the INFO lines of every start would bury
		// the example's output.
		"-loggerLevel=WARN",
		// The data of a test or of the example is hours old at most.
		"-retentionPeriod=1d",
	)
	cmd.Args = append(cmd.Args, o.Args...)
	proc, err := toolbin.Start(cmd, 8<<10, o.Output)
	if err != nil {
		return nil, err
	}
	s := &Server{Proc: proc, addr: addr}
	if err := s.waitHealthy(ctx, 30*time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// freeAddr asks the kernel for a free loopback port. Another process may
// take it before VictoriaLogs binds it; Start then fails with its words.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitHealthy polls /health until it says OK, the process exits or d
// passes.
func (s *Server) waitHealthy(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		if body, err := s.get(ctx, "/health"); err == nil && strings.TrimSpace(body) == "OK" {
			return nil
		}
		select {
		case <-s.Exited():
			return fmt.Errorf("victoria-logs exited at start (%v):\n%s", s.Err(), s.Output())
		case <-ctx.Done():
			return fmt.Errorf("victoria-logs did not answer /health on %s within %v:\n%s", s.addr, d, s.Output())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Addr is "127.0.0.1:PORT".
func (s *Server) Addr() string { return s.addr }

// LogsURL is the OTLP/HTTP logs endpoint, the full URL to give
// otlplog.WithEndpoint (a URL with a path is used as given).
func (s *Server) LogsURL() string { return "http://" + s.addr + "/insert/opentelemetry/v1/logs" }

// UIURL is vmui, the web UI VictoriaLogs serves.
func (s *Server) UIURL() string { return "http://" + s.addr + "/select/vmui/" }

// QueryUIURL is the vmui page that runs query over the last hour. vmui
// reads its parameters from the part after '#', the way its own links do.
func (s *Server) QueryUIURL(query string) string {
	v := url.Values{}
	v.Set("query", query)
	v.Set("g0.relative_time", "last_1_hour")
	return s.UIURL() + "#/?" + v.Encode()
}

// Stop stops the process, gracefully within 10 s, else by killing it:
// os.Interrupt lets it write its in-memory data.
func (s *Server) Stop() { s.Proc.Stop(os.Interrupt, 10*time.Second) }

// Flush makes what was ingested so far searchable at once: VictoriaLogs
// otherwise keeps fresh rows in memory, unseen by queries, for up to a
// second. Its documentation asks tests to do this, and only tests.
func (s *Server) Flush(ctx context.Context) error {
	_, err := s.get(ctx, "/internal/force_flush")
	return err
}

// Query runs a LogsQL query and returns its rows, each a map of field
// name to value: VictoriaLogs stores every value as a string.
func (s *Server) Query(ctx context.Context, query string) ([]map[string]string, error) {
	body, err := s.get(ctx, "/select/logsql/query?"+url.Values{"query": {query}}.Encode())
	if err != nil {
		return nil, err
	}
	var rows []map[string]string
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		row := map[string]string{}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			return nil, fmt.Errorf("query %q: row %q: %w", query, sc.Text(), err)
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

// Count runs `query | count()` and returns the number.
func (s *Server) Count(ctx context.Context, query string) (int, error) {
	rows, err := s.Query(ctx, query+" | count() as n")
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 {
		return 0, fmt.Errorf("count of %q: %d rows, want 1", query, len(rows))
	}
	return strconv.Atoi(rows[0]["n"])
}

// get GETs path and returns the body of a 200 answer.
func (s *Server) get(ctx context.Context, path string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+path, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(resp.Status + ": " + strings.TrimSpace(string(b)))
	}
	return string(b), nil
}
