package corrupt

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSentinelMatchesItselfAndTheErr(t *testing.T) {
	a, b := New("a: corrupt"), New("b: corrupt")
	wrapped := fmt.Errorf("%w: record at 8: %w", a, errors.New("detail"))
	require.ErrorIs(t, wrapped, a)
	require.ErrorIs(t, wrapped, Err)
	require.NotErrorIs(t, wrapped, b, "two packages' sentinels stay distinct")
	require.Equal(t, "a: corrupt: record at 8: detail", wrapped.Error())
	require.NotErrorIs(t, errors.New("a: corrupt"), Err, "only sentinels made by New match")
}
