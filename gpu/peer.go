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
// back into the sender's. Counters are slots of a pool that each process
// exports once, and each process maps a peer's pool once, however many
// links the two share: a program that rebuilds its operators takes no new
// allocation per link and rebuild. The counters are written with the
// operation of cuStreamWriteValue32, which fences the writes before it,
// and waited for with that of cuStreamWaitValue32, the operations of all
// the links of a product batched in one call (peerbatch.go): the hosts
// only queue work, and never wait for each other. Equality tests keep the counters right when they wrap,
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
	// a counter: its pool's handle and its offset in the pool
	counterBytes = ipcHandleBytes + 8
	// an offer: UUID, halo memory handle, offset, length, counter
	offerBytes = uuidBytes + ipcHandleBytes + 8 + 8 + counterBytes
	// an answer: counter
	answerBytes = counterBytes
)

// poolCounters is the number of counters in one pool: 16 KiB, 4096 links'
// ends, more than a program makes unless it rebuilds its operators
// hundreds of times; then another pool is made.
const poolCounters = 4096

var errPeersOff = errors.New("gpu: peer copies are off (SetPeers)")

// SetPeers turns device-to-device halo exchanges with other processes on
// (the default) or off: with them off NewInbox fails and callers exchange
// through the host, which benchmarks compare against.
func (b *Backend) SetPeers(on bool) { b.peersOff = !on }

// counter is a 32-bit count in device memory that a peer writes or waits
// for: ours (a slot of one of our pools) or theirs (in a peer's pool that
// is mapped here).
type counter struct {
	ptr    uintptr
	mapped []byte // theirs: the handle of the pool, whose mapping it holds
}

// counterPool is an allocation of poolCounters counters, zeroed when made,
// and its IPC handle. Its slots are handed out once each and never reused:
// a peer may still write its last count into a counter after the link is
// freed here, as nothing makes the two processes free theirs together. The
// pools live until Close.
type counterPool struct {
	base   uintptr
	handle [ipcHandleBytes]byte
	used   int
}

// mapping is another process's allocation mapped here, and the number of
// counters and outboxes that use it.
type mapping struct {
	base uintptr
	refs int
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
	var err error
	in.released, err = b.openCounter(answer)
	return err
}

// Await makes the main stream wait for the writer's next Put: AwaitAll
// of this inbox alone.
func (in *inbox) Await() { in.b.AwaitAll([]backend.Inbox{in}) }

// Release writes the count of Awaits into the writer's counter:
// ReleaseAll of this inbox alone.
func (in *inbox) Release() { in.b.ReleaseAll([]backend.Inbox{in}) }

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
	handle   []byte  // the handle of that allocation
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
		out.handle = bytes.Clone(offer[uuidBytes:at])
		if out.base, err = b.openMemory(out.handle); err != nil {
			return nil, nil, err
		}
		out.dst.ptr = out.base + offset
	}
	if out.puts, err = b.openCounter(offer[at+16:]); err != nil {
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
// reader's counter: PutAll of this outbox alone.
func (out *outbox) Put(src backend.Vector, idx backend.Index) {
	out.b.PutAll(src, []backend.Outbox{out}, []backend.Index{idx})
}

// Free unmaps the inbox and releases both counters.
func (out *outbox) Free() {
	defer out.b.enter()()
	out.free()
}

func (out *outbox) free() {
	if out.base != 0 {
		out.b.closeMemory(out.handle, "")
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

// newCounter takes a counter from the newest pool, making a pool when
// there is none or it is full, and returns what exports it: the pool's
// handle and the counter's offset in it.
func (b *Backend) newCounter(c *counter) ([]byte, error) {
	if len(b.pools) == 0 || b.pools[len(b.pools)-1].used == poolCounters {
		if err := b.newPool(); err != nil {
			return nil, err
		}
	}
	p := &b.pools[len(b.pools)-1]
	*c = counter{ptr: p.base + uintptr(4*p.used)}
	h := binary.LittleEndian.AppendUint64(append([]byte(nil), p.handle[:]...), uint64(4*p.used))
	p.used++
	return h, nil
}

// newPool allocates a pool of zeroed counters, waits for the zeros to be
// written (a peer may write a counter as soon as it has the handle) and
// exports it.
func (b *Backend) newPool() error {
	p, err := b.alloc(4*poolCounters, "peer counters")
	if err != nil {
		return err
	}
	pool := counterPool{base: p}
	err = b.drv.MemsetD32Async(p, 0, poolCounters, b.stream, "peer counters")
	if err == nil {
		err = b.drv.StreamSynchronize(b.stream, "")
	}
	if err == nil {
		pool.handle, err = b.exportMemory(p)
	}
	if err != nil {
		b.free(p, "peer counters")
		return err
	}
	b.pools = append(b.pools, pool)
	return nil
}

// openCounter maps the pool of a peer's counter from what exports it
// (newCounter), once per pool, and returns the counter.
func (b *Backend) openCounter(export []byte) (counter, error) {
	if len(export) != counterBytes {
		return counter{}, fmt.Errorf("gpu: peer counter of %d bytes, want %d", len(export), counterBytes)
	}
	handle := bytes.Clone(export[:ipcHandleBytes])
	base, err := b.openMemory(handle)
	if err != nil {
		return counter{}, err
	}
	return counter{ptr: base + uintptr(binary.LittleEndian.Uint64(export[ipcHandleBytes:])), mapped: handle}, nil
}

// freeCounters lets go of their counters: the mappings of theirs, which
// close with the last counter or outbox that uses them; ours stay in their
// pool until Close.
func (b *Backend) freeCounters(cs ...*counter) {
	for _, c := range cs {
		if c.mapped != nil {
			b.closeMemory(c.mapped, "peer counter")
		}
		*c = counter{}
	}
}

// exportMemory returns the IPC handle of the allocation that starts at
// base.
func (b *Backend) exportMemory(base uintptr) ([ipcHandleBytes]byte, error) {
	return b.drv.IPCGetMemHandle(base)
}

// openMemory returns the base here of another process's allocation from
// its IPC handle: mapped by the first call for a handle, and the same
// mapping again, counted, by the calls after it until closeMemory has
// been called as many times.
func (b *Backend) openMemory(handle []byte) (uintptr, error) {
	key := string(handle)
	if m, ok := b.mapped[key]; ok {
		m.refs++
		return m.base, nil
	}
	base, err := b.drv.IPCOpenMemHandle(handle)
	if err != nil {
		return 0, err
	}
	if b.mapped == nil {
		b.mapped = make(map[string]*mapping)
	}
	b.mapped[key] = &mapping{base: base, refs: 1}
	return base, nil
}

// closeMemory drops one use of the mapping of handle, and unmaps it with
// the last; what names the mapping in an error.
func (b *Backend) closeMemory(handle []byte, what string) {
	key := string(handle)
	m, ok := b.mapped[key]
	if !ok {
		return
	}
	if m.refs--; m.refs == 0 {
		delete(b.mapped, key)
		b.fail(b.drv.IPCCloseMemHandle(m.base, what))
	}
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
