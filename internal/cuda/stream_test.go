package cuda

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"
)

// TestMemOpLayout checks MemOp against CUstreamBatchMemOpParams of the
// driver API (cuda.h): a union of 48 bytes (its pad member is six 64-bit
// words) whose waitValue and writeValue members hold the operation at 0,
// the address at 8, the value at 16, the flags at 24 and alias at 32.
func TestMemOpLayout(t *testing.T) {
	var op MemOp
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"size", unsafe.Sizeof(op), 48},
		{"operation", unsafe.Offsetof(op.op), 0},
		{"address", unsafe.Offsetof(op.address), 8},
		{"value", unsafe.Offsetof(op.value), 16},
		{"flags", unsafe.Offsetof(op.flags), 24},
		{"alias", unsafe.Offsetof(op.alias), 32},
		{"operation size", unsafe.Sizeof(op.op), 4},
		{"address size", unsafe.Sizeof(op.address), 8},
		{"value size", unsafe.Sizeof(op.value), 4},
		{"flags size", unsafe.Sizeof(op.flags), 4},
	} {
		if c.got != c.want {
			t.Errorf("MemOp %s: %d, want %d", c.what, c.got, c.want)
		}
	}
	// an array of them is what the driver reads: no padding between
	ops := make([]MemOp, 2)
	if d := uintptr(unsafe.Pointer(&ops[1])) - uintptr(unsafe.Pointer(&ops[0])); d != 48 {
		t.Errorf("MemOps %d bytes apart in a slice, want 48", d)
	}
}

// TestMemOps checks the operations that WaitOp and WriteOp make: the
// CUstreamBatchMemOpType and the flags of cuStreamWaitValue32 and
// cuStreamWriteValue32.
func TestMemOps(t *testing.T) {
	w := WaitOp(0x7f0012345678, 9)
	if w != (MemOp{op: 1, address: 0x7f0012345678, value: 9, flags: 1}) {
		t.Errorf("WaitOp: %+v, want operation CU_STREAM_MEM_OP_WAIT_VALUE_32 (1), flags CU_STREAM_WAIT_VALUE_EQ (1)", w)
	}
	v := WriteOp(0x7f0012345680, 1<<31+5)
	if v != (MemOp{op: 2, address: 0x7f0012345680, value: 1<<31 + 5, flags: 0}) {
		t.Errorf("WriteOp: %+v, want operation CU_STREAM_MEM_OP_WRITE_VALUE_32 (2), flags 0", v)
	}
}

// TestChecksBuildNoName: a call that succeeds builds no error text, so
// the calls queued for every product allocate nothing.
func TestChecksBuildNoName(t *testing.T) {
	d := new(Driver)
	what := "peer counter"
	for name, check := range map[string]func() error{
		"checkNamed": func() error { return d.checkNamed(success, "cuStreamWaitValue32", what) },
		"checkCopy":  func() error { return d.checkCopy(success, "HtoD", 4096, what) },
	} {
		var err error
		if allocs := testing.AllocsPerRun(100, func() { err = check() }); allocs != 0 || err != nil {
			t.Errorf("%s of a success: %v allocations, error %v", name, allocs, err)
		}
	}
}

// TestStreamBatchOnGPU queues a batch of writes and waits whose waits are
// met (a wait that is not would hang the stream), more than one
// cuStreamBatchMemOp takes, and checks the words written. Skips without a
// GPU.
func TestStreamBatchOnGPU(t *testing.T) {
	d, err := Load()
	if errors.Is(err, ErrNoDriver) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n, err := d.DeviceCount(); err != nil || n == 0 {
		t.Skipf("no GPU: %v", err)
	}
	if !d.HasStreamValues() {
		t.Skip("the driver has no stream memory operations")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, err := d.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := d.PrimaryCtxRetain(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer d.PrimaryCtxRelease(dev)
	if err := d.CtxSetCurrent(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := d.StreamCreate(StreamNonBlocking, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.StreamDestroy(s)
	p, err := d.MemAlloc(16, "test words")
	if err != nil {
		t.Fatal(err)
	}
	defer d.MemFree(p, "test words")
	host, err := d.MemAllocHost(16, "test words")
	if err != nil {
		t.Fatal(err)
	}
	defer d.MemFreeHost(host, "test words")
	if err := d.MemsetD32Async(p, 0, 4, s, ""); err != nil {
		t.Fatal(err)
	}
	ops := []MemOp{WriteOp(p, 1), WriteOp(p+4, 2), WaitOp(p, 1), WaitOp(p+4, 2), WriteOp(p+8, 3)}
	const counts = 300
	for i := range uint32(counts) {
		ops = append(ops, WriteOp(p+12, i+1), WaitOp(p+12, i+1))
	}
	if err := d.StreamBatch(s, ops, "test words"); err != nil {
		t.Fatal(err)
	}
	if err := d.MemcpyDtoHAsync(host, p, 16, s, ""); err != nil {
		t.Fatal(err)
	}
	if err := d.StreamSynchronize(s, ""); err != nil {
		t.Fatal(err)
	}
	got := unsafe.Slice((*uint32)(host), 4)
	if want := [4]uint32{1, 2, 3, counts}; [4]uint32(got) != want {
		t.Errorf("words %v, want %v", got, want)
	}
}
