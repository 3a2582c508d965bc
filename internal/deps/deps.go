package deps

import (
	_ "github.com/HdrHistogram/hdrhistogram-go"
	_ "github.com/stretchr/testify/require"
	_ "go.uber.org/automaxprocs/maxprocs"
	_ "go.uber.org/fx"
	_ "go.uber.org/goleak"
	_ "golang.org/x/sys/unix"
)
