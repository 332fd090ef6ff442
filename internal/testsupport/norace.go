//go:build !race

package testsupport

// RaceEnabled is false: the race detector is off.
const RaceEnabled = false
