//go:build !cring

package main

// cringVariants are none without -tags cring (cgo and a C compiler).
func cringVariants(string) []variant { return nil }
