package sentinel

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSentinelMatchesItselfAndItsRoot(t *testing.T) {
	a, b := Corrupt("a: corrupt"), Corrupt("b: corrupt")
	wrapped := fmt.Errorf("%w: record at 8: %w", a, errors.New("detail"))
	require.ErrorIs(t, wrapped, a)
	require.ErrorIs(t, wrapped, ErrCorrupt)
	require.NotErrorIs(t, wrapped, ErrClosed)
	require.NotErrorIs(t, wrapped, b, "two packages' sentinels stay distinct")
	require.Equal(t, "a: corrupt: record at 8: detail", wrapped.Error())
	require.NotErrorIs(t, errors.New("a: corrupt"), ErrCorrupt, "only sentinels made by Corrupt match")

	c := Closed("c: closed")
	require.ErrorIs(t, fmt.Errorf("send: %w", c), ErrClosed)
	require.NotErrorIs(t, c, ErrCorrupt)
	require.NotErrorIs(t, c, Closed("c: closed"), "each call is a distinct error")
}
