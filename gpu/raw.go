package gpu

import (
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/internal/cuda"
)

// Raw is a Backend at the level of device addresses, for a package that
// runs kernels of its own on the backend's GPU beside the backend's work:
// the CUDA FSAI set-up (package afsai/cudafsai), which keeps its results
// where the backend's products read them. It gives the backend's memory,
// copies and kernel launches on its stream, its error state and the
// kernels of its module. Its calls queue work as the backend's own do: the
// first failure is kept (Fail, Err) and every call after it does nothing.
// Free and the Backend's own methods enter themselves; the other calls
// need the backend's context current: the caller makes them between Enter
// and its unlock.
type Raw struct{ b *Backend }

// Raw returns the low-level access to b.
func (b *Backend) Raw() Raw { return Raw{b} }

// Backend is the backend r gives access to.
func (r Raw) Backend() *Backend { return r.b }

// Driver is the CUDA driver the backend calls.
func (r Raw) Driver() *cuda.Driver { return r.b.drv }

// Context is the backend's CUDA context, which Enter makes current.
func (r Raw) Context() uintptr { return r.b.ctx }

// Stream is the stream of the backend's work, in call order.
func (r Raw) Stream() uintptr { return r.b.stream }

// SMs is the GPU's number of multiprocessors.
func (r Raw) SMs() int { return r.b.sms }

// Enter locks the goroutine to its OS thread and makes the backend's
// context current there; the caller defers the returned unlock. Enters
// nest.
func (r Raw) Enter() (unlock func()) { return r.b.enter() }

// Err is the first error the backend has seen (Backend.Err).
func (r Raw) Err() error { return r.b.err }

// Fail records err if it is the first error.
func (r Raw) Fail(err error) { r.b.fail(err) }

// SyncStream waits for the work queued on the stream (not the halo
// copies) and returns the first error.
func (r Raw) SyncStream() error { return r.b.syncLocked() }

// Alloc allocates bytes of device memory (none for 0 bytes), giving the
// backend's spare memory back first where the device is full; what names
// the use in errors.
func (r Raw) Alloc(bytes int, what string) (uintptr, error) { return r.b.alloc(bytes, what) }

// Free releases device memory that Alloc returned, recording a failure.
func (r Raw) Free(p uintptr, what string) { r.b.free(p, what) }

// Retire takes the device memory at ptrs, a finished set-up's state, out
// of use: the backend keeps it as spare memory for its allocations to
// come, or frees it (Backend.KeepSpare).
func (r Raw) Retire(ptrs []uintptr) { r.b.retire(ptrs) }

// FreeMemory returns the device memory free now, the spare memory freed
// first.
func (r Raw) FreeMemory() (uint64, error) { return r.b.freeMemory() }

// Upload queues a copy of bytes from host memory at src to device memory
// at dst; src must stay unchanged until the next Sync.
func (r Raw) Upload(dst uintptr, src unsafe.Pointer, bytes int) { r.b.upload(dst, src, bytes) }

// Download queues a copy of bytes from device memory at src to host memory
// at dst; the caller syncs before reading dst and keeps it alive.
func (r Raw) Download(dst unsafe.Pointer, src uintptr, bytes int) { r.b.download(dst, src, bytes) }

// CopyDevice queues a copy of bytes from device memory at src to dst.
func (r Raw) CopyDevice(dst, src uintptr, bytes int) { r.b.copyDevice(dst, src, bytes) }

// Memset32 queues setting the n 4-byte words at p to v.
func (r Raw) Memset32(p uintptr, v uint32, n int) { r.b.memset32(p, v, n) }

// UploadValues queues a copy of vals to device memory at dst in precision
// p (rounded to float32 on the way for Single), as UploadSlice does.
func (r Raw) UploadValues(dst uintptr, vals []float64, p backend.Precision) {
	r.b.uploadValues(dst, vals, p)
}

// UploadSlice queues a copy of src to device memory at dst. An src smaller
// than a megabyte, or page-locked by Backend.Pin, goes to the driver as it
// is and must stay unchanged until the next Sync; a larger pageable one
// goes through the backend's staging buffer and may change as soon as
// UploadSlice returns.
func UploadSlice[T any](r Raw, dst uintptr, src []T) { uploadSlice(r.b, dst, src) }

// UploadFunc queues a copy to device memory at dst of n elements that fill
// writes: fill(buf, lo) sets buf to elements lo to lo+len(buf)-1, in the
// backend's staging buffer, on all cores over parts of each piece. Data
// computed on the way (indices translated) then needs no host array of
// its own. It returns when the last piece is queued; the copy is complete
// after the next synchronizing call.
func UploadFunc[T any](r Raw, dst uintptr, n int, fill func(buf []T, lo int)) {
	var zero T
	r.b.staging.upload(r.b, dst, n, int(unsafe.Sizeof(zero)), func(buf unsafe.Pointer, lo, hi int) {
		fill(unsafe.Slice((*T)(buf), hi-lo), lo)
	})
}

// DownloadSlice copies len(dst) elements from device memory at src into
// dst, after the work queued before, through the backend's staging buffer:
// dst need not be page-locked. It returns when dst holds them.
func DownloadSlice[T any](r Raw, dst []T, src uintptr) { downloadSlice(r.b, dst, src) }

// Host is the backend's page-locked host buffer of reduction results,
// which the device addresses directly: room for 8*reduceWidth bytes,
// which a caller may download a few words into and read after Sync.
func (r Raw) Host() unsafe.Pointer { return r.b.host }

// ScanTile is the int32s one tile of Scan covers.
const ScanTile = scanTile

// Scan queues the inclusive prefix sum of the n int32s at data, in place;
// sums has room for one int32 per ScanTile entries.
func (r Raw) Scan(data uintptr, n int, sums uintptr) { r.b.scan(data, n, sums) }

// GatherF32 queues dst[k] = src[idx[k]] for the n float32s of dst.
func (r Raw) GatherF32(n int, idx, src, dst uintptr) {
	r.b.launchGatherF32(r.b.blocks(r.b.elementBlocks(n)), int64(n), idx, src, dst)
}

// Lookup finds the kernels of s in the backend's module, which holds every
// kernel of package kernels.
func (r Raw) Lookup(s *KernelSet) ([]Kernel, error) { return s.lookup(r.b.drv, r.b.module, false) }

// Blocks is the Cfg of most kernels: grid blocks of 256 threads on the
// stream.
func (r Raw) Blocks(grid int) Cfg { return r.b.blocks(grid) }

// ElementBlocks is the grid of an element-wise kernel over n entries: one
// entry per thread up to 32 blocks per multiprocessor, grid-stride beyond.
func (r Raw) ElementBlocks(n int) int { return r.b.elementBlocks(n) }

// Grid is the Cfg of grid blocks of block threads with shared bytes of
// dynamic shared memory on the stream.
func (r Raw) Grid(grid, block, shared int) Cfg {
	return Cfg{grid: grid, block: block, shared: shared, stream: r.b.stream}
}

// Launch queues kernel k of ks on c with args, each in an 8-byte slot
// (Ptr, I32, I64, F64): the primitive of typed launch functions.
func (r Raw) Launch(ks []Kernel, k KernelID, c Cfg, args ...uint64) { r.b.launch(ks, k, c, args...) }

// LaunchParams queues kernel k of ks on c with cuLaunchKernel's
// kernelParams: one pointer per kernel parameter, to memory that must not
// move during the call.
func (r Raw) LaunchParams(ks []Kernel, k KernelID, c Cfg, params *uintptr) {
	b := r.b
	if b.err != nil || c.grid == 0 {
		return
	}
	b.fail(b.drv.Launch(ks[k].f, c.grid, c.block, c.shared, c.stream, params))
}

// MatrixArrays are the device arrays of a CSR block of n rows and nnz
// entries: n+1 int32 row pointers, nnz int32 columns and nnz values of
// its precision, and a row map of n int32s (0: none).
type MatrixArrays struct {
	RowPtr, Col, Val, RowMap uintptr
}

// Arrays returns m's device arrays.
func (m *Matrix) Arrays() MatrixArrays {
	return MatrixArrays{RowPtr: m.rowPtr, Col: m.col, Val: m.val, RowMap: m.rowMap}
}

// Of reports whether m is a block of the backend r gives access to.
func (r Raw) Of(m *Matrix) bool { return m.b == r.b }

// AdoptMatrix makes a block of the backend of rows x cols with nnz
// entries of precision p in the device arrays a, which Alloc made: the
// block owns them from now on, and its Free frees them.
func (r Raw) AdoptMatrix(rows, cols, nnz int, p backend.Precision, a MatrixArrays) *Matrix {
	return &Matrix{b: r.b, rows: rows, cols: cols, nnz: nnz, prec: p, rowPtr: a.RowPtr, col: a.Col, val: a.Val,
		rowMap: a.RowMap, width: spmvWidth(rows, nnz, p)}
}

// SetRowMap gives m, a block of the backend, the row map at p (m.Rows()
// int32s that Alloc made, or 0 for none), which m owns from now on: row k
// of m is row p[k] of the products' y.
func (r Raw) SetRowMap(m *Matrix, p uintptr) { m.rowMap = p }
