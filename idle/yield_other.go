//go:build !linux

package idle

import "runtime"

func osYield() { runtime.Gosched() }
