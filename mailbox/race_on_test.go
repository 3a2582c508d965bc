//go:build race

package mailbox

const raceEnabled = true
