package toolbin

import (
	"context"
	"os"
	"strings"
	"testing"
)

// InCheckout finds what the checkout has, and says which path it lacks.
func TestInCheckout(t *testing.T) {
	path, err := InCheckout("internal/toolbin/source.go")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), "func InCheckout(") {
		t.Fatalf("InCheckout gave %s, not this package's source.go (%v)", path, err)
	}
	if _, err := InCheckout("no/such/file"); err == nil || !strings.Contains(err.Error(), "no/such/file") {
		t.Fatalf("a missing path gave %v", err)
	}
}

// Go runs outside any go.work of the user's, and a failure names what was
// built and carries the go command's own words.
func TestGo(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module m\n", "go.work": "not a go.work\n"} {
		if err := os.WriteFile(dir+"/"+name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Go(context.Background(), dir, "list", "list", "-m"); err != nil {
		t.Fatal(err)
	}
	err := Go(context.Background(), t.TempDir(), "the thing", "nosuchcommand")
	if err == nil || !strings.Contains(err.Error(), "the thing failed after") || !strings.Contains(err.Error(), "nosuchcommand") {
		t.Fatalf("a failing go command gave %v", err)
	}
}
