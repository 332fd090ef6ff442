package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zaplens/zaplens/internal/testsupport"
	"github.com/zaplens/zaplens/otlplog"
)

// TLS and credentials: TLS is never silently downgraded, a wrong token is
// counted as failed, and no message shows a token or URL credentials.

func TestProviderTLSNotDowngraded(t *testing.T) {
	r := StartReceiver(t, WithTLS())
	for _, proto := range protos {
		hostPort := r.Endpoint()
		if proto == HTTP {
			hostPort = r.HTTPEndpoint()
		}
		for _, tc := range []struct{ name, endpoint, ca, want string }{
			{"https, CA not given", "https://" + hostPort, "", "certificate"},
			{"http:// to a TLS collector", "http://" + hostPort, r.CAFile(), "TLS"},
			{"scheme-less, CA not given", hostPort, "", "certificate"},
		} {
			t.Run(proto.Short()+"/"+tc.name, func(t *testing.T) {
				testsupport.CleanEnv(t)
				r.Reset()
				t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", string(proto))
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tc.endpoint)
				t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", tc.ca)
				p, _ := provFromEnv(t, otlplog.WithOTLPTimeout(5*time.Second))
				provLog(p, 10)
				start := time.Now()
				err := p.ForceFlush(context.Background())
				if st := p.Stats(); r.Count() != 0 || st.Failed != 10 {
					t.Errorf("received %d, stats %s; want 10 failed", r.Count(), st)
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("ForceFlush error %v, want one that says %s", err, tc.want)
				}
				// One more attempt, at once, may follow a gRPC preface cut
				// short (a restart reads alike), after gRPC's reconnect
				// backoff of a second; a failure retried until the timeout
				// takes 5 s.
				if d := time.Since(start); d > 2500*time.Millisecond {
					t.Errorf("ForceFlush took %v: a TLS failure was retried", d)
				}
			})
		}
	}
}

func TestProviderWrongTokenFromEnv(t *testing.T) {
	testsupport.CleanEnv(t)
	r := StartReceiver(t, WithTLS(), WithBearerToken("right-token"))
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.Endpoint())
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", r.CAFile())
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20wr0ng-T0KEN")
	losses := &testsupport.LockedBuffer{}
	p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(losses))
	if err != nil {
		t.Fatal(err)
	}
	logs := &testsupport.LockedBuffer{}
	l := e2eLogger(p, logs)
	for range 10 {
		l.Info("rejected")
	}
	flushErr := p.ForceFlush(context.Background())
	_, shutErr := e2eShutdown(t, p, 5e9)
	st := p.Stats()
	if st.Failed != 10 || r.Count() != 0 || r.AuthFailures() == 0 {
		t.Errorf("stats %s, received %d, auth failures %d", st, r.Count(), r.AuthFailures())
	}
	if shutErr == nil || !strings.Contains(shutErr.Error(), "10 failed") {
		t.Errorf("Shutdown error %v", shutErr)
	}
	for what, msg := range map[string]string{"flush error": errString(flushErr), "shutdown error": errString(shutErr),
		"loss report": losses.String(), "user log": logs.String()} {
		if strings.Contains(msg, "wr0ng") || strings.Contains(msg, "T0KEN") {
			t.Errorf("the token appears in the %s: %s", what, msg)
		}
	}
}

// An endpoint variable with credentials in its URL is ignored, as a bad
// value is, with a warning that does not show them; nothing goes to it.
func TestProviderEndpointCredentialsHidden(t *testing.T) {
	testsupport.CleanEnv(t)
	r := StartReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://admin:pa55w0rd@"+r.Endpoint())
	var losses testsupport.LockedBuffer
	p, err := otlplog.NewLoggerProvider(context.Background(), otlplog.WithLossWriter(&losses))
	if err != nil {
		t.Errorf("error %v: a bad variable is ignored, not an error", err)
	}
	provLog(p, 1)
	_, _ = e2eShutdown(t, p, time.Second)
	said := losses.String()
	if !strings.Contains(said, "OTEL_EXPORTER_OTLP_ENDPOINT") || strings.Contains(said, "pa55w0rd") || strings.Contains(said, "admin") {
		t.Errorf("warning %q: want one naming the variable and hiding the credentials", said)
	}
	if r.Count() != 0 {
		t.Errorf("received %d at the endpoint with credentials", r.Count())
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
