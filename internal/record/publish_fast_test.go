//go:build duty_codegen && amd64 && !race

package record

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestPublishRecordStoreOrder holds PublishRecord's plain stores to the
// order its release semantics need, in the compiler's own listing (go build
// -gcflags=-S): no call; the first store to memory is the 8-byte claim
// marker at the record; the last two before the return are the 4-byte
// record length at the same address and then the tail guess elsewhere.
// Stores to the stack (argument spills) are ignored.
func TestPublishRecordStoreOrder(t *testing.T) {
	instrs := gcout.Instructions(gcout.Build(t, "-S"), "/internal/record.PublishRecord")
	require.NotEmpty(t, instrs, "PublishRecord not found in the listing")

	// The listing is in code layout order: the entry block first, the
	// return path, then out-of-line blocks (the short-payload loop), which
	// jump back before the length store. So: the first store of the
	// listing, and the last two before the RET.
	ret := -1
	for i, in := range instrs {
		require.False(t, strings.HasPrefix(in, "CALL"), "PublishRecord calls: %s", in)
		if in == "RET" && ret < 0 {
			ret = i
		}
	}
	require.Positive(t, ret, "no RET in PublishRecord")
	var stores []string // "MOVQ (AX)" style: mnemonic and destination
	for _, in := range instrs[:ret] {
		op, args, ok := strings.Cut(in, " ")
		if !ok || !strings.HasPrefix(op, "MOV") {
			continue
		}
		_, dst, ok := strings.Cut(args, ", ")
		if !ok || !strings.Contains(dst, "(") || strings.Contains(dst, "(SP)") || strings.Contains(dst, "(FP)") {
			continue
		}
		stores = append(stores, op+" "+dst)
	}
	require.GreaterOrEqual(t, len(stores), 4, "stores: %v", stores)
	first, length, hint := stores[0], stores[len(stores)-2], stores[len(stores)-1]
	rec := strings.TrimPrefix(first, "MOVQ ")
	require.True(t, strings.HasPrefix(first, "MOVQ (") && !strings.Contains(rec, "("+"SP"), "first store %q is not the 8-byte marker at the record", first)
	require.Equal(t, "MOVL "+rec, length, "the length must be stored, 4 bytes, at the record, second to last (stores %v)", stores)
	require.True(t, strings.HasPrefix(hint, "MOVQ (") && hint != first, "the tail guess must be stored last, elsewhere (stores %v)", stores)
}
