//go:build duty_codegen

package message

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestFixedRouteIsNotGeneric holds the Fixed route to docs/message.md: its
// Receive is a method of a type that is not generic (a drain's call of a
// generic type's method through mailbox.Receiver goes through a wrapper
// that passes the type's dictionary, one more call per message); from the
// compiler's own listing (go build -gcflags=-S).
func TestFixedRouteIsNotGeneric(t *testing.T) {
	listing := gcout.Build(t, "-S")
	require.NotEmpty(t, gcout.Instructions(listing, "/message.(*fixedRoute).Receive"), "(*fixedRoute).Receive not found in the listing")
	require.NotRegexp(t, `(?m)^\S+message\.\(\*fixedRoute\[`, listing, "fixedRoute must not be generic")
}
