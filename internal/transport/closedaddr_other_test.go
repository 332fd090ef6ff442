//go:build !unix

package transport

import "testing"

// closedAddr is a loopback address where nothing listens: free a moment
// ago (see the unix version, which keeps it so).
func closedAddr(t testing.TB) string {
	t.Helper()
	l := loopback(t)
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}
