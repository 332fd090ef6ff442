package configfile

import (
	"testing"

	"github.com/zaplens/zaplens/internal/declarative"
)

// headers_list in OTEL_CONFIG_FILE is read as the variable is: decoded,
// then trimmed.
func TestFileHeadersListDecodeThenTrim(t *testing.T) {
	list := "authorization=Bearer%20tok%0A, x-team = %20ml"
	h, err := fileHeaders("f", nil, &list)
	if err != nil || h["authorization"] != "Bearer tok" || h["x-team"] != "ml" {
		t.Errorf("headers_list %q: %q, %v", list, h, err)
	}
}

// A tls section's file that cannot be used is named by its key, the
// first of them refusing the file (otlplog's fileTLS); the certificate
// and the key come together, and the one missing is named.
func TestFileTLSRefused(t *testing.T) {
	missing, other := "/nonexistent/ca.pem", "/nonexistent/other.pem"
	for _, tc := range []struct {
		tls  declarative.TLS
		want string
	}{
		{declarative.TLS{CAFile: &missing}, "T.ca_file: open /nonexistent/ca.pem: no such file or directory"},
		{declarative.TLS{CAFile: &missing, CertFile: &other}, "T.ca_file: open /nonexistent/ca.pem: no such file or directory"},
		{declarative.TLS{CertFile: &other, KeyFile: &other}, "T.cert_file and key_file: open /nonexistent/other.pem: no such file or directory"},
		{declarative.TLS{CertFile: &other}, "T.key_file: missing; cert_file needs it"},
		{declarative.TLS{KeyFile: &other}, "T.cert_file: missing; key_file needs it"},
	} {
		cfg, errs := tlsFiles("T", tc.tls).Config()
		if cfg != nil || len(errs) == 0 || errs[0].Error() != tc.want {
			t.Errorf("%+v: %v, %v; want %s first", tc.tls, cfg, errs, tc.want)
		}
	}
}
