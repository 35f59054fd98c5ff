package gpu

import (
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
)

// The halo copies of a distributed SpMV run on the copy stream, beside the
// kernels of the main stream, so that the diagonal product hides them. The
// event fence orders one stream after the other where a call is made. An
// SpMV whose halo arrives in two pieces runs as
//
//	main: gather -f1-> diagonal SpMV ......... <-f2- off-diagonal 1 <-f3- off-diagonal 2
//	copy:        -f1-> stage to host [copied]  halo 1 to device -f2-> halo 2 to device -f3->
//
// cuStreamWaitEvent takes the work an event marks when it is called, and a
// later cuEventRecord does not change that, so fence is recorded afresh by
// each call and waited on at once. copied is recorded on the copy stream
// only, in order, so waiting for a later record of it also waits for the
// earlier ones. Two events thus serve any number of calls.

// PackHalo gathers src[idx] into stage on the main stream, then copies stage
// into host on the copy stream: the copy waits for the gather but not for
// the kernels queued after PackHalo. wait blocks until host holds the
// values; by then every UploadHalo queued before this PackHalo has also read
// its source. host should be pinned (Pin), else the copy is made before
// PackHalo returns. Kernels queued before wait returns must not write stage.
//
// PackHalo with nothing to pack (empty stage and idx) still marks the point
// that the next UploadHalo waits for: a rank that receives halos but sends
// none calls it too.
func (b *Backend) PackHalo(host []float64, stage, src backend.Vector, idx backend.Index) (wait func() error) {
	defer b.enter()()
	v := b.vector("PackHalo", stage)
	if v == nil || !b.sameLen("PackHalo", len(host), v.n) {
		return b.waitCopied
	}
	b.Gather(stage, src, idx)
	b.order(b.copyStream, b.stream)
	if b.err == nil && v.n > 0 {
		b.fail(b.drv.MemcpyDtoHAsync(unsafe.Pointer(&host[0]), v.ptr, 8*v.n, b.copyStream, "halo"))
	}
	if b.err == nil {
		b.fail(b.drv.EventRecord(b.copied, b.copyStream, ""))
	}
	b.packed = true
	return b.waitCopied
}

// waitCopied waits for the copy of the last PackHalo and returns the first
// error.
func (b *Backend) waitCopied() error {
	defer b.enter()()
	if b.err == nil {
		b.fail(b.drv.EventSynchronize(b.copied, "halo copy"))
	}
	return b.err
}

// UploadHalo copies src into dst on the copy stream, after the work queued
// before the last PackHalo (before any PackHalo, after all the work queued
// so far), and makes the kernels queued after it wait for the copy. src
// should be pinned for the copy to run beside the kernels; it must stay
// unchanged until the next synchronizing call or the wait of the next
// PackHalo.
func (b *Backend) UploadHalo(dst backend.Vector, src []float64) {
	defer b.enter()()
	v := b.vector("UploadHalo", dst)
	if v == nil || !b.sameLen("UploadHalo", v.n, len(src)) || v.n == 0 {
		return
	}
	if !b.packed {
		b.order(b.copyStream, b.stream)
	}
	if b.err == nil {
		b.fail(b.drv.MemcpyHtoDAsync(v.ptr, unsafe.Pointer(&src[0]), 8*v.n, b.copyStream, "halo"))
	}
	b.order(b.stream, b.copyStream)
}

// order makes the work queued from now on on stream later wait for the work
// queued so far on stream first.
func (b *Backend) order(later, first uintptr) {
	if b.err == nil {
		b.fail(b.drv.EventRecord(b.fence, first, ""))
	}
	if b.err == nil {
		b.fail(b.drv.StreamWaitEvent(later, b.fence, ""))
	}
}
