package gpu

import (
	"runtime"
	"sync"
	"unsafe"
)

// hostOutput is the host memory that receives G's columns and values,
// sized for the longest rows and made ready in the background while the GPU
// computes: its pages are touched on all cores (first touches are slow,
// above all in a virtual machine, and the driver would otherwise take them
// one by one inside the download), then page-locked, so that the download
// runs at the bus's speed. If page-locking fails the download still works,
// through the driver's staging buffers.
type hostOutput struct {
	cols  []int32
	vals  []float32
	wg    sync.WaitGroup
	b     *Backend
	bytes [2][]byte // cols and vals as bytes
	held  [2]bool   // registered with the driver
}

// pageSize is the granularity of first-touch faults; outputs below
// minHostOutput bytes are left as they are.
const (
	pageSize      = 4096
	minHostOutput = 1 << 20
)

// newHostOutput allocates n columns and values and starts making them ready.
func (b *Backend) newHostOutput(n int) *hostOutput {
	o := &hostOutput{cols: make([]int32, n), vals: make([]float32, n), b: b}
	if 4*n < minHostOutput {
		return o
	}
	o.bytes[0] = unsafe.Slice((*byte)(unsafe.Pointer(&o.cols[0])), 4*n)
	o.bytes[1] = unsafe.Slice((*byte)(unsafe.Pointer(&o.vals[0])), 4*n)
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		touch(o.bytes[:])
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		d := b.drv
		if d.call(d.ctxSetCurrent, b.ctx) != cuSuccess {
			return
		}
		for k, m := range o.bytes {
			o.held[k] = d.call(d.memHostRegister, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), 0) == cuSuccess
		}
	}()
	return o
}

// wait blocks until the memory is ready; call it before the first download.
func (o *hostOutput) wait() { o.wg.Wait() }

// release unlocks the pages; the slices stay valid.
func (o *hostOutput) release() {
	o.wait()
	for k, m := range o.bytes {
		if o.held[k] {
			o.b.fail(o.b.drv.check(o.b.drv.call(o.b.drv.memHostUnregister, uintptr(unsafe.Pointer(&m[0]))),
				"cuMemHostUnregister"))
			o.held[k] = false
		}
	}
}

// touch writes a zero into every page of the buffers, which are fresh
// zeroed memory, with one goroutine per processor.
func touch(bufs [][]byte) {
	var pages []*byte
	for _, m := range bufs {
		for off := 0; off < len(m); off += pageSize {
			pages = append(pages, &m[off])
		}
	}
	workers := runtime.GOMAXPROCS(0)
	per := (len(pages) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w < len(pages); w += per {
		wg.Go(func() {
			for _, p := range pages[w:min(w+per, len(pages))] {
				*p = 0
			}
		})
	}
	wg.Wait()
}
