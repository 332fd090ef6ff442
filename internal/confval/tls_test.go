package confval

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zaplens/zaplens/internal/testsupport/testcert"
)

// The files make the configuration of those that could be used, nil when
// none could; each that could not is an error under the name its caller
// gave, the CA's first.
func TestTLSFiles(t *testing.T) {
	dir := t.TempDir()
	files, err := testcert.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := ""
	for _, tc := range []struct {
		name          string
		ca, cert, key *string
		want          string // the configuration's CA and pair, and the errors
	}{
		{"none", nil, nil, nil, "nil"},
		{"all", &files.CA, &files.Cert, &files.Key, "ca true, pair true"},
		{"CA only", &files.CA, nil, nil, "ca true, pair false"},
		{"pair only", nil, &files.Cert, &files.Key, "ca false, pair true"},
		{"bad CA, good pair", &notPEM, &files.Cert, &files.Key, "ca false, pair true; CA: " + notPEM + ": no PEM certificate in it"},
		{"empty CA path", &empty, nil, nil, "nil; CA: open : no such file or directory"},
		{"good CA, bad pair", &files.CA, &notPEM, &files.Key, "ca true, pair false; PAIR: tls: failed to find any PEM data in certificate input"},
		{"both bad", &notPEM, &files.Key, &files.Cert, "nil; CA: " + notPEM + ": no PEM certificate in it; PAIR: tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched"},
		{"cert alone", &files.CA, &files.Cert, nil, "ca true, pair false; UNPAIRED"},
		{"key alone", nil, nil, &files.Key, "nil; UNPAIRED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, errs := TLSFiles{CA: tc.ca, Cert: tc.cert, Key: tc.key, CAName: "CA", PairName: "PAIR", Unpaired: "UNPAIRED"}.Config()
			got := "nil"
			if cfg != nil {
				got = fmt.Sprintf("ca %v, pair %v", cfg.RootCAs != nil, len(cfg.Certificates) == 1)
			}
			for _, err := range errs {
				got += "; " + err.Error()
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
