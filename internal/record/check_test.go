package record

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	const capacity = 1024
	for _, c := range []struct {
		name           string
		index          int
		length, typeID int32
		aligned        int
		ok             bool
	}{
		{"an empty message", 0, 8, 1, 8, true},
		{"a message, aligned up", 16, 13, 7, 16, true},
		{"padding", 1000, 24, PaddingTypeID, 24, true},
		{"ending at the end of the log", 1016, 8, 1, 8, true},
		{"ending at the end, unaligned", 1008, 13, 1, 16, true},
		{"a flagged type", 0, 40, FlagFramed | 5, 40, true},
		{"shorter than a header", 0, 7, 1, 8, false},
		{"zero length", 0, 0, 1, 0, false},
		{"negative length (a claim)", 0, -16, 1, 0, false},
		{"past the end", 1016, 16, 1, 16, false},
		{"past the end once aligned", 1008, 17, 1, 24, false},
		{"the largest length", 0, math.MaxInt32, 1, 0, false},
		{"type 0", 0, 8, 0, 8, false},
		{"a negative type but padding", 0, 8, -2, 8, false},
		{"the most negative type", 0, 8, math.MinInt32, 8, false},
	} {
		ok := Check(c.index, capacity, c.length, c.typeID)
		require.Equal(t, c.ok, ok, c.name)
		if ok {
			aligned := Align(int(c.length))
			require.Equal(t, c.aligned, aligned, c.name)
			require.LessOrEqual(t, c.index+aligned, capacity, c.name)
		}
	}
}

func TestCheckClaim(t *testing.T) {
	const capacity = 256
	for _, c := range []struct {
		name    string
		index   int
		marker  int32
		aligned int
		ok      bool
	}{
		{"a record's marker", 0, -21, 24, true},
		{"a batch's marker, to the end", 128, -128, 128, true},
		{"a header only", 248, -8, 8, true},
		{"shorter than a header", 0, -7, 0, false},
		{"past the end", 248, -16, 0, false},
		{"past the end once aligned", 240, -17, 0, false},
		{"not a marker", 0, 16, 0, false},
		{"zero", 0, 0, 0, false},
		{"MinInt32, whose negation overflows", 0, math.MinInt32, 0, false},
	} {
		ok := CheckClaim(c.index, capacity, c.marker)
		require.Equal(t, c.ok, ok, c.name)
		if ok {
			require.Equal(t, c.aligned, Align(int(-c.marker)), c.name)
			require.LessOrEqual(t, c.index+Align(int(-c.marker)), capacity, c.name)
		}
	}
}

// The type id sentinel names no bound of its own: the layers that wrap it
// refuse ids below 1 and above their largest (a publication's
// MaxTypeID), and each says which range it wanted.
func TestTypeIDErrorSaysTheRange(t *testing.T) {
	var p Producer
	err := p.MessageError(0, 0)
	require.ErrorIs(t, err, ErrTypeID)
	require.Equal(t, "ringbuf: message type id out of range: msgTypeId=0, want at least 1", err.Error())
	wrapped := fmt.Errorf("%w: message type id %d, want 1 to %d", ErrTypeID, MaxTypeID+1, MaxTypeID)
	require.NotContains(t, wrapped.Error(), "greater than zero", "a too large id is not reported as too small")
}
