package transport

import (
	"net"
	"syscall"
)

// peek copies into b what the server sent on c that is still unread,
// without taking it, and returns how many bytes; 0 when nothing is there or
// c is no socket. It never waits.
func peek(c net.Conn, b []byte) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = raw.Read(func(fd uintptr) bool {
		if m, _, err := syscall.Recvfrom(int(fd), b, syscall.MSG_PEEK|syscall.MSG_DONTWAIT); err == nil {
			n = m
		}
		return true // done, whatever came: never wait for more
	})
	return n
}
