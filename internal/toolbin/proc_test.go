//go:build unix

package toolbin

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process that ends on SIGTERM is stopped by it, its output kept; one
// that ignores it is killed when the grace is over.
func TestProcStop(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		wantKilled   bool
	}{
		{"ends on the signal", `trap 'echo bye; exit 0' TERM; echo hi; while :; do sleep 0.05; done`, false},
		{"ignores the signal", `trap '' TERM; echo hi; while :; do sleep 0.05; done`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Start(exec.Command("sh", "-c", tc.script), 64, nil)
			if err != nil {
				t.Fatal(err)
			}
			for !strings.Contains(p.Output(), "hi") {
				time.Sleep(10 * time.Millisecond)
			}
			p.Stop(syscall.SIGTERM, 300*time.Millisecond)
			select {
			case <-p.Exited():
			default:
				t.Fatal("Stop returned before the process ended")
			}
			killed := p.Err() != nil && strings.Contains(p.Err().Error(), "killed")
			if killed != tc.wantKilled {
				t.Fatalf("ended with %v, output %q; killed %v, want %v", p.Err(), p.Output(), killed, tc.wantKilled)
			}
		})
	}
}
