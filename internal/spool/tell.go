package spool

import (
	"fmt"
	"sync"
)

// maxTold bounds the lines waiting for a slow writer.
const maxTold = 64

// teller tells lines to a writer in the order they came, from a goroutine
// of its own while any wait: a logging call that tells one must not wait
// on the writer, and "stepped aside" must not reach it after "writing
// again".
type teller struct {
	say func(string)

	mu      sync.Mutex
	lines   []string
	dropped int // lines that found maxTold waiting
	telling bool
}

// tell queues a line, and starts the goroutine that tells them if none is
// running.
func (t *teller) tell(line string) {
	if t.say == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) >= maxTold {
		t.dropped++
		return
	}
	t.lines = append(t.lines, line)
	if !t.telling {
		t.telling = true
		go t.drain()
	}
}

func (t *teller) drain() {
	for {
		t.mu.Lock()
		if len(t.lines) == 0 {
			t.telling = false
			t.mu.Unlock()
			return
		}
		line := t.lines[0]
		t.lines = t.lines[1:]
		if t.dropped > 0 && len(t.lines) == 0 {
			line += fmt.Sprintf(" (and %d lines of the spool before it were dropped: the writer did not keep up)", t.dropped)
			t.dropped = 0
		}
		t.mu.Unlock()
		t.say(line)
	}
}
