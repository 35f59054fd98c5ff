package gpu

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
)

// The links of one product are queued together (backend.PeerBatches):
// the counter operations of all its links in one cuStreamBatchMemOp per
// kind and stream, the gathers of all its outboxes in one launch of
// gather_halos. A product on a rank with two neighbours, both links
// device to device, then queues
//
//	main: BeginPuts (record), diagonal SpMM, ..., EndPuts (record, wait), [puts?] x2, off-diagonal SpMM, [released] x2
//	copy:                         (wait) [released?] x2, gather_halos, [puts] x2
//
// where each bracketed group is one batch: 3 launches, 4 batches and 4
// event calls, against 4 launches, 8 batches of one operation and 4 event
// calls through the calls link by link (Put, Await, Release).

var _ backend.PeerBatches = (*Backend)(nil)

// gatherDests is the most outboxes one gather_halos fills (FSAI_GATHERS
// in kernels/halo_gather.cu).
const gatherDests = 8

// fsaiGathers mirrors struct FsaiGathers of kernels/halo_gather.cu: the
// destinations of one gather_halos, passed by value (Open compares the
// layouts: passedStructs). end[j] counts the entries of destinations 0..j;
// the slots past the last repeat the total.
type fsaiGathers struct {
	idx [gatherDests]uintptr
	dst [gatherDests]uintptr
	end [gatherDests]int64
}

// PutAll is Put of every outbox of out, outbox j gathering src[idx[j]]:
// on the copy stream, after the work queued before the last BeginPuts,
// one batch of waits for the readers' last Releases, one gather_halos per
// eight outboxes, and one batch of the writes of the new counts of Puts.
func (b *Backend) PutAll(src backend.Vector, out []backend.Outbox, idx []backend.Index) {
	defer b.enter()()
	s := b.vector("PutAll", src)
	if s == nil {
		return
	}
	if len(out) != len(idx) {
		b.fail(fmt.Errorf("gpu: PutAll: %d outboxes, %d indices", len(out), len(idx)))
		return
	}
	ops := b.memOps[:0]
	for j := range out {
		o := b.outbox(out[j], idx[j])
		if o == nil {
			return
		}
		ops = append(ops, cuda.WaitOp(o.released.ptr, o.n))
	}
	if b.putsWait && b.err == nil {
		b.fail(b.drv.StreamWaitEvent(b.copyStream, b.putsFrom, "puts"))
		b.putsWait = false
	}
	b.queueOps(b.copyStream, ops)
	for first := 0; first < len(out); first += gatherDests {
		last := min(first+gatherDests, len(out))
		b.gatherHalos(s, out[first:last], idx[first:last])
	}
	ops = ops[:0]
	for _, x := range out {
		o := x.(*outbox)
		o.n++
		ops = append(ops, cuda.WriteOp(o.puts.ptr, o.n))
	}
	b.queueOps(b.copyStream, ops)
	b.memOps = ops
}

// outbox returns o as an outbox of this backend whose inbox idx fills,
// or records why not and returns nil.
func (b *Backend) outbox(o backend.Outbox, idx backend.Index) *outbox {
	out := ours[*outbox](b, "PutAll", "an outbox", o)
	if out == nil {
		return nil
	}
	x := ours[*Index](b, "PutAll", "an index", idx)
	if x == nil || !b.sameLen("PutAll", out.dst.n, x.n) {
		return nil
	}
	return out
}

// gatherHalos launches one gather_halos on the copy stream for at most
// gatherDests outboxes, checked by outbox.
func (b *Backend) gatherHalos(src *Vector, out []backend.Outbox, idx []backend.Index) {
	var g fsaiGathers
	var n int64
	for j := range g.end {
		if j < len(out) {
			x := idx[j].(*Index)
			g.idx[j], g.dst[j] = x.ptr, out[j].(*outbox).dst.ptr
			n += int64(x.n)
		}
		g.end[j] = n
	}
	c := b.blocks(b.elementBlocks(int(n)))
	c.stream = b.copyStream
	b.launchGatherHalos(c, g, n, src.ptr)
}

// AwaitAll is Await of every inbox of in: the main stream waits, in one
// batch, for each writer's next Put.
func (b *Backend) AwaitAll(in []backend.Inbox) {
	b.inboxOps("AwaitAll", in, func(i *inbox) cuda.MemOp {
		i.n++
		return cuda.WaitOp(i.puts.ptr, i.n)
	})
}

// ReleaseAll is Release of every inbox of in: the main stream writes, in
// one batch, each inbox's count of Awaits into its writer's counter.
func (b *Backend) ReleaseAll(in []backend.Inbox) {
	b.inboxOps("ReleaseAll", in, func(i *inbox) cuda.MemOp { return cuda.WriteOp(i.released.ptr, i.n) })
}

// inboxOps queues on the main stream, in one batch, the operation that op
// makes of each inbox of in; name names the caller in errors.
func (b *Backend) inboxOps(name string, in []backend.Inbox, op func(*inbox) cuda.MemOp) {
	defer b.enter()()
	ops := b.memOps[:0]
	for _, x := range in {
		i := ours[*inbox](b, name, "an inbox", x)
		if i == nil {
			return
		}
		ops = append(ops, op(i))
	}
	b.queueOps(b.stream, ops)
	b.memOps = ops
}

func (in *inbox) backendOf() *Backend   { return in.b }
func (out *outbox) backendOf() *Backend { return out.b }

// queueOps queues the counter operations ops on stream, in one driver
// call where the driver has cuStreamBatchMemOp.
func (b *Backend) queueOps(stream uintptr, ops []cuda.MemOp) {
	if b.err == nil && len(ops) > 0 {
		b.fail(b.drv.StreamBatch(stream, ops, "peer counters"))
	}
}
