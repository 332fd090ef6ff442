package transport

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCauseString(t *testing.T) {
	seen := map[string]bool{}
	for c := Delivered; c < Cause(len(causeNames)); c++ { // each named
		s := c.String()
		if s == "" || strings.HasPrefix(s, "Cause(") || seen[s] {
			t.Errorf("Cause(%d).String() = %q", int(c), s)
		}
		seen[s] = true
	}
	if past := Cause(len(causeNames)); past.String() != fmt.Sprintf("Cause(%d)", int(past)) {
		t.Errorf("the cause past the last named: %q", past.String())
	}
	if got := Cause(99).String(); got != "Cause(99)" {
		t.Errorf("unknown cause: %q", got)
	}
	if got := Cause(-1).String(); got != "Cause(-1)" {
		t.Errorf("negative cause: %q", got)
	}
}

func TestCauseHint(t *testing.T) {
	if h := Delivered.Hint("x:1"); h != "" {
		t.Errorf("Delivered hint %q", h)
	}
	for c := Refused; c <= ProtocolMismatch+1; c++ {
		h := c.Hint("collector:4317")
		advice := c != Other && c <= ProtocolMismatch // Other's error says why
		if (h != "") != advice || strings.Contains(h, "\n") {
			t.Errorf("%v: hint %q", c, h)
		}
	}
	if h := Refused.Hint("collector:4317"); !strings.Contains(h, "nothing listens at collector:4317") {
		t.Errorf("Refused hint %q", h)
	}
	if h := Unauthenticated.Hint(""); !strings.Contains(h, "authorization header") {
		t.Errorf("Unauthenticated hint %q", h)
	}
	if h := TLSMismatch.Hint("collector:4317"); !strings.Contains(h, "OTEL_EXPORTER_OTLP_INSECURE=true") {
		t.Errorf("TLSMismatch hint %q", h)
	}
	if h := TLSMismatch.Hint("HTTP://collector:4318/v1/logs"); !strings.Contains(h, "https://") {
		t.Errorf("TLSMismatch hint for http:// %q", h)
	}
	if h := Refused.Hint("evil\n\x1b[2J"); strings.ContainsAny(h, "\n\x1b") {
		t.Errorf("hint not sanitized: %q", h)
	}
}

func TestPartial(t *testing.T) {
	secrets := []string{"tok3n"}
	tests := []struct {
		rejected int64
		msg      string
		n        int
		want     int64
		cause    Cause
		err      bool
	}{
		{0, "", 5, 0, Delivered, false},
		{2, "", 5, 2, PartialSuccess, true},
		{-1, "", 5, 0, Delivered, false},
		{-1 << 63, "x", 5, 0, PartialSuccess, true},
		{1<<63 - 1, "", 5, 5, PartialSuccess, true},
		{3, "", 0, 0, Delivered, false},
		{3, "", -4, 0, Delivered, false},
	}
	for _, tt := range tests {
		a := partial(tt.rejected, tt.msg, tt.n, secrets)
		if a.rejected != tt.want || a.cause != tt.cause || (a.err != nil) != tt.err {
			t.Errorf("partial(%d, %q, %d) = %+v", tt.rejected, tt.msg, tt.n, a)
		}
	}
	a := partial(1, "bad tok3n\n", 2, secrets)
	if got := a.err.Error(); got != `collector rejected 1 of 2 log records: bad [redacted]\n` {
		t.Errorf("message %q", got)
	}
}

func TestExportErrorUnwrapsOnlySentinels(t *testing.T) {
	err := errorf(ErrClosed, "closed: %s", "x")
	if !errors.Is(err, ErrClosed) || err.Error() != "closed: x" {
		t.Errorf("%v", err)
	}
	if errors.Unwrap(errorf(nil, "plain")) != nil {
		t.Error("a plain export error unwraps")
	}
}
