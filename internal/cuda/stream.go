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
	return d.check(d.call(d.streamSynchronize, s), named("cuStreamSynchronize", what))
}

// StreamWaitEvent makes the work queued on s from now on wait for event e.
func (d *Driver) StreamWaitEvent(s, e uintptr, what string) error {
	return d.check(d.call(d.streamWaitEvent, s, e, 0), named("cuStreamWaitEvent", what))
}

// HasStreamValues reports whether the driver has the stream memory
// operations (CUDA 11.7 and later) of StreamWaitValue32 and
// StreamWriteValue32.
func (d *Driver) HasStreamValues() bool {
	return d.streamWaitValue32 != 0 && d.streamWriteValue32 != 0
}

// StreamWaitValue32 queues on s a wait until the 32-bit word at device
// address p equals v.
func (d *Driver) StreamWaitValue32(s, p uintptr, v uint32, what string) error {
	return d.check(d.call(d.streamWaitValue32, s, p, uintptr(v), streamWaitValueEq), named("cuStreamWaitValue32", what))
}

// StreamWriteValue32 queues on s the write of v into the 32-bit word at
// device address p, after the writes of the work queued before it.
func (d *Driver) StreamWriteValue32(s, p uintptr, v uint32, what string) error {
	return d.check(d.call(d.streamWriteValue32, s, p, uintptr(v), streamWriteValueDef), named("cuStreamWriteValue32", what))
}

// EventCreate creates an event with flags (0 or EventDisableTiming).
func (d *Driver) EventCreate(flags int, what string) (uintptr, error) {
	var e uintptr
	err := d.check(d.call(d.eventCreate, uintptr(unsafe.Pointer(&e)), uintptr(flags)), named("cuEventCreate", what))
	return e, err
}

// EventDestroy destroys an event.
func (d *Driver) EventDestroy(e uintptr, what string) error {
	return d.check(d.call(d.eventDestroy, e), named("cuEventDestroy", what))
}

// EventRecord records e on stream s.
func (d *Driver) EventRecord(e, s uintptr, what string) error {
	return d.check(d.call(d.eventRecord, e, s), named("cuEventRecord", what))
}

// EventSynchronize waits for e.
func (d *Driver) EventSynchronize(e uintptr, what string) error {
	return d.check(d.call(d.eventSynchronize, e), named("cuEventSynchronize", what))
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
