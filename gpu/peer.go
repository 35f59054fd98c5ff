package gpu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
)

// Halos between ranks on one node go device to device through CUDA IPC
// (backend.Peers): the receiver exports its halo vector and an event it
// records when it has read the halo; the sender maps both, gathers its
// entries straight into the receiver's memory over NVLink or PCIe, and
// records an event of its own that the receiver's main stream waits for.
// The sender's gathers run on the copy stream, beside its diagonal product:
//
//	main: BeginPuts -f-> diagonal SpMV .......... <-j- EndPuts, off-diagonal products
//	copy:           -f-> [released?] gather into peer, record put -j->
//
// The host only passes short messages.

// Sizes of the CUDA IPC handles and of a device UUID.
const (
	ipcHandleBytes = 64
	uuidBytes      = 16
)

const (
	eventInterprocess       = 4 | 2 // CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING
	ipcLazyEnablePeerAccess = 1     // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
	// an offer: UUID, memory handle, offset, length, event handle
	offerBytes  = uuidBytes + ipcHandleBytes + 8 + 8 + ipcHandleBytes
	answerBytes = ipcHandleBytes // an answer: event handle
	// handle words and the integer arguments passed in registers (System V AMD64)
	ipcHandleWords = ipcHandleBytes / 8
	registerArgs   = 6
)

var errPeersOff = errors.New("gpu: peer copies are off (SetPeers)")

// SetPeers turns device-to-device halo exchanges with other processes on
// (the default) or off: with them off NewInbox fails and callers exchange
// through the host, which benchmarks compare against.
func (b *Backend) SetPeers(on bool) { b.peersOff = !on }

// inbox is a halo vector that a process on this node writes.
type inbox struct {
	b        *Backend
	released uintptr // ours: recorded by Release
	put      uintptr // the writer's, opened by Connect
}

// NewInbox exports dst and a new interprocess event; the offer carries the
// device's UUID, the IPC handle of dst's allocation with dst's offset in it
// and length, and the event's handle.
func (b *Backend) NewInbox(dst backend.Vector) (backend.Inbox, []byte, error) {
	defer b.enter()()
	if b.peersOff {
		return nil, nil, errPeersOff
	}
	v := b.vector("NewInbox", dst)
	if v == nil {
		return nil, nil, b.err
	}
	d := b.drv
	uuid, err := b.uuid(b.index)
	if err != nil {
		return nil, nil, err
	}
	var base, size uintptr
	var mem [ipcHandleBytes]byte
	if v.n > 0 {
		if err := d.check(d.call(d.memGetAddressRange, uintptr(unsafe.Pointer(&base)), uintptr(unsafe.Pointer(&size)), v.ptr),
			"cuMemGetAddressRange"); err != nil {
			return nil, nil, err
		}
		if err := d.check(d.call(d.ipcGetMemHandle, uintptr(unsafe.Pointer(&mem[0])), base), "cuIpcGetMemHandle"); err != nil {
			return nil, nil, err
		}
	}
	in := &inbox{b: b}
	if err := d.check(d.call(d.eventCreate, uintptr(unsafe.Pointer(&in.released)), eventInterprocess),
		"cuEventCreate(interprocess)"); err != nil {
		return nil, nil, err
	}
	var ev [ipcHandleBytes]byte
	if err := d.check(d.call(d.ipcGetEventHandle, uintptr(unsafe.Pointer(&ev[0])), in.released), "cuIpcGetEventHandle"); err != nil {
		in.free()
		return nil, nil, err
	}
	offer := make([]byte, 0, offerBytes)
	offer = append(offer, uuid[:]...)
	offer = append(offer, mem[:]...)
	offer = binary.LittleEndian.AppendUint64(offer, uint64(v.ptr-base))
	offer = binary.LittleEndian.AppendUint64(offer, uint64(v.n))
	offer = append(offer, ev[:]...)
	return in, offer, nil
}

// Connect opens the writer's event.
func (in *inbox) Connect(answer []byte) error {
	b := in.b
	defer b.enter()()
	if len(answer) != answerBytes {
		return fmt.Errorf("gpu: inbox answer of %d bytes, want %d", len(answer), answerBytes)
	}
	ev, err := b.openEvent(answer)
	in.put = ev
	return err
}

// Await makes the main stream wait for the writer's last Put.
func (in *inbox) Await() {
	b := in.b
	defer b.enter()()
	if b.err == nil {
		b.fail(b.drv.check(b.drv.call(b.drv.streamWaitEvent, b.stream, in.put, 0), "cuStreamWaitEvent(peer put)"))
	}
}

// Release records the event the writer's next Put waits for.
func (in *inbox) Release() {
	b := in.b
	defer b.enter()()
	if b.err == nil {
		b.fail(b.drv.check(b.drv.call(b.drv.eventRecord, in.released, b.stream), "cuEventRecord(peer released)"))
	}
}

// Free destroys both events.
func (in *inbox) Free() {
	defer in.b.enter()()
	in.free()
}

func (in *inbox) free() { in.b.destroyEvents(&in.released, &in.put) }

// outbox writes another process's inbox.
type outbox struct {
	b        *Backend
	base     uintptr // our mapping of the inbox's allocation; 0 for an empty inbox
	dst      Vector  // the inbox, in our address space
	put      uintptr // ours: recorded by Put
	released uintptr // the reader's, opened from the offer
}

// NewOutbox checks that the offer's device is visible here, maps the
// inbox's memory and the reader's event, and answers with the handle of a
// new interprocess event of its own.
func (b *Backend) NewOutbox(offer []byte) (backend.Outbox, []byte, error) {
	defer b.enter()()
	if b.peersOff {
		return nil, nil, errPeersOff
	}
	if len(offer) != offerBytes {
		return nil, nil, fmt.Errorf("gpu: inbox offer of %d bytes, want %d", len(offer), offerBytes)
	}
	if err := b.sees(offer[:uuidBytes]); err != nil {
		return nil, nil, err
	}
	at := uuidBytes + ipcHandleBytes
	offset := uintptr(binary.LittleEndian.Uint64(offer[at:]))
	n := int(binary.LittleEndian.Uint64(offer[at+8:]))
	d := b.drv
	out := &outbox{b: b, dst: Vector{b: b, n: n}}
	if n > 0 {
		w := handleWords(offer[uuidBytes:at])
		args := []uintptr{uintptr(unsafe.Pointer(&out.base)), ipcLazyEnablePeerAccess}
		if err := d.check(d.call(d.ipcOpenMemHandle, stackAfter(args, w)...), "cuIpcOpenMemHandle"); err != nil {
			return nil, nil, err
		}
		out.dst.ptr = out.base + offset
	}
	var err error
	if out.released, err = b.openEvent(offer[at+16:]); err != nil {
		out.free()
		return nil, nil, err
	}
	if err := d.check(d.call(d.eventCreate, uintptr(unsafe.Pointer(&out.put)), eventInterprocess),
		"cuEventCreate(interprocess)"); err != nil {
		out.free()
		return nil, nil, err
	}
	answer := make([]byte, answerBytes)
	if err := d.check(d.call(d.ipcGetEventHandle, uintptr(unsafe.Pointer(&answer[0])), out.put), "cuIpcGetEventHandle"); err != nil {
		out.free()
		return nil, nil, err
	}
	return out, answer, nil
}

// BeginPuts makes the copy stream wait for the work queued so far on the
// main stream.
func (b *Backend) BeginPuts() {
	defer b.enter()()
	b.order(b.copyStream, b.stream)
}

// EndPuts makes the main stream wait for the work queued so far on the
// copy stream.
func (b *Backend) EndPuts() {
	defer b.enter()()
	b.order(b.stream, b.copyStream)
}

// Put waits, on the copy stream, for the reader's last Release, gathers
// src[idx] into the inbox and records our event.
func (out *outbox) Put(src backend.Vector, idx backend.Index) {
	b := out.b
	defer b.enter()()
	if b.err == nil {
		b.fail(b.drv.check(b.drv.call(b.drv.streamWaitEvent, b.copyStream, out.released, 0), "cuStreamWaitEvent(peer released)"))
	}
	b.gather(&out.dst, src, idx, "Put", b.copyStream)
	if b.err == nil {
		b.fail(b.drv.check(b.drv.call(b.drv.eventRecord, out.put, b.copyStream), "cuEventRecord(peer put)"))
	}
}

// Free unmaps the inbox and destroys the events.
func (out *outbox) Free() {
	defer out.b.enter()()
	out.free()
}

func (out *outbox) free() {
	if out.base != 0 {
		out.b.fail(out.b.drv.check(out.b.drv.call(out.b.drv.ipcCloseMemHandle, out.base), "cuIpcCloseMemHandle"))
		out.base = 0
	}
	out.b.destroyEvents(&out.put, &out.released)
}

// destroyEvents destroys the events made or opened, and zeroes them.
func (b *Backend) destroyEvents(events ...*uintptr) {
	for _, e := range events {
		if *e != 0 {
			b.fail(b.drv.check(b.drv.call(b.drv.eventDestroy, *e), "cuEventDestroy(peer)"))
			*e = 0
		}
	}
}

// openEvent opens an interprocess event from its handle.
func (b *Backend) openEvent(handle []byte) (uintptr, error) {
	var ev uintptr
	args := []uintptr{uintptr(unsafe.Pointer(&ev))}
	err := b.drv.check(b.drv.call(b.drv.ipcOpenEventHandle, stackAfter(args, handleWords(handle[:ipcHandleBytes]))...),
		"cuIpcOpenEventHandle")
	return ev, err
}

// handleWords splits an IPC handle into the eight words that carry it.
func handleWords(h []byte) [ipcHandleWords]uintptr {
	var w [ipcHandleWords]uintptr
	for i := range w {
		w[i] = uintptr(binary.LittleEndian.Uint64(h[8*i:]))
	}
	return w
}

// stackAfter returns the argument list of a C function that takes the
// integer arguments regs and a 64-byte handle struct by value. The System V
// AMD64 ABI passes a struct of more than 16 bytes on the stack and the
// integer arguments in the six registers, whatever their order in the C
// signature; purego.SyscallN puts its seventh and later arguments on the
// stack, so the handle's words follow the registers, padded.
func stackAfter(regs []uintptr, handle [ipcHandleWords]uintptr) []uintptr {
	args := make([]uintptr, registerArgs, registerArgs+ipcHandleWords) // unused registers 0
	copy(args, regs)
	return append(args, handle[:]...)
}

// uuid returns the UUID of device index.
func (b *Backend) uuid(index int) ([uuidBytes]byte, error) {
	var u [uuidBytes]byte
	var dev int32
	d := b.drv
	if err := d.check(d.call(d.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(index)), "cuDeviceGet"); err != nil {
		return u, err
	}
	err := d.check(d.call(d.deviceGetUUID, uintptr(unsafe.Pointer(&u[0])), uintptr(dev)), "cuDeviceGetUuid")
	return u, err
}

// sees reports whether a device with this UUID is visible to the process:
// then it is on this node and IPC may reach it.
func (b *Backend) sees(uuid []byte) error {
	count, err := Available()
	if err != nil {
		return err
	}
	for i := range count {
		u, err := b.uuid(i)
		if err != nil {
			return err
		}
		if bytes.Equal(u[:], uuid) {
			return nil
		}
	}
	return errors.New("gpu: the peer's device is not on this node")
}
