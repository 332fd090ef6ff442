package integration

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/zaplens/zaplens"
	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

// Delivery into VictoriaLogs: a burst counted back in full, a database
// that comes up after logging began, and Shutdown with the database up
// and down. VictoriaLogs answers an export with 200 and an empty body.

// vlLog logs n lines with seq from0 on, through a logger of its own name.
// The lines are the busy rank's of the README's defaults (a message and
// four fields, no caller): the default 24 MiB queue holds 100,000 of them
// with room to spare, however slowly VictoriaLogs takes them. With the
// caller each line is about 2.5 times that, and such a burst can overflow
// the queue on a busy machine.
func vlLog(p *otlplog.LoggerProvider, from0, n int) {
	base := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(e2eDiscard{}), zapcore.DebugLevel)
	l := zap.New(zaplens.NewTee(base, zaplens.WithLoggerProvider(p))).Named("burst")
	for i := from0; i < from0+n; i++ {
		l.Info("burst line", zap.Int("seq", i), zap.Int("step", 1), zap.Float64("loss", 0.5), zap.String("phase", "forward"))
	}
}

// TestVictoriaLogsBurst: 100,000 lines back to back, all of them stored,
// each once.
func TestVictoriaLogsBurst(t *testing.T) {
	const n = 100_000
	s := vlStart(t, "", t.TempDir())
	p, _ := vlProvider(t, s.LogsURL(), "vl-burst")
	start := time.Now()
	vlLog(p, 0, n)
	logged := time.Since(start)
	e2eFlush(t, p)
	if got := vlCount(t, s, "*", n); got != n {
		t.Errorf("VictoriaLogs counts %d lines, want %d; stats %s", got, n, p.Stats())
	}
	rows := vlQuery(t, s, "* | stats count_uniq(seq) as seqs", 1)
	if len(rows) != 1 || rows[0]["seqs"] != strconv.Itoa(n) {
		t.Errorf("distinct seq: %v, want %d", rows, n)
	}
	if st := p.Stats(); st.Exported != n || st.Lost() != 0 {
		t.Errorf("stats %s, want all %d exported", st, n)
	}
	t.Logf("%d lines logged in %v, stored and counted in %v", n, logged.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// TestVictoriaLogsDownThenUp: VictoriaLogs starts a second after logging
// began; what the queue held meanwhile is stored, nothing lost.
func TestVictoriaLogsDownThenUp(t *testing.T) {
	const n = 5000
	addr := testsupport.FreeAddr(t)
	p, losses := vlProvider(t, "http://"+addr+"/insert/opentelemetry/v1/logs", "vl-late")
	vlLog(p, 0, n)
	time.Sleep(time.Second) // the exporter meets a refused connection meanwhile
	s := vlStart(t, addr, t.TempDir())
	e2eFlush(t, p)
	if got := vlCount(t, s, "*", n); got != n {
		t.Errorf("VictoriaLogs counts %d lines, want %d; stats %s", got, n, p.Stats())
	}
	if st := p.Stats(); st.Exported != n || st.Lost() != 0 {
		t.Errorf("stats %s, loss report %q", st, losses.String())
	}
}

// TestVictoriaLogsShutdown: Shutdown delivers what waits in the queue,
// and with VictoriaLogs gone it keeps its deadline and counts exactly
// what VictoriaLogs did not get.
func TestVictoriaLogsShutdown(t *testing.T) {
	t.Run("up", func(t *testing.T) {
		s := vlStart(t, "", t.TempDir())
		// An hour-long delay: only Shutdown sends.
		p, _ := vlProvider(t, s.LogsURL(), "vl-shutdown", otlplog.WithScheduleDelay(time.Hour))
		vlLog(p, 0, 2000)
		if took, err := e2eShutdown(t, p, 5*time.Second); err != nil {
			t.Fatalf("Shutdown after %v: %v", took, err)
		}
		if got := vlCount(t, s, "*", 2000); got != 2000 {
			t.Errorf("VictoriaLogs counts %d lines, want 2000", got)
		}
	})
	t.Run("gone", func(t *testing.T) {
		dir := t.TempDir()
		s := vlStart(t, "", dir)
		p, _ := vlProvider(t, s.LogsURL(), "vl-shutdown")
		vlLog(p, 0, 1000)
		e2eFlush(t, p)
		s.Stop()
		vlLog(p, 1000, 1000)
		took, err := e2eShutdown(t, p, time.Second)
		if took > 1500*time.Millisecond {
			t.Errorf("Shutdown took %v with a 1s deadline", took)
		}
		var de *otlplog.DeliveryError
		if !errors.As(err, &de) || de.Stats.Emitted != 2000 || de.Stats.Exported != 1000 {
			t.Fatalf("Shutdown error %v, want a DeliveryError: 1000 of 2000 not delivered", err)
		}
		// Started again on its data: what was counted exported is there,
		// once each.
		s = vlStart(t, s.Addr(), dir)
		if got := vlCount(t, s, "*", 1000); got != 1000 {
			t.Errorf("VictoriaLogs counts %d lines, want the 1000 exported", got)
		}
		rows := vlQuery(t, s, "* | stats count_uniq(seq) as seqs, max(seq) as last", 1)
		if len(rows) != 1 || rows[0]["seqs"] != "1000" || rows[0]["last"] != "999" {
			t.Errorf("stored seq: %v, want 1000 distinct up to 999", rows)
		}
	})
}
