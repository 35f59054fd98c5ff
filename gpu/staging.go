package gpu

import (
	"errors"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/internal/cuda"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Large copies between pageable host memory (Go's) and the device go
// through a fixed page-locked staging buffer of the Backend, in two halves,
// one piece of the copy per half: while one half's piece is on the bus, the
// host copies the next piece into the other half (uploads) or the piece
// before out of it (downloads), on all cores. The driver's own copies of
// pageable memory go through small buffers of its own on one core at a few
// GB/s; these run several times faster (BenchmarkStaging, 1 GiB on an
// H200 machine of 16 cores: up at 26 GB/s against the driver's 6.6, down
// at 35 against 14). A half is written by the host only after the copy
// last queued from or into it is done, which its event tells.

// Sizes of the staging buffer and of the pieces of a copy.
const (
	// stageHalf is the bytes of a half, 16 MiB: pieces large enough that
	// the driver calls and waits between them cost little, small enough
	// that the buffer is a small part of any process that needs it.
	stageHalf = 16 << 20
	// stagePieces is the fewest pieces a copy is cut into, where the
	// smallest piece allows, so that a smaller copy too overlaps the
	// host's part with the bus's.
	stagePieces = 8
	// minStaged is the smallest piece, and the smallest upload that is
	// staged: below it the driver's own path costs little.
	minStaged = 1 << 20
	// pageSize is the host's page: pieces are whole pages.
	pageSize = 4096
)

// staging is a Backend's staging buffer: 2*stageHalf bytes of page-locked
// memory (cuMemAllocHost) and an event per half, made on first use and
// freed by release. It also knows the host memory that Pin has page-locked,
// whose uploads need no staging.
type staging struct {
	mem    unsafe.Pointer
	done   [2]uintptr          // done[h] is recorded after the copy queued last from or into half h
	pinned map[uintptr]uintptr // first byte -> end of each range Pin has locked
}

// prepare makes the buffer and its events on first use and reports whether
// they are ready (false once an error is recorded).
func (s *staging) prepare(b *Backend) bool {
	d := b.drv
	var err error
	for h := range s.done {
		if s.done[h] == 0 && b.err == nil {
			s.done[h], err = d.EventCreate(cuda.EventDisableTiming, "staging")
			b.fail(err)
		}
	}
	if s.mem == nil && b.err == nil {
		s.mem, err = d.MemAllocHost(2*stageHalf, "staging")
		b.fail(err)
	}
	return b.err == nil
}

// release frees the buffer and the events; the streams must be idle.
func (s *staging) release(d *cuda.Driver) error {
	var errs []error
	for _, e := range s.done {
		if e != 0 {
			errs = append(errs, d.EventDestroy(e, "staging"))
		}
	}
	if s.mem != nil {
		errs = append(errs, d.MemFreeHost(s.mem, "staging"))
	}
	*s = staging{}
	return errors.Join(errs...)
}

// half returns the first byte of half h.
func (s *staging) half(h int) unsafe.Pointer { return unsafe.Add(s.mem, h*stageHalf) }

// wait blocks until the copy queued last from or into half h is done.
func (s *staging) wait(b *Backend, h int) {
	if b.err == nil {
		b.fail(b.drv.EventSynchronize(s.done[h], "staging"))
	}
}

// record marks the end of the copy just queued from or into half h.
func (s *staging) record(b *Backend, h int) {
	if b.err == nil {
		b.fail(b.drv.EventRecord(s.done[h], b.stream, "staging"))
	}
}

// pieceLen is the number of elements of size bytes per piece of a copy of
// n: an stagePieces-th of the copy rounded up to whole pages, but at least
// minStaged bytes (all of a smaller copy) and at most a half.
func pieceLen(n, size int) int {
	bytes := min(stageHalf, max(minStaged, ceilDiv(ceilDiv(n*size, stagePieces), pageSize)*pageSize))
	return max(1, min(n, bytes/size))
}

// upload queues a copy of n elements of size bytes to device memory at dst,
// piece by piece through the halves in turn. put(buf, lo, hi) writes
// elements lo..hi-1 of the source to buf in the staging memory; it is
// called on all cores over parts of each piece. A half is refilled once the
// copy from it is done, so the filling of one half overlaps the copy from
// the other. upload returns when the last piece is queued: the source is
// no longer read then, but the device's copy is complete only after the
// next synchronizing call. Waiting for a half waits for all work queued
// before its copy, as the driver's own pageable copies do.
func (s *staging) upload(b *Backend, dst uintptr, n, size int, put func(buf unsafe.Pointer, lo, hi int)) {
	if n == 0 || !s.prepare(b) {
		return
	}
	per := pieceLen(n, size)
	for k := 0; k*per < n; k++ {
		lo, hi, h := k*per, min((k+1)*per, n), k%2
		s.wait(b, h)
		if b.err != nil {
			return
		}
		buf := s.half(h)
		parallel.For(hi-lo, func(_, a, z int) { put(unsafe.Add(buf, a*size), lo+a, lo+z) })
		b.upload(dst+uintptr(lo*size), buf, (hi-lo)*size)
		s.record(b, h)
	}
}

// download copies n elements of size bytes from device memory at src,
// after the work queued before, piece by piece through the halves in turn:
// while one half fills over the bus, take(buf, lo, hi) copies elements
// lo..hi-1 of the piece before out of buf in the other half, on all cores
// over parts of the piece (which also spreads the first touches of fresh
// destination pages over them; the driver's own copy into pageable memory
// takes them one by one on one core). It returns when all is copied out.
func (s *staging) download(b *Backend, src uintptr, n, size int, take func(buf unsafe.Pointer, lo, hi int)) {
	if n == 0 || !s.prepare(b) {
		return
	}
	per := pieceLen(n, size)
	pieces := ceilDiv(n, per)
	// out waits for piece k in its half and hands it to take.
	out := func(k int) {
		s.wait(b, k%2)
		if b.err != nil {
			return
		}
		lo, hi, buf := k*per, min((k+1)*per, n), s.half(k%2)
		parallel.For(hi-lo, func(_, a, z int) { take(unsafe.Add(buf, a*size), lo+a, lo+z) })
	}
	for k := range pieces {
		lo, hi := k*per, min((k+1)*per, n)
		b.download(s.half(k%2), src+uintptr(lo*size), (hi-lo)*size)
		s.record(b, k%2)
		if k > 0 {
			out(k - 1)
		}
	}
	out(pieces - 1)
}

// pin notes that Pin has page-locked bytes from p on.
func (s *staging) pin(p unsafe.Pointer, bytes int) {
	if s.pinned == nil {
		s.pinned = make(map[uintptr]uintptr)
	}
	s.pinned[uintptr(p)] = uintptr(p) + uintptr(bytes)
}

// unpin forgets the range pinned from p on.
func (s *staging) unpin(p unsafe.Pointer) { delete(s.pinned, uintptr(p)) }

// isPinned reports whether the bytes from p on lie in a range that Pin has
// page-locked.
func (s *staging) isPinned(p unsafe.Pointer, bytes int) bool {
	lo, hi := uintptr(p), uintptr(p)+uintptr(bytes)
	for first, end := range s.pinned {
		if first <= lo && hi <= end {
			return true
		}
	}
	return false
}

// uploadSlice queues a copy of src to device memory at dst. An src smaller
// than minStaged bytes, or page-locked by Pin, goes to the driver as it is
// and must stay unchanged until the next synchronizing call; a larger
// pageable one goes through the staging buffer and may change as soon as
// uploadSlice returns.
func uploadSlice[T any](b *Backend, dst uintptr, src []T) {
	if len(src) == 0 {
		return
	}
	size := int(unsafe.Sizeof(src[0]))
	p := unsafe.Pointer(&src[0])
	if size*len(src) < minStaged || b.staging.isPinned(p, size*len(src)) {
		b.upload(dst, p, size*len(src))
		return
	}
	b.staging.upload(b, dst, len(src), size, func(buf unsafe.Pointer, lo, hi int) {
		copy(unsafe.Slice((*T)(buf), hi-lo), src[lo:hi])
	})
}

// downloadSlice copies len(dst) elements from device memory at src into
// dst, after the work queued before, through the staging buffer: dst need
// not be page-locked. It returns when dst holds them.
func downloadSlice[T any](b *Backend, dst []T, src uintptr) {
	var zero T
	b.staging.download(b, src, len(dst), int(unsafe.Sizeof(zero)), func(buf unsafe.Pointer, lo, hi int) {
		copy(dst[lo:hi], unsafe.Slice((*T)(buf), hi-lo))
	})
}
