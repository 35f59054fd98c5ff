package gpu

import (
	"runtime"
	"unsafe"
)

// fsaiKernelNames are the kernels of the adaptive FSAI set-up
// (kernels/kapgrad.cu, sysgather.cu, cholesky.cu, fsai_assemble.cu,
// fsai_join.cu, fsai_compact.cu, fsai_rows.cu, fsai_interior.cu) and of the
// static one (fsai_pattern.cu, fsai_filter.cu).
var fsaiKernelNames = [...]string{"fsai_init", "fsai_kapgrad8", "fsai_kapgrad32", "fsai_sysgather", "fsai_border", "fsai_solve",
	"fsai_border_warp", "fsai_solve_warp", "fsai_compact", "fsai_restore", "fsai_assemble", "fsai_kept_counts",
	"fsai_assemble_padded", "fsai_join_d", "fsai_join_s", "fsai_touches", "fsai_rows_count", "fsai_rows_copy",
	"fsai_seed", "fsai_hops", "fsai_interior_flags", "fsai_interior_split", "fsai_static_pattern8", "fsai_static_pattern32", "fsai_static_filter", "fsai_sysgather_sorted"}

// fsaiKernels are those kernels in the loaded module.
type fsaiKernels struct {
	init, sysgather, border, solve, assemble, keptCounts, assemblePadded kernel
	// kapgrad[0] and [1] are the gradient with 8 and 32 lanes per row
	kapgrad [2]kernel
	// borderWarp and solveWarp are border and solve with a warp per row
	// (patterns of at most warpRowPattern entries)
	borderWarp, solveWarp kernel
	// compact and restore move rows between levels (fsai_level.go)
	compact, restore kernel
	// join[p] joins a local system whose diagonal block holds values of precision p
	join [2]kernel
	// touches, rowsCount and rowsCopy check and join rows computed in
	// parts (fsai_rows.go)
	touches, rowsCount, rowsCopy kernel
	// seed, hops, interiorFlags and interiorSplit find the interior rows
	// (fsai_interior.go)
	seed, hops, interiorFlags, interiorSplit kernel
	// staticPattern[0] and [1] are static FSAI's pattern with 8 and 32
	// lanes per row, staticFilter its post-filter and sysgatherSorted its
	// gather (fsai_static.go)
	staticPattern                 [2]kernel
	staticFilter, sysgatherSorted kernel
}

// fsaiKernels looks the set-up kernels up in the backend's module. They are
// part of the module that Open loaded, but not of the table of kernels that
// the solver launches, and a set-up runs once: looking them up per set-up
// costs microseconds.
func (b *Backend) fsaiKernels() (*fsaiKernels, error) {
	f := new(fsaiKernels)
	for i, k := range []*kernel{&f.init, &f.kapgrad[0], &f.kapgrad[1], &f.sysgather, &f.border, &f.solve, &f.borderWarp, &f.solveWarp,
		&f.compact, &f.restore, &f.assemble, &f.keptCounts, &f.assemblePadded, &f.join[0], &f.join[1],
		&f.touches, &f.rowsCount, &f.rowsCopy, &f.seed, &f.hops, &f.interiorFlags, &f.interiorSplit, &f.staticPattern[0], &f.staticPattern[1], &f.staticFilter, &f.sysgatherSorted} {
		k.name = fsaiKernelNames[i]
		var err error
		if k.f, err = b.drv.Function(b.module, k.name); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// fsaiLauncher launches the set-up kernels: each takes the FsaiSetup struct
// by value and up to nine 8-byte arguments. Unlike Backend.launch it sets
// the block size and the dynamic shared memory. Its parameter array is
// pinned for the life of the set-up.
type fsaiLauncher struct {
	b      *Backend
	params *fsaiParams
	pinner runtime.Pinner
}

// fsaiParams is cuLaunchKernel's kernelParams: ptrs[0] points at setup,
// ptrs[1+i] at vals[i]; for the kernels between two levels, pair points at
// upper, lower and up.
type fsaiParams struct {
	setup        fsaiSetup
	vals         [9]uint64
	ptrs         [10]uintptr
	upper, lower fsaiSetup
	up           uint64
	pair         [3]uintptr
}

func newFSAILauncher(b *Backend, setup fsaiSetup) *fsaiLauncher {
	l := &fsaiLauncher{b: b, params: &fsaiParams{setup: setup}}
	l.pinner.Pin(l.params)
	p := l.params
	p.ptrs[0] = uintptr(unsafe.Pointer(&p.setup))
	for i := range p.vals {
		p.ptrs[1+i] = uintptr(unsafe.Pointer(&p.vals[i]))
	}
	p.pair = [3]uintptr{uintptr(unsafe.Pointer(&p.upper)), uintptr(unsafe.Pointer(&p.lower)), uintptr(unsafe.Pointer(&p.up))}
	return l
}

func (l *fsaiLauncher) close() { l.pinner.Unpin() }

// launch queues k on grid blocks of block threads with shared bytes of
// dynamic shared memory.
func (l *fsaiLauncher) launch(k *kernel, grid, block, shared int, args ...uint64) {
	copy(l.params.vals[:], args)
	l.queue(k, grid, block, shared, &l.params.ptrs[0])
}

// queue queues k with the kernel parameters that params points at.
func (l *fsaiLauncher) queue(k *kernel, grid, block, shared int, params *uintptr) {
	b := l.b
	if b.err != nil || grid == 0 {
		return
	}
	b.fail(b.drv.Launch(k.f, grid, block, shared, b.stream, params))
}

// levels launches k, which takes the setups of two levels and the map up
// from the rows of the lower to those of the upper, with one thread per row
// of the lower level.
func (l *fsaiLauncher) levels(k *kernel, upper, lower fsaiSetup, up uintptr) {
	p := l.params
	p.upper, p.lower, p.up = upper, lower, uint64(up)
	l.queue(k, l.b.elementBlocks(int(lower.nb)), blockSize, 0, &p.pair[0])
}

// rows launches k with one thread per batch row (grid-stride beyond 32
// blocks per multiprocessor).
func (l *fsaiLauncher) rows(k *kernel, nb int, args ...uint64) {
	l.launch(k, l.b.elementBlocks(nb), blockSize, 0, args...)
}

// warps launches k with one warp per row of n (grid-stride beyond 32
// blocks per multiprocessor).
func (l *fsaiLauncher) warps(k *kernel, n int, args ...uint64) {
	l.launch(k, l.b.elementBlocks(32*n), blockSize, 0, args...)
}

// stageTimer attributes device time to stages with CUDA events recorded in
// the stream between them: start begins a round, mark(s) charges the time
// since the previous event to *s, collect ends the round. Events are reused
// from round to round.
type stageTimer struct {
	b      *Backend
	events []uintptr
	stages []*float64 // stages[k] ends at events[k+1]
	used   int
}

// start records the first event of a round, unless the round has begun.
func (t *stageTimer) start() {
	if t.used == 0 {
		t.record(nil)
	}
}

// mark records an event and charges the interval that it closes to stage.
func (t *stageTimer) mark(stage *float64) {
	if t.used > 0 {
		t.record(stage)
	}
}

// record records the next event; stage is charged with the interval before
// it, except for the first.
func (t *stageTimer) record(stage *float64) {
	b := t.b
	if b.err != nil {
		return
	}
	if t.used == len(t.events) {
		e, err := b.drv.EventCreate(0, "")
		if b.fail(err); b.err != nil {
			return
		}
		t.events = append(t.events, e)
	}
	b.fail(b.drv.EventRecord(t.events[t.used], b.stream, ""))
	if t.used > 0 {
		t.stages = append(t.stages, stage)
	}
	t.used++
}

// collect waits for the last event, adds the intervals to their stages and
// starts a new round.
func (t *stageTimer) collect() error {
	b := t.b
	if t.used > 0 && b.err == nil {
		b.fail(b.drv.EventSynchronize(t.events[t.used-1], ""))
	}
	for k, s := range t.stages {
		if b.err != nil {
			break
		}
		ms, err := b.drv.EventElapsed(t.events[k], t.events[k+1])
		b.fail(err)
		*s += float64(ms) / 1e3
	}
	t.stages, t.used = t.stages[:0], 0
	return b.err
}

// free destroys the events.
func (t *stageTimer) free() {
	for _, e := range t.events {
		t.b.fail(t.b.drv.EventDestroy(e, ""))
	}
	t.events = nil
}

// download queues a copy of bytes from device memory at src to host memory
// at dst; the caller synchronizes before reading dst and keeps it alive.
func (b *Backend) download(dst unsafe.Pointer, src uintptr, bytes int) {
	if b.err == nil && bytes > 0 {
		b.fail(b.drv.MemcpyDtoHAsync(dst, src, bytes, b.stream, ""))
	}
}

// copyDevice queues a copy of bytes from device memory at src to dst.
func (b *Backend) copyDevice(dst, src uintptr, bytes int) {
	if b.err == nil && bytes > 0 {
		b.fail(b.drv.MemcpyDtoDAsync(dst, src, bytes, b.stream))
	}
}

// freeMemory returns the device memory free now, the spare memory freed
// first (retire); the context must be current.
func (b *Backend) freeMemory() (uint64, error) {
	b.releaseSpare()
	free, _, err := b.drv.MemGetInfo()
	return free, err
}
