//go:build !race

package broadcast

const raceBuild = false
