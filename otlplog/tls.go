package otlplog

import (
	"crypto/tls"
	"errors"

	"github.com/zaplens/zaplens/internal/confval"
)

// envTLS builds the TLS configuration from the certificate variables: the
// CA bundle to trust, and the client certificate and key, which must come
// together, loaded as a file's tls section is (confval.TLSFiles). Nil
// when none is set, or none could be used: the system roots are used. A
// file that cannot be used is told and treated as not set.
func envTLS(v *variable) (*tls.Config, error) {
	ca, kca := v.lookup(caVars...)
	cert, kc := v.lookup(clientCertVars...)
	key, kk := v.lookup(clientKeyVars...)
	cfg, errs := confval.TLSFiles{CA: given(ca), Cert: given(cert), Key: given(key),
		CAName: kca, PairName: kc + " and " + kk,
		Unpaired: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (or their LOGS_ forms) must be set together",
	}.Config()
	for i, err := range errs {
		errs[i] = ignored(err)
	}
	return cfg, errors.Join(errs...)
}

// given is a variable's path, nil when the variable is not set.
func given(path string) *string {
	if path == "" {
		return nil
	}
	return &path
}
