package gpu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
)

// Halos between ranks on one node go device to device through CUDA IPC
// (backend.Peers). The receiver exports its halo vector and a counter in
// its device memory; the sender exports a counter of its own. Both map the
// other's. A Put waits, on the device, until the receiver's count of
// Releases has reached the sender's count of Puts, gathers the sender's
// entries straight into the receiver's memory over NVLink or PCIe, and
// writes the new Put count into the receiver's counter; Await waits, on
// the receiver's device, for that count, and Release writes the count
// back into the sender's. The counters are written with
// cuStreamWriteValue32, which fences the writes before it, and waited for
// with cuStreamWaitValue32: the hosts only queue work, and never wait for
// each other. Equality tests keep the counters right when they wrap,
// since the two sides are never more than one step apart.
//
// The sender's gathers run on the copy stream, whose priority is the
// highest, beside its diagonal product:
//
//	main: BeginPuts -m-> diagonal SpMV ......... <-j- EndPuts, off-diagonal product
//	copy:           -m-> [released?] gather into the peer, count -j->

// Sizes of the CUDA IPC memory handle and of a device UUID.
const (
	ipcHandleBytes = cuda.IPCHandleBytes
	uuidBytes      = cuda.UUIDBytes
)

const (
	// an offer: UUID, halo memory handle, offset, length, counter handle
	offerBytes = uuidBytes + ipcHandleBytes + 8 + 8 + ipcHandleBytes
	// an answer: counter handle
	answerBytes = ipcHandleBytes
)

var errPeersOff = errors.New("gpu: peer copies are off (SetPeers)")

// SetPeers turns device-to-device halo exchanges with other processes on
// (the default) or off: with them off NewInbox fails and callers exchange
// through the host, which benchmarks compare against.
func (b *Backend) SetPeers(on bool) { b.peersOff = !on }

// counter is a 32-bit count in device memory that a peer writes or waits
// for: ours (allocated here and exported) or theirs (mapped here).
type counter struct {
	ptr    uintptr
	mapped bool // theirs: close the mapping instead of freeing
}

// inbox is a halo vector that a process on this node writes.
type inbox struct {
	b        *Backend
	puts     counter // ours: the writer's count of Puts
	released counter // theirs: our count of Releases, for the writer
	n        uint32  // Awaits so far
}

// NewInbox exports dst and a new counter; the offer carries the device's
// UUID, the IPC handle of dst's allocation with dst's offset in it and
// length, and the counter's handle.
func (b *Backend) NewInbox(dst backend.Vector) (backend.Inbox, []byte, error) {
	defer b.enter()()
	if err := b.peersUsable(); err != nil {
		return nil, nil, err
	}
	v := b.vector("NewInbox", dst)
	if v == nil {
		return nil, nil, b.err
	}
	uuid, err := b.uuid(b.index)
	if err != nil {
		return nil, nil, err
	}
	var base uintptr
	var mem [ipcHandleBytes]byte
	if v.n > 0 {
		if base, _, err = b.drv.MemAddressRange(v.ptr); err != nil {
			return nil, nil, err
		}
		if mem, err = b.exportMemory(base); err != nil {
			return nil, nil, err
		}
	}
	in := &inbox{b: b}
	ch, err := b.newCounter(&in.puts)
	if err != nil {
		in.free()
		return nil, nil, err
	}
	offer := make([]byte, 0, offerBytes)
	offer = append(offer, uuid[:]...)
	offer = append(offer, mem[:]...)
	offer = binary.LittleEndian.AppendUint64(offer, uint64(v.ptr-base))
	offer = binary.LittleEndian.AppendUint64(offer, uint64(v.n))
	offer = append(offer, ch[:]...)
	return in, offer, nil
}

// Connect maps the writer's counter.
func (in *inbox) Connect(answer []byte) error {
	b := in.b
	defer b.enter()()
	if len(answer) != answerBytes {
		return fmt.Errorf("gpu: inbox answer of %d bytes, want %d", len(answer), answerBytes)
	}
	ptr, err := b.openMemory(answer)
	in.released = counter{ptr: ptr, mapped: true}
	return err
}

// Await makes the main stream wait for the writer's next Put.
func (in *inbox) Await() {
	b := in.b
	defer b.enter()()
	in.n++
	b.waitValue(b.stream, in.puts, in.n)
}

// Release writes the count of Awaits into the writer's counter.
func (in *inbox) Release() {
	b := in.b
	defer b.enter()()
	b.writeValue(b.stream, in.released, in.n)
}

// Free releases both counters.
func (in *inbox) Free() {
	defer in.b.enter()()
	in.free()
}

func (in *inbox) free() { in.b.freeCounters(&in.puts, &in.released) }

// outbox writes another process's inbox.
type outbox struct {
	b        *Backend
	base     uintptr // our mapping of the inbox's allocation; 0 for an empty inbox
	dst      Vector  // the inbox, in our address space
	released counter // ours: the reader's count of Releases
	puts     counter // theirs: our count of Puts, for the reader
	n        uint32  // Puts so far
}

// NewOutbox checks that the offer comes from another device of this node,
// maps the inbox and its counter, and answers with the handle of a new
// counter of its own. Two processes that share a device exchange through
// the host: their waits on each other's counters could keep the device
// from running the work they wait for.
func (b *Backend) NewOutbox(offer []byte) (backend.Outbox, []byte, error) {
	defer b.enter()()
	if err := b.peersUsable(); err != nil {
		return nil, nil, err
	}
	if len(offer) != offerBytes {
		return nil, nil, fmt.Errorf("gpu: inbox offer of %d bytes, want %d", len(offer), offerBytes)
	}
	if err := b.seesOther(offer[:uuidBytes]); err != nil {
		return nil, nil, err
	}
	at := uuidBytes + ipcHandleBytes
	offset := uintptr(binary.LittleEndian.Uint64(offer[at:]))
	n := int(binary.LittleEndian.Uint64(offer[at+8:]))
	out := &outbox{b: b, dst: Vector{b: b, n: n}}
	var err error
	if n > 0 {
		if out.base, err = b.openMemory(offer[uuidBytes:at]); err != nil {
			return nil, nil, err
		}
		out.dst.ptr = out.base + offset
	}
	ptr, err := b.openMemory(offer[at+16:])
	out.puts = counter{ptr: ptr, mapped: true}
	if err != nil {
		out.free()
		return nil, nil, err
	}
	answer, err := b.newCounter(&out.released)
	if err != nil {
		out.free()
		return nil, nil, err
	}
	return out, answer[:], nil
}

// Put waits, on the copy stream, for the reader's Release of the last Put,
// gathers src[idx] into the inbox and writes the count of Puts into the
// reader's counter.
func (out *outbox) Put(src backend.Vector, idx backend.Index) {
	b := out.b
	defer b.enter()()
	if b.putsWait && b.err == nil {
		b.fail(b.drv.StreamWaitEvent(b.copyStream, b.putsFrom, "puts"))
		b.putsWait = false
	}
	b.waitValue(b.copyStream, out.released, out.n)
	b.gather(&out.dst, src, idx, "Put", b.copyStream)
	out.n++
	b.writeValue(b.copyStream, out.puts, out.n)
}

// Free unmaps the inbox and releases both counters.
func (out *outbox) Free() {
	defer out.b.enter()()
	out.free()
}

func (out *outbox) free() {
	if out.base != 0 {
		out.b.fail(out.b.drv.IPCCloseMemHandle(out.base, ""))
		out.base = 0
	}
	out.b.freeCounters(&out.released, &out.puts)
}

// BeginPuts marks the work queued so far on the main stream; the first Put
// after it makes the copy stream wait for that mark. Only the mark is made
// here, so that the kernel queued next (the diagonal product) starts one
// driver call sooner.
func (b *Backend) BeginPuts() {
	defer b.enter()()
	if b.err == nil {
		b.fail(b.drv.EventRecord(b.putsFrom, b.stream, "puts"))
	}
	b.putsWait = true
}

// EndPuts makes the main stream wait for the work queued so far on the
// copy stream.
func (b *Backend) EndPuts() {
	defer b.enter()()
	b.order(b.stream, b.copyStream)
}

// peersUsable says why this backend cannot exchange with peers, if it
// cannot.
func (b *Backend) peersUsable() error {
	switch {
	case b.peersOff:
		return errPeersOff
	case runtime.GOARCH != "amd64":
		// cuda.IPCOpenMemHandle lays out the IPC handle, passed by value, as the
		// System V AMD64 ABI does; other ABIs pass it otherwise
		return errors.New("gpu: device-to-device halos are only built for amd64")
	case !b.drv.HasStreamValues():
		return errors.New("gpu: the driver has no stream memory operations (CUDA 11.7 or later)")
	}
	return nil
}

// newCounter allocates a zeroed counter, waits for the zero to be written
// (a peer may write it as soon as it has the handle) and returns the
// handle that exports it.
func (b *Backend) newCounter(c *counter) ([ipcHandleBytes]byte, error) {
	var h [ipcHandleBytes]byte
	p, err := b.alloc(4, "peer counter")
	if err != nil {
		return h, err
	}
	*c = counter{ptr: p}
	if err := b.drv.MemsetD32Async(p, 0, 1, b.stream, "peer counter"); err != nil {
		return h, err
	}
	if err := b.drv.StreamSynchronize(b.stream, ""); err != nil {
		return h, err
	}
	return b.exportMemory(p)
}

// freeCounters closes the mappings of their counters and retires ours until
// Close (a peer's last write into one may still be on its way: freeing a
// link is not collective). Each counter is an allocation of its own (4
// bytes asked, the driver's granularity taken); a program that rebuilds its
// operators keeps two per link per rebuild until it closes the backend.
func (b *Backend) freeCounters(cs ...*counter) {
	for _, c := range cs {
		switch {
		case c.ptr == 0:
		case c.mapped:
			b.fail(b.drv.IPCCloseMemHandle(c.ptr, "peer counter"))
		default:
			b.retired = append(b.retired, c.ptr)
		}
		*c = counter{}
	}
}

// waitValue queues on stream a wait until the counter equals v.
func (b *Backend) waitValue(stream uintptr, c counter, v uint32) {
	if b.err == nil {
		b.fail(b.drv.StreamWaitValue32(stream, c.ptr, v, "peer counter"))
	}
}

// writeValue queues on stream the write of v into the counter, after the
// writes of the work queued before it.
func (b *Backend) writeValue(stream uintptr, c counter, v uint32) {
	if b.err == nil {
		b.fail(b.drv.StreamWriteValue32(stream, c.ptr, v, "peer counter"))
	}
}

// exportMemory returns the IPC handle of the allocation that starts at
// base.
func (b *Backend) exportMemory(base uintptr) ([ipcHandleBytes]byte, error) {
	return b.drv.IPCGetMemHandle(base)
}

// openMemory maps another process's allocation from its IPC handle and
// returns its base here.
func (b *Backend) openMemory(handle []byte) (uintptr, error) {
	return b.drv.IPCOpenMemHandle(handle)
}

// uuid returns the UUID of device index.
func (b *Backend) uuid(index int) ([uuidBytes]byte, error) {
	dev, err := b.drv.Device(index)
	if err != nil {
		return [uuidBytes]byte{}, err
	}
	return b.drv.DeviceUUID(dev)
}

// seesOther reports whether a device with this UUID, other than this
// backend's, is visible to the process: then it is on this node and IPC
// may reach it.
func (b *Backend) seesOther(uuid []byte) error {
	if own, err := b.uuid(b.index); err != nil {
		return err
	} else if bytes.Equal(own[:], uuid) {
		return errors.New("gpu: the peer shares this device")
	}
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
