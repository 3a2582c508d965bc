package main

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	runChildIfAsked()
	goleak.VerifyTestMain(m)
}
