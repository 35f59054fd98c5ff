package cuda

import (
	"unsafe"
)

// Stream and event flags.
const (
	StreamNonBlocking   = 1 // CU_STREAM_NON_BLOCKING: no implicit sync with the legacy default stream
	EventDisableTiming  = 2 // CU_EVENT_DISABLE_TIMING: events cheaper to record and wait for
	streamWaitValueEq   = 1 // CU_STREAM_WAIT_VALUE_EQ
	streamWriteValueDef = 0 // CU_STREAM_WRITE_VALUE_DEFAULT
)

// StreamCreate creates a stream with flags and priority.
func (d *Driver) StreamCreate(flags int, priority int32) (uintptr, error) {
	var s uintptr
	err := d.check(d.call(d.streamCreateWithPriority, uintptr(unsafe.Pointer(&s)), uintptr(flags), uintptr(priority)),
		"cuStreamCreateWithPriority")
	return s, err
}

// StreamDestroy destroys a stream.
func (d *Driver) StreamDestroy(s uintptr) error {
	return d.check(d.call(d.streamDestroy, s), "cuStreamDestroy")
}

// StreamSynchronize waits for the work queued on s; what, if not empty,
// names the stream in errors.
func (d *Driver) StreamSynchronize(s uintptr, what string) error {
	return d.checkNamed(d.call(d.streamSynchronize, s), "cuStreamSynchronize", what)
}

// StreamWaitEvent makes the work queued on s from now on wait for event e.
func (d *Driver) StreamWaitEvent(s, e uintptr, what string) error {
	return d.checkNamed(d.call(d.streamWaitEvent, s, e, 0), "cuStreamWaitEvent", what)
}

// HasStreamValues reports whether the driver has the stream memory
// operations that StreamBatch queues (cuStreamBatchMemOp_v2, CUDA 11.7
// and later: the cuStreamBatchMemOp of CUDA 12's cuda.h, which came with
// cuStreamWaitValue32_v2 and cuStreamWriteValue32_v2).
func (d *Driver) HasStreamValues() bool { return d.streamBatchMemOp != 0 }

// MemOp is one stream memory operation of StreamBatch: a
// CUstreamBatchMemOpParams of the driver API, the union of 48 bytes whose
// waitValue and writeValue members both lay out the operation (a
// CUstreamBatchMemOpType) at offset 0, the address at 8, the value (a
// union of 32 and 64 bits, the 32 low ones on little-endian machines) at
// 16, the flags at 24 and alias, for the driver's use, at 32.
type MemOp struct {
	op      uint32
	_       uint32
	address uint64
	value   uint32
	_       uint32
	flags   uint32
	_       uint32
	alias   uint64
	_       uint64
}

// Operations of MemOp (CUstreamBatchMemOpType).
const (
	memOpWaitValue32  = 1 // CU_STREAM_MEM_OP_WAIT_VALUE_32
	memOpWriteValue32 = 2 // CU_STREAM_MEM_OP_WRITE_VALUE_32
)

// batchMost is the most operations one cuStreamBatchMemOp takes (its count
// must be below 256).
const batchMost = 255

// WaitOp is the operation of cuStreamWaitValue32 (CU_STREAM_WAIT_VALUE_EQ):
// wait until the 32-bit word at device address p equals v.
func WaitOp(p uintptr, v uint32) MemOp {
	return MemOp{op: memOpWaitValue32, address: uint64(p), value: v, flags: streamWaitValueEq}
}

// WriteOp is the operation of cuStreamWriteValue32 (default flags): write
// v into the 32-bit word at device address p, after a fence that makes
// the writes of the work queued before it visible first.
func WriteOp(p uintptr, v uint32) MemOp {
	return MemOp{op: memOpWriteValue32, address: uint64(p), value: v, flags: streamWriteValueDef}
}

// StreamBatch queues ops on s, in their order, in one driver call for up
// to 255 operations (cuStreamBatchMemOp). The driver must have them
// (HasStreamValues); what names the operations in errors.
func (d *Driver) StreamBatch(s uintptr, ops []MemOp, what string) error {
	for len(ops) > 0 {
		n := min(len(ops), batchMost)
		res := d.call(d.streamBatchMemOp, s, uintptr(n), uintptr(unsafe.Pointer(&ops[0])), 0)
		if err := d.checkNamed(res, "cuStreamBatchMemOp", what); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

// EventCreate creates an event with flags (0 or EventDisableTiming).
func (d *Driver) EventCreate(flags int, what string) (uintptr, error) {
	var e uintptr
	err := d.checkNamed(d.call(d.eventCreate, uintptr(unsafe.Pointer(&e)), uintptr(flags)), "cuEventCreate", what)
	return e, err
}

// EventDestroy destroys an event.
func (d *Driver) EventDestroy(e uintptr, what string) error {
	return d.checkNamed(d.call(d.eventDestroy, e), "cuEventDestroy", what)
}

// EventRecord records e on stream s.
func (d *Driver) EventRecord(e, s uintptr, what string) error {
	return d.checkNamed(d.call(d.eventRecord, e, s), "cuEventRecord", what)
}

// EventSynchronize waits for e.
func (d *Driver) EventSynchronize(e uintptr, what string) error {
	return d.checkNamed(d.call(d.eventSynchronize, e), "cuEventSynchronize", what)
}

// EventElapsed returns the milliseconds between two recorded events.
func (d *Driver) EventElapsed(start, stop uintptr) (float32, error) {
	var ms float32
	err := d.check(d.call(d.eventElapsedTime, uintptr(unsafe.Pointer(&ms)), start, stop), "cuEventElapsedTime")
	return ms, err
}

// named is call with what in parentheses, or call alone when what is empty.
func named(call, what string) string {
	if what == "" {
		return call
	}
	return call + "(" + what + ")"
}
