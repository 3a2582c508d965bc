package atomicbuf

import "testing"

// The release fast path (a plain MOV on amd64) against sync/atomic's
// sequentially consistent store (an XCHG on amd64).
func BenchmarkStoreInt64SeqCst(b *testing.B) {
	buf := Make(64)
	p := buf.Int64At(0)
	for i := 0; i < b.N; i++ {
		p.Store(int64(i))
	}
}

func BenchmarkStoreInt64Release(b *testing.B) {
	buf := Make(64)
	p := buf.Int64At(0)
	for i := 0; i < b.N; i++ {
		StoreRelease64(p, int64(i))
	}
}
