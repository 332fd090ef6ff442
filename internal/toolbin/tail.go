package toolbin

import "sync"

// Tail is an io.Writer that keeps the last Max bytes written to it: a
// child's output, for a failure's message, without holding all of it.
type Tail struct {
	Max int
	mu  sync.Mutex
	b   []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.Max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// String is what is kept.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
