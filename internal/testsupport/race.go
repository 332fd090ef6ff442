//go:build race

package testsupport

// RaceEnabled: the race detector makes sync.Pool drop items on purpose,
// so allocation counts mean nothing under it.
const RaceEnabled = true
