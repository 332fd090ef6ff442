//go:build !race

package zaplens

const raceEnabled = false
