package testsupport

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	collogpb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/proto"
)

// envVars is every variable the provider reads; CleanEnv empties them so
// that the machine's environment cannot change a test's outcome.
var envVars = []string{
	"OTEL_SDK_DISABLED", "OTEL_LOGS_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
	"OTEL_BLRP_MAX_QUEUE_SIZE", "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", "OTEL_BLRP_SCHEDULE_DELAY", "OTEL_BLRP_EXPORT_TIMEOUT",
	"OTEL_LOGRECORD_ATTRIBUTE_COUNT_LIMIT", "OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT",
	"RANK", "LOCAL_RANK", "WORLD_SIZE", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
	"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
	"ZAPLENS_QUEUE_BYTES", "ZAPLENS_REQUEST_BYTES", "ZAPLENS_SPOOL_DIR", "ZAPLENS_SPOOL_BYTES", "ZAPLENS_SPOOL_SYNC",
	"ZAPLENS_RETRY_MAX_ELAPSED", "ZAPLENS_RECORD_UID",
	"OTEL_GO_X_OBSERVABILITY", "OTEL_GO_X_SELF_OBSERVABILITY", "OTEL_CONFIG_FILE",
}

// CleanEnv empties every variable the bridge and the provider read, for
// the test.
func CleanEnv(t testing.TB) {
	t.Helper()
	for _, k := range envVars {
		t.Setenv(k, "")
	}
	for _, s := range []string{"ENDPOINT", "INSECURE", "HEADERS", "CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY", "COMPRESSION", "TIMEOUT"} {
		t.Setenv("OTEL_EXPORTER_OTLP_"+s, "")
		t.Setenv("OTEL_EXPORTER_OTLP_LOGS_"+s, "")
	}
}

// Env is CleanEnv with env then set, for the test: the environment a
// table's case gives, and nothing of the machine's.
func Env(t testing.TB, env map[string]string) {
	t.Helper()
	CleanEnv(t)
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// MemExporter keeps records; Block, when set, holds every export until it
// is closed or the export's context ends; Fail makes exports fail. It is the
// pipeline's last step, as the OTLP transport is, with the requests decoded.
type MemExporter struct {
	Mu      sync.Mutex
	Records []*logpb.LogRecord
	Scopes  []string // each record's scope name
	Batches []int    // the records of each request
	Block   chan struct{}
	Fail    error
}

// Export takes one request, as a provider's transport does.
func (e *MemExporter) Export(ctx context.Context, body []byte, n int, _ bool) (int, error) {
	if e.Block != nil {
		select {
		case <-e.Block:
		case <-ctx.Done():
			return n, ctx.Err()
		}
	}
	if e.Fail != nil {
		return n, e.Fail
	}
	var req collogpb.ExportLogsServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		return n, err
	}
	e.Mu.Lock()
	defer e.Mu.Unlock()
	for _, rl := range req.ResourceLogs {
		for _, sl := range rl.ScopeLogs {
			for _, r := range sl.LogRecords {
				e.Records = append(e.Records, r)
				e.Scopes = append(e.Scopes, sl.GetScope().GetName())
			}
		}
	}
	e.Batches = append(e.Batches, n)
	return 0, nil
}

// Len is how many records it holds.
func (e *MemExporter) Len() int {
	e.Mu.Lock()
	defer e.Mu.Unlock()
	return len(e.Records)
}

// ShutdownWithin shuts p down with a deadline d from now and returns
// Shutdown's error.
func ShutdownWithin(p interface{ Shutdown(context.Context) error }, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return p.Shutdown(ctx)
}

// Eventually polls cond until it holds or d passes, and reports whether
// it held: for what a goroutine or a process does in its own time.
func Eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// LockedBuffer is a WriteSyncer tests read while others write to it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

// Write appends p.
func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Sync does nothing.
func (b *LockedBuffer) Sync() error { return nil }

// String is what was written.
func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ChildCommand runs this test binary's test named test as a child
// process, with env added to the environment less its OTEL_ and ZAPLENS_
// variables, so that the machine's cannot change the child's outcome.
func ChildCommand(test string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "ZAPLENS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd
}
