package pipeline

import (
	"fmt"
	"sync"
)

// signal wakes every waiter at once: a waiter takes the current channel
// before it checks its condition, and a broadcast closes it.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
}

func (s *signal) channel() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) broadcast() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// panicError is a panic in the export function, counted as a failure.
type panicError struct{ v any }

func (e panicError) Error() string { return fmt.Sprintf("export panicked: %v", e.v) }
