//go:build !race

package ipc

const mbRaceEnabled = false
