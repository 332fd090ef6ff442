package confval

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// TLSFiles are the PEM files of an exporter's TLS configuration, as the
// certificate variables or a file's tls section give them, and the names
// its messages call them by.
type TLSFiles struct {
	// CA is the bundle of certificates to trust; Cert and Key the client
	// certificate and its key, which come together. Nil: not given (an
	// empty path given is tried, and fails).
	CA, Cert, Key *string
	CAName        string // names CA in its error: "OTEL_EXPORTER_OTLP_CERTIFICATE"
	PairName      string // names Cert and Key in their error: "X and Y"
	Unpaired      string // the error when only one of Cert and Key is given
}

// Config loads the files into a TLS configuration: the CA bundle to trust,
// the client certificate and key. It returns nil when none is given or
// none could be used (the system roots are used), and an error for each
// that could not be used, the CA's first.
func (f TLSFiles) Config() (*tls.Config, []error) {
	var cfg tls.Config
	var errs []error
	if f.CA != nil {
		pool, err := loadCertPool(*f.CA)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.CAName, err))
		} else {
			cfg.RootCAs = pool
		}
	}
	switch {
	case f.Cert != nil && f.Key != nil:
		pair, err := loadKeyPair(*f.Cert, *f.Key)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.PairName, err))
		} else {
			cfg.Certificates = []tls.Certificate{pair}
		}
	case f.Cert != nil || f.Key != nil:
		errs = append(errs, errors.New(f.Unpaired))
	}
	if cfg.RootCAs == nil && cfg.Certificates == nil {
		return nil, errs
	}
	return &cfg, errs
}

func loadCertPool(path string) (*x509.CertPool, error) {
	pem, err := ReadFile(path)
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
	cert, err := ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.X509KeyPair(cert, key)
}
