package zaplens

import "github.com/zaplens/zaplens/internal/zapfield"

// panicText is fmt.Sprint of a recovered panic value, safe against one
// whose String or Error panics in turn (see zapfield.PanicText).
func panicText(r any) string { return zapfield.PanicText(r) }
