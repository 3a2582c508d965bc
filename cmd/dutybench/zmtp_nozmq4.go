//go:build !zmq4

package main

// zmq4Variants are none without -tags zmq4.
func zmq4Variants(string) []variant { return nil }
