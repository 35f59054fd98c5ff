package comm_test

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
)

// TestBuf needs no MPI: buffers are plain C memory.
func TestBuf(t *testing.T) {
	b := comm.NewBuf[float64](5)
	if len(b.Data) != 5 {
		t.Fatalf("len(NewBuf(5).Data) = %d", len(b.Data))
	}
	for i, x := range b.Data {
		if x != 0 {
			t.Errorf("NewBuf(5).Data[%d] = %v, want 0", i, x)
		}
	}
	v := b.Slice(1, 3)
	v.Data[0] = 7
	if b.Data[1] != 7 || len(v.Data) != 3 || cap(v.Data) != 3 {
		t.Errorf("view: owner sees %v, view len %d cap %d; want 7, 3, 3", b.Data[1], len(v.Data), cap(v.Data))
	}
	v.Free()
	if b.Data[1] != 7 {
		t.Errorf("Free of a view changed the owner")
	}
	b.Free()
	if b.Data != nil {
		t.Errorf("Data after Free = %v, want nil", b.Data)
	}
	b.Free()

	r := comm.NewRecvBuf[int32](3 << 20) // 12 MB: pages on several cores
	for i, x := range r.Data {
		if x != 0 {
			t.Fatalf("NewRecvBuf's Data[%d] = %v, want 0", i, x)
		}
	}
	r.Data[len(r.Data)-1] = 9
	r.Free()

	empty := comm.NewBuf[uint8](0)
	if len(empty.Data) != 0 {
		t.Errorf("len(NewBuf(0).Data) = %d", len(empty.Data))
	}
	empty.Free()
	comm.NewRecvBuf[float64](0).Free()
}
