package confval

import (
	"bytes"
	"os"
	"testing"

	"github.com/zaplens/zaplens/internal/testsupport/testcert"
)

// A certificate file is read once, whole, at start: a regular one works,
// a device does not.
func TestCertificateFileRead(t *testing.T) {
	files, err := testcert.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(files.CA)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(files.CA); err != nil || !bytes.Equal(got, want) {
		t.Errorf("read %d bytes, %v; want the file's %d", len(got), err, len(want))
	}
	if _, err := ReadFile(os.DevNull); err == nil {
		t.Error("a device was read as a certificate")
	}
}
