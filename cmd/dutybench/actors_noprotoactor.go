//go:build !protoactor

package main

// protoactorVariants are none without -tags protoactor.
func protoactorVariants(bool) []variant { return nil }
