// Package gpu implements backend.Backend with CUDA on one NVIDIA GPU.
//
// The CUDA driver (libcuda.so.1) and the run-time compiler NVRTC are bound
// when the program runs (package internal/cuda, through purego): building
// needs neither CUDA nor cgo, and a binary built without a GPU runs on a
// GPU machine. The kernels (package kernels) are compiled by NVRTC for the
// GPU found, once per process, and cached on disk under
// os.UserCacheDir()/fsai-dist. Each kernel is launched through one typed
// Go function that mirrors its C signature (launch.go), and Open checks on
// the GPU that the structs passed by value are laid out as their Go
// mirrors (layout.go). Raw gives a package with kernels of its own (the CUDA
// FSAI set-up, afsai/cudafsai) the backend's memory, stream and module;
// this package knows no algorithm.
//
// All work goes to one stream, in call order, except the copies of a
// distributed SpMV's halos (PackHalo, UploadHalo), which run on a second
// stream beside the kernels (halo.go). Kernels report no errors
// themselves: the first failure is kept and returned by Err, Sync, Download
// and Close (the reductions return NaN once it is set), and calls after it
// do nothing.
//
// Threads: a CUDA context is current per OS thread, and Go moves goroutines
// between threads. Every method therefore locks its goroutine to its thread
// for the duration of the call and makes the backend's context current
// (cuCtxSetCurrent; both together about 0.2 us on an H200 machine), so a
// Backend can be used from any goroutine, one at a time, and the caller
// needs no runtime.LockOSThread. A kernel launch costs about 4.5 us of host
// time there, and a reduction's round trip (a dot product) about 13 us.
package gpu

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/internal/cuda"
)

// reduceWidth is the most sums one reduction kernel computes: r'r and r'z
// of colChunk columns (UpdateRZCols).
const reduceWidth = 2 * colChunk

// blockSize is the thread-block size of every kernel (FSAI_BLOCK in
// kernels/common.cuh).
const blockSize = 256

// Backend is one GPU: its primary context, a stream for the work and one
// for halo copies, the loaded kernels and the scratch memory of reductions.
type Backend struct {
	drv           *cuda.Driver
	index         int
	name          string
	cc            int // compute capability times ten
	sms           int
	totalMem      uint64
	driverVersion int32
	target        cuda.Target

	ctx, stream, module uintptr
	fn                  []Kernel // backendKernels, looked up in module

	// Halo copies (halo.go): the copy stream, an event that orders one
	// stream after the other, and one that marks the end of the last
	// PackHalo's copy. packed is set by the first PackHalo.
	copyStream, fence, copied uintptr
	packed                    bool
	peersOff                  bool // SetPeers(false): no device-to-device halos (peer.go)
	// putsFrom marks where the Puts after BeginPuts start; putsWait says
	// the copy stream has yet to wait for it (peer.go)
	putsFrom uintptr
	putsWait bool
	// pools hold our peer counters, kept until Close (counterPool);
	// mapped are other processes' allocations mapped here, by handle
	pools  []counterPool
	mapped map[string]*mapping

	// Reductions: reduceWidth partial sums per block and a block counter on the
	// device; the kernel writes the result straight into page-locked host
	// memory (host), which saves a copy command per reduction.
	maxReduceBlocks   int
	partials, counter uintptr
	host              unsafe.Pointer
	start, stop       uintptr   // events of Time, made on first use
	marks             []uintptr // events of Mark free for reuse
	staging           staging   // large copies from and to pageable host memory (staging.go)
	args              *launchArgs
	gathers           *gathersArgs // the parameters of gather_halos (peerbatch.go)
	memOps            []cuda.MemOp // the counter operations of a batch, reused (peerbatch.go)
	pinner            runtime.Pinner
	// spare is device memory out of use, kept for the allocations to come
	// while keepSpare is set (retire)
	spare     []uintptr
	keepSpare bool
	// layouts are the answers of Raw.CheckLayout, by struct and mirror
	layouts map[layoutKey]error
	// mem counts the device memory of alloc and free (PeakBytes)
	mem    usage
	err    error
	closed bool
}

var errClosed = errors.New("gpu: backend is closed")

// Open starts using device deviceIndex (0 <= deviceIndex < Available()):
// retains its primary context, creates a stream, compiles or loads the
// kernels. Programs pass the index DeviceFor gives for their node-local rank.
func Open(deviceIndex int) (*Backend, error) {
	drv, err := cuda.Load()
	if err != nil {
		return nil, err
	}
	count, err := Available()
	if err != nil {
		return nil, err
	}
	if deviceIndex < 0 || deviceIndex >= count {
		return nil, fmt.Errorf("gpu: device %d requested, %d visible", deviceIndex, count)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b := &Backend{drv: drv, index: deviceIndex, args: new(launchArgs), keepSpare: true}
	if err := b.open(); err != nil {
		b.release()
		return nil, err
	}
	return b, nil
}

func (b *Backend) open() error {
	d := b.drv
	dev, err := d.Device(b.index)
	if err != nil {
		return err
	}
	if err := b.deviceInfo(dev); err != nil {
		return err
	}
	if b.ctx, err = d.PrimaryCtxRetain(dev); err != nil {
		return err
	}
	if err := d.CtxSetCurrent(b.ctx); err != nil {
		return err
	}
	// The copy stream has the highest priority: its small kernels (the
	// gathers of device-to-device halos) then take SMs as they free up
	// instead of waiting behind every block of the diagonal product.
	least, greatest, err := d.StreamPriorityRange()
	if err != nil {
		return err
	}
	for _, s := range []struct {
		h        *uintptr
		priority int32
	}{{&b.stream, least}, {&b.copyStream, greatest}} {
		if *s.h, err = d.StreamCreate(cuda.StreamNonBlocking, s.priority); err != nil {
			return err
		}
	}
	for _, e := range []*uintptr{&b.fence, &b.copied, &b.putsFrom} {
		if *e, err = d.EventCreate(cuda.EventDisableTiming, ""); err != nil {
			return err
		}
	}
	if err := b.loadModule(); err != nil {
		return err
	}

	b.maxReduceBlocks = 8 * b.sms
	scratch, err := b.alloc(8*(reduceWidth*b.maxReduceBlocks+1), "reduction scratch")
	if err != nil {
		return err
	}
	b.partials = scratch
	b.counter = scratch + uintptr(8*reduceWidth*b.maxReduceBlocks)
	if err := d.MemsetD32Async(b.counter, 0, 1, b.stream, ""); err != nil {
		return err
	}
	if b.host, err = d.MemAllocHost(8*reduceWidth, "reduction results"); err != nil {
		return err
	}

	b.pinner.Pin(b.args)
	for i := range b.args.ptrs {
		b.args.ptrs[i] = uintptr(unsafe.Pointer(&b.args.vals[i]))
	}
	b.gathers = newGathersArgs(&b.pinner)
	if err := b.checkLayouts(); err != nil {
		return fmt.Errorf("gpu: %w", err)
	}
	return d.StreamSynchronize(b.stream, "")
}

// release frees what open acquired, in reverse order, and returns the first
// error. The calling goroutine must be locked to its thread.
func (b *Backend) release() error {
	d := b.drv
	var errs []error
	// apply calls release on handle h, if h was made.
	apply := func(h uintptr, release func(uintptr) error) {
		if h != 0 {
			errs = append(errs, release(h))
		}
	}
	apply(b.ctx, d.CtxSetCurrent)
	sync := func(s uintptr) error { return d.StreamSynchronize(s, "") }
	apply(b.copyStream, sync)
	apply(b.stream, sync)
	for _, e := range append([]uintptr{b.start, b.stop, b.fence, b.copied, b.putsFrom}, b.marks...) {
		apply(e, func(e uintptr) error { return d.EventDestroy(e, "") })
	}
	b.marks = nil
	errs = append(errs, b.staging.release(d))
	for _, p := range b.pools {
		apply(p.base, func(p uintptr) error { return d.MemFree(p, "peer counters") })
	}
	b.pools = nil
	if b.host != nil {
		errs = append(errs, d.MemFreeHost(b.host, "reduction results"))
	}
	apply(b.partials, func(p uintptr) error { return d.MemFree(p, "reduction scratch") })
	apply(b.module, d.ModuleUnload)
	apply(b.copyStream, d.StreamDestroy)
	apply(b.stream, d.StreamDestroy)
	if b.ctx != 0 {
		if dev, err := d.Device(b.index); err == nil {
			errs = append(errs, d.PrimaryCtxRelease(dev))
		}
	}
	b.pinner.Unpin()
	b.start, b.stop, b.host, b.partials, b.module, b.stream, b.ctx = 0, 0, nil, 0, 0, 0, 0
	b.copyStream, b.fence, b.copied, b.putsFrom = 0, 0, 0, 0
	return errors.Join(errs...)
}

// Close waits for queued work and releases the device. It returns the first
// error seen, by the work or by the release. Vectors and matrices must be
// freed before.
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.releaseSpare()
	b.fail(b.release())
	b.closed = true
	err := b.err
	b.err = errClosed
	return err
}

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// Device describes the GPU, e.g. "NVIDIA H100 80GB HBM3 (GPU 0, compute
// 9.0, 132 SMs, 79.2 GiB; driver CUDA 13.0; kernels sm_90 by NVRTC 13.0)".
func (b *Backend) Device() string {
	nv := "?"
	if n, err := cuda.LoadNVRTC(); err == nil {
		nv = n.Version()
	}
	return fmt.Sprintf("%s (GPU %d, compute %d.%d, %d SMs, %.1f GiB; driver CUDA %d.%d; kernels %s by NVRTC %s)",
		b.name, b.index, b.cc/10, b.cc%10, b.sms, cuda.GiB(b.totalMem),
		b.driverVersion/1000, b.driverVersion%1000/10, b.target, nv)
}

// enter locks the goroutine to its OS thread and makes the context current
// there; the caller defers the returned unlock. A failure is recorded.
func (b *Backend) enter() (unlock func()) {
	runtime.LockOSThread()
	if b.ctx != 0 {
		b.fail(b.drv.CtxSetCurrent(b.ctx))
	}
	return runtime.UnlockOSThread
}

// fail records err if it is the first error.
func (b *Backend) fail(err error) {
	if b.err == nil && err != nil {
		b.err = err
	}
}

// Err returns the first error seen so far without waiting.
func (b *Backend) Err() error { return b.err }

// Sync waits for all queued work, halo copies included, and returns the
// first error.
func (b *Backend) Sync() error {
	defer b.enter()()
	if b.err == nil {
		b.fail(b.drv.StreamSynchronize(b.copyStream, "copy stream"))
	}
	return b.syncLocked()
}

// Time runs f, which queues work on b, and returns the device time that work
// took, measured with CUDA events around it.
func (b *Backend) Time(f func()) (time.Duration, error) {
	defer b.enter()() // f's calls lock the thread again: locks nest
	d := b.drv
	for _, e := range []*uintptr{&b.start, &b.stop} {
		if *e == 0 && b.err == nil {
			var err error
			*e, err = d.EventCreate(0, "")
			b.fail(err)
		}
	}
	if b.err == nil {
		b.fail(d.EventRecord(b.start, b.stream, ""))
	}
	f()
	var ms float32
	if b.err == nil {
		b.fail(d.EventRecord(b.stop, b.stream, ""))
	}
	if b.err == nil {
		b.fail(d.EventSynchronize(b.stop, ""))
	}
	if b.err == nil {
		var err error
		ms, err = d.EventElapsed(b.start, b.stop)
		b.fail(err)
	}
	if b.err != nil {
		return 0, b.err
	}
	return time.Duration(float64(ms) * 1e6), nil
}

// reduced waits for the reduction kernel just queued, which wrote its sums
// into the page-locked host memory (b.host, which the device addresses
// directly: unified addressing), and returns the first two; NaNs on an
// error.
func (b *Backend) reduced() [2]float64 {
	if b.syncLocked() != nil {
		return [2]float64{math.NaN(), math.NaN()}
	}
	return *(*[2]float64)(b.host)
}

// reduceGrid is the grid of a one-vector reduction kernel k over n
// entries: one wave (wave).
func (b *Backend) reduceGrid(k KernelID, n int) Cfg {
	return b.blocks(b.wave(k, ceilDiv(n, blockSize)))
}

// wave is the grid of a grid-stride kernel k that has work for want
// blocks: at most the blocks that are resident at once, one wave (the
// scratch of two-sum reductions has room for far more).
func (b *Backend) wave(k KernelID, want int) int {
	return min(want, b.fn[k].resident*b.sms)
}

// elementBlocks is the grid of element-wise kernels over n entries: one
// entry per thread up to 32 blocks per multiprocessor, grid-stride beyond.
func (b *Backend) elementBlocks(n int) int {
	return min(ceilDiv(n, blockSize), 32*b.sms)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
