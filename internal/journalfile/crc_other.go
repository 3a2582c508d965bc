//go:build !amd64

package journalfile

import "hash/crc32"

// crcUpdate is crc32.Update(crc, Castagnoli, p).
func crcUpdate(crc uint32, p []byte) uint32 { return crc32.Update(crc, Castagnoli, p) }
