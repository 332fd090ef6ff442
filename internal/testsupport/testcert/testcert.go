// Package testcert makes the certificates of the tests' TLS endpoints on
// loopback: a CA, and a certificate it signs for 127.0.0.1 and localhost
// that serves as both server and client certificate.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Files are the PEM files Write made, and the same in memory.
type Files struct {
	CA, Cert, Key string          // ca.pem, cert.pem, key.pem
	Pair          tls.Certificate // Cert and Key
	Pool          *x509.CertPool  // trusts the CA
}

// Write makes a CA and a certificate it signs, valid for a day, and writes
// them into dir.
func Write(dir string) (Files, error) {
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "zaplens test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	caDER, caKey, err := sign(ca, nil, nil)
	if err != nil {
		return Files{}, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return Files{}, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	leafDER, leafKey, err := sign(leaf, caCert, caKey)
	if err != nil {
		return Files{}, err
	}
	keyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		return Files{}, err
	}
	f := Files{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	for path, data := range map[string][]byte{
		f.CA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		f.Cert: certPEM,
		f.Key:  keyPEM,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return Files{}, err
		}
	}
	if f.Pair, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return Files{}, err
	}
	f.Pool = x509.NewCertPool()
	f.Pool.AddCert(caCert)
	return f, nil
}

// sign makes a key for tmpl and signs tmpl with parent's key, or with its
// own when parent is nil.
func sign(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	return der, key, err
}
