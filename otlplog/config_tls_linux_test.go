//go:build linux

package otlplog

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// The certificate files of the file's tls section are read only when they
// are used: WithTLSConfig, which replaces them, leaves them unread, as it
// leaves the certificate variables (readTLS), so that a file the program
// overrode that is missing, unreadable or on a slow mount costs nothing.
// inotify sees every open of them.
func TestConfigFileTLSReadOnlyWhenUsed(t *testing.T) {
	cleanEnv(t)
	certs := testCerts(t)
	path := filepath.Join(t.TempDir(), "otel.yaml")
	yaml := fmt.Sprintf(`{file_format: "1.0", logger_provider: {processors: [{batch: {exporter: {otlp_grpc: {endpoint: "https://127.0.0.1:1", tls: {ca_file: %q, cert_file: %q, key_file: %q}}}}}]}}`,
		certs.CA, certs.Cert, certs.Key)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_CONFIG_FILE", path)
	opened := watchOpens(t, filepath.Dir(certs.CA))
	for _, tc := range []struct {
		name string
		opts []Option
		want []string
	}{
		{"the file's", nil, []string{filepath.Base(certs.CA), filepath.Base(certs.Cert), filepath.Base(certs.Key)}},
		{"WithTLSConfig's", []Option{WithTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12})}, nil},
		{"the exporter an option's", []Option{WithExporterName("console")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opened() // none before
			p, err := NewLoggerProvider(context.Background(), append(tc.opts, WithLossWriter(nil))...)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := opened()
			slices.Sort(got)
			slices.Sort(tc.want)
			if !slices.Equal(got, tc.want) {
				t.Errorf("opened %q, want %q", got, tc.want)
			}
		})
	}
}

// watchOpens watches dir with inotify and returns a function that tells
// the files opened in it since its last call.
func watchOpens(t *testing.T, dir string) func() []string {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_OPEN); err != nil {
		t.Skipf("inotify watch: %v", err) // the system's watches used up
	}
	return func() []string {
		var names []string
		buf := make([]byte, 64<<10)
		for {
			n, err := syscall.Read(fd, buf)
			if errors.Is(err, syscall.EAGAIN) {
				return names
			}
			if err != nil {
				t.Fatal(err)
			}
			// Each event: wd, mask, cookie, len (4 bytes each), then len bytes of name.
			for off := 0; off+syscall.SizeofInotifyEvent <= n; {
				l := int(binary.NativeEndian.Uint32(buf[off+12:]))
				name := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+l]
				names = append(names, strings.TrimRight(string(name), "\x00"))
				off += syscall.SizeofInotifyEvent + l
			}
		}
	}
}
