package zaplens

import "fmt"

// panicText is fmt.Sprint of a recovered panic value. The value is user
// code too: one whose String or Error panics in turn makes fmt panic
// again, out of the recover that was to contain the first panic, and a
// logging call would crash the program. Such a value is named by its type.
func panicText(r any) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("%T (its String or Error panicked)", r)
		}
	}()
	return fmt.Sprint(r)
}
