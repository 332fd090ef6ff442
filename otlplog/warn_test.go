package otlplog

import (
	"strings"
	"testing"
	"time"
)

// The first failed attempt is told at once, through the loss writer, with
// the endpoint and what to do, before the export's retries have run out.
func TestFirstFailureWarnedEarly(t *testing.T) {
	srv := startOTLPServer(t, "127.0.0.1:0") // plaintext
	for _, tc := range []struct {
		name, endpoint string
		want           []string
	}{
		{"refused", "http://" + freeAddr(t), []string{"nothing listens at", "connection refused"}},
		{"TLS to plaintext", srv.Addr, []string{"export to https://" + srv.Addr, "TLS", "OTEL_EXPORTER_OTLP_INSECURE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			var buf lockedBuffer
			p := newTestProvider(t, WithEndpoint(tc.endpoint), WithLossWriter(&buf),
				WithScheduleDelay(10*time.Millisecond), WithOTLPTimeout(20*time.Second))
			defer shutdownWithin(p, 100*time.Millisecond)
			emit(p, 1)
			if !eventually(2*time.Second, func() bool { return strings.Contains(buf.String(), "export to") }) {
				t.Fatalf("no warning within 2 s of the first attempt; writer has %q", buf.String())
			}
			line := buf.String()
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("warning %q lacks %q", line, w)
				}
			}
			if strings.Count(line, "\n") != 1 {
				t.Errorf("want one line, got %q", line)
			}
		})
	}
}
