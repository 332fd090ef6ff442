package zaplens

import (
	"strings"
	"testing"

	"go.uber.org/zap"
)

// A prefix that can match no zap name is told once when the core is built;
// "" is the root logger, and takes it.
func TestUnmatchablePrefixesWarned(t *testing.T) {
	var out lockedBuffer
	defer swapLossOutput(&out)()
	told.Clear() // told once per process: a rerun (-count) starts afresh
	for range 3 {
		NewCore(WithLoggerName("http.", "*", "a..b", "ok", ""), WithoutLoggerName(".x"))
	}
	got := out.String()
	for _, want := range []string{`WithLoggerName("http.")`, `WithLoggerName("*")`, `WithLoggerName("a..b")`, `WithoutLoggerName(".x")`} {
		if strings.Count(got, want) != 1 {
			t.Errorf("want one warning for %s, got:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"ok"`) || strings.Contains(got, `WithLoggerName("")`) {
		t.Errorf("a valid prefix was warned about:\n%s", got)
	}

	c := newCapture(t)
	logger := zap.New(NewCore(WithLoggerProvider(c.lp), WithLoggerName("", "http")))
	logger.Info("root")
	logger.Named("http").Info("http")
	logger.Named("db").Info("db")
	if n := len(c.records()); n != 2 {
		t.Errorf("bridged %d records, want the root's and http's", n)
	}
}
