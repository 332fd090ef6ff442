//go:build unix

package transport

import (
	"net"
	"strconv"
	"syscall"
	"testing"
)

// closedAddr is a loopback address where nothing listens, for the whole
// test: a socket bound to it that never listens holds the port, so that a
// dial is refused and no other test's listener, run in parallel, takes
// the port meanwhile (one did: a refused address answered as a gRPC
// server).
func closedAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fd)
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}
