//go:build !race

package errlog

const raceEnabled = false
