package cudafsai

import (
	"runtime"
	"sync"
	"unsafe"
)

// hostWords is host memory of 4-byte words that a set-up copies to and from
// the device (G's columns and values, a batch's row lengths, A's values),
// handed out as int32 and float32 slices. It is made ready in the
// background while the GPU computes: its pages are touched on all cores
// (first touches are slow, above all in a virtual machine, and the driver
// would otherwise take them one by one inside a copy), then page-locked, so
// that copies run at the bus's speed. If page-locking fails the copies still
// work, through the driver's staging buffers. No word may be written before
// wait returns.
type hostWords struct {
	words []uint32
	next  int // words handed out
	wg    sync.WaitGroup
	b     *Device
	held  bool // registered with the driver
}

// pageSize is the granularity of first-touch faults; memory below
// minHostOutput bytes is left as it is.
const (
	pageSize      = 4096
	minHostOutput = 1 << 20
)

// newHostWords allocates n words and starts making them ready.
func (b *Device) newHostWords(n int) *hostWords {
	h := &hostWords{words: make([]uint32, n), b: b}
	if 4*n < minHostOutput {
		return h
	}
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&h.words[0])), 4*n)
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		touch(mem)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if b.Driver().CtxSetCurrent(b.Context()) != nil {
			return
		}
		h.held = b.Driver().MemHostRegister(unsafe.Pointer(&mem[0]), len(mem)) == nil
	}()
	return h
}

// take hands out the next n words.
func (h *hostWords) take(n int) unsafe.Pointer {
	w := h.words[h.next : h.next+n]
	h.next += n
	return unsafe.Pointer(unsafe.SliceData(w))
}

// int32s hands out the next n words as int32s.
func (h *hostWords) int32s(n int) []int32 { return unsafe.Slice((*int32)(h.take(n)), n) }

// float32s hands out the next n words as float32s.
func (h *hostWords) float32s(n int) []float32 { return unsafe.Slice((*float32)(h.take(n)), n) }

// wait blocks until the memory is ready; call it before the first write.
func (h *hostWords) wait() { h.wg.Wait() }

// release unlocks the pages; the slices stay valid.
func (h *hostWords) release() {
	h.wait()
	if h.held {
		h.b.Fail(h.b.Driver().MemHostUnregister(unsafe.Pointer(&h.words[0])))
		h.held = false
	}
}

// touch writes a zero into every page of mem, which is fresh zeroed memory,
// with one goroutine per processor.
func touch(mem []byte) {
	pages := (len(mem) + pageSize - 1) / pageSize
	workers := runtime.GOMAXPROCS(0)
	per := (pages + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w < pages; w += per {
		wg.Go(func() {
			for p := w; p < min(w+per, pages); p++ {
				mem[p*pageSize] = 0
			}
		})
	}
	wg.Wait()
}
