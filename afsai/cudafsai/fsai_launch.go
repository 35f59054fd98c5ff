package cudafsai

import (
	"github.com/fsai-dist/fsai-dist/gpu"
	"runtime"
	"unsafe"
)

// fsaiLauncher launches the set-up kernels that take the FsaiSetup struct
// by value (fsai_kernels.go): its setup first, then up to nine 8-byte
// arguments. Its parameter array is pinned for the life of the set-up.
type fsaiLauncher struct {
	b      *Device
	fn     fsaiKernels
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

func newFSAILauncher(b *Device, fn fsaiKernels, setup fsaiSetup) *fsaiLauncher {
	l := &fsaiLauncher{b: b, fn: fn, params: &fsaiParams{setup: setup}}
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

// launch queues k on c with the setup and args.
func (l *fsaiLauncher) launch(k gpu.KernelID, c gpu.Cfg, args ...uint64) {
	copy(l.params.vals[:], args)
	l.queue(k, c, &l.params.ptrs[0])
}

// queue queues k on c with the kernel parameters that params points at.
func (l *fsaiLauncher) queue(k gpu.KernelID, c gpu.Cfg, params *uintptr) {
	l.b.LaunchParams(l.fn, k, c, params)
}

// levels queues k, which takes the setups of two levels and the map up
// from the rows of the lower to those of the upper.
func (l *fsaiLauncher) levels(k gpu.KernelID, c gpu.Cfg, upper, lower fsaiSetup, up uintptr) {
	p := l.params
	p.upper, p.lower, p.up = upper, lower, uint64(up)
	l.queue(k, c, &p.pair[0])
}

// perRow is the cfg of a kernel with one thread per row of n (grid-stride
// beyond 32 blocks per multiprocessor).
func (l *fsaiLauncher) perRow(n int) gpu.Cfg { return l.b.Blocks(l.b.ElementBlocks(n)) }

// perWarp is the cfg of a kernel with one warp per row of n (grid-stride
// beyond 32 blocks per multiprocessor).
func (l *fsaiLauncher) perWarp(n int) gpu.Cfg { return l.b.Blocks(l.b.ElementBlocks(32 * n)) }

// stageTimer attributes device time to stages with CUDA events recorded in
// the stream between them: start begins a round, mark(s) charges the time
// since the previous event to *s, collect ends the round. Events are reused
// from round to round.
type stageTimer struct {
	b      *Device
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
	if b.Err() != nil {
		return
	}
	if t.used == len(t.events) {
		e, err := b.Driver().EventCreate(0, "")
		if b.Fail(err); b.Err() != nil {
			return
		}
		t.events = append(t.events, e)
	}
	b.Fail(b.Driver().EventRecord(t.events[t.used], b.Stream(), ""))
	if t.used > 0 {
		t.stages = append(t.stages, stage)
	}
	t.used++
}

// collect waits for the last event, adds the intervals to their stages and
// starts a new round.
func (t *stageTimer) collect() error {
	b := t.b
	if t.used > 0 && b.Err() == nil {
		b.Fail(b.Driver().EventSynchronize(t.events[t.used-1], ""))
	}
	for k, s := range t.stages {
		if b.Err() != nil {
			break
		}
		ms, err := b.Driver().EventElapsed(t.events[k], t.events[k+1])
		b.Fail(err)
		*s += float64(ms) / 1e3
	}
	t.stages, t.used = t.stages[:0], 0
	return b.Err()
}

// free destroys the events.
func (t *stageTimer) free() {
	for _, e := range t.events {
		t.b.Fail(t.b.Driver().EventDestroy(e, ""))
	}
	t.events = nil
}
