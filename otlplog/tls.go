package otlplog

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// envTLS builds the TLS configuration from the certificate variables: the
// CA bundle to trust, and the client certificate and key, which must come
// together. Nil when none is set, or none could be used: the system roots
// are used. A file that cannot be used is told and treated as not set.
func envTLS(v *variable) (*tls.Config, error) {
	var cfg tls.Config
	var errs []error
	set := false
	if path, k := v.lookup(caVars...); path != "" {
		pool, err := loadCertPool(path)
		if err != nil {
			errs = append(errs, ignored(fmt.Errorf("%s: %w", k, err)))
		} else {
			cfg.RootCAs, set = pool, true
		}
	}
	cert, kc := v.lookup(clientCertVars...)
	key, kk := v.lookup(clientKeyVars...)
	switch {
	case cert != "" && key != "":
		pair, err := loadKeyPair(cert, key)
		if err != nil {
			errs = append(errs, ignored(fmt.Errorf("%s and %s: %w", kc, kk, err)))
		} else {
			cfg.Certificates, set = []tls.Certificate{pair}, true
		}
	case cert != "" || key != "":
		errs = append(errs, ignored(errors.New("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY (or their LOGS_ forms) must be set together")))
	}
	if !set {
		return nil, errors.Join(errs...)
	}
	return &cfg, errors.Join(errs...)
}

func loadCertPool(path string) (*x509.CertPool, error) {
	pem, err := readPEMFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}

func loadKeyPair(certPath, keyPath string) (tls.Certificate, error) {
	cert, err := readPEMFile(certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := readPEMFile(keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}

// maxPEMFile bounds a certificate or key file, and a configuration file:
// far more than any.
const maxPEMFile = 1 << 20

// readPEMFile reads a certificate or key file once, and only a regular file
// of at most maxPEMFile bytes: a FIFO would block the program's start, and
// /dev/zero would read until memory ran out.
func readPEMFile(path string) ([]byte, error) {
	// Non-blocking, so that opening a FIFO returns at once, to be refused.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if st.Size() > maxPEMFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxPEMFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPEMFile+1))
	if err == nil && len(b) > maxPEMFile {
		err = fmt.Errorf("%s: larger than %d bytes", path, maxPEMFile)
	}
	return b, err
}
