// Package cudaspai solves the least-squares problems of the SPAI set-up
// (package spai) on a GPU: spai.Device on the CUDA backend of package gpu.
// The host gathers the problems of a batch of rows (spai.NewBlocks: the
// patterns, the dense blocks A(J,I)' and e_i(I)); the GPU factors every
// block by Householder QR and back-substitutes, one thread block per
// problem (kernels/spai_qr.cu), with the host's operations in the host's
// order and no fused multiply-add, so the rows are those spai.Rows
// computes. Batches are sized to the device's free memory, and halved
// until they fit.
//
// Package spai never asks which backend it runs on: the composition root
// hands it New(be) as spai.Config.Device for a CUDA backend be.
package cudaspai

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/spai"
)

// Device solves the SPAI problems on the GPU of one CUDA backend; like the
// backend, it is used from one goroutine at a time.
type Device struct {
	gpu.Raw
	// Batches is how many batches the last Rows took.
	Batches int
	// batchBytes, when positive, bounds a batch below hostBatch (tests).
	batchBytes int64
}

// New returns the SPAI row computation on the GPU of be.
func New(be *gpu.Backend) *Device { return &Device{Raw: be.Raw()} }

var _ spai.Device = (*Device)(nil)

// Name is the backend's name, "cuda".
func (d *Device) Name() string { return d.Backend().Name() }

// maxCols is the most columns of a block the kernel takes: its shared
// memory holds two doubles a column.
const maxCols = 2048

// hostBatch bounds the bytes of one batch's blocks on the host.
const hostBatch = 1 << 30

// Rows computes the rank's rows of M (spai.Device): batches of rows whose
// blocks fit half the device's free memory (and hostBatch), gathered on
// the host and solved on the GPU. A block of more than maxCols columns
// declines the whole set-up (spai.ErrDeviceUnsupported), and the host
// computes it.
func (d *Device) Rows(l *spai.Local, p spai.Params) (*dsmat.Rows, spai.Stats, error) {
	defer d.Enter()()
	ks, err := d.Lookup(&spaiKernelSet)
	if err != nil {
		return nil, spai.Stats{}, err
	}
	free, err := d.FreeMemory()
	if err != nil {
		return nil, spai.Stats{}, err
	}
	budget := min(int64(free/2), hostBatch)
	if d.batchBytes > 0 {
		budget = min(budget, d.batchBytes)
	}
	n := l.Own.Count()
	m := &dsmat.Rows{N: l.Own.N, First: l.Own.First, RowPtr: make([]int64, 1, n+1)}
	var st spai.Stats
	d.Batches = 0
	size, err := batchRows(l, p, n, budget)
	if err != nil {
		return nil, spai.Stats{}, err
	}
	for lo := 0; lo < n; {
		hi := min(n, lo+size)
		b, err := spai.NewBlocks(l, p, lo, hi)
		if err != nil {
			return nil, spai.Stats{}, err
		}
		if b.Stats.MaxBlockCols > maxCols {
			return nil, spai.Stats{}, spai.ErrDeviceUnsupported
		}
		if bytes(b) > budget && hi-lo > 1 {
			size = (hi - lo) / 2 // the paper-004 scheme: halve until it fits
			continue
		}
		bad, err := d.solve(ks, b)
		if err == nil {
			err = b.AppendRows(m, bad)
		}
		if err != nil {
			return nil, spai.Stats{}, err
		}
		st = st.Max(b.Stats)
		d.Batches++
		lo = hi
	}
	st.Batches = d.Batches
	return m, st, nil
}

// probeRows is how many rows batchRows gathers to size the batches.
const probeRows = 1 << 13

// batchRows is the number of rows of a batch whose blocks should take
// about budget bytes, from the mean size of the first probeRows rows'
// blocks (a batch larger than the budget is halved as it is gathered).
// Sizing first spares gathering all n rows' blocks, and then half of them
// and so on, only to find they do not fit.
func batchRows(l *spai.Local, p spai.Params, n int, budget int64) (int, error) {
	probe, err := spai.NewBlocks(l, p, 0, min(n, probeRows))
	if err != nil {
		return 0, err
	}
	per := probe.BytesPerRow()
	if per == 0 {
		return max(n, 1), nil
	}
	return max(1, min(n, int(0.8*float64(budget)/per))), nil
}

// bytes is the device memory a batch takes.
func bytes(b *spai.Blocks) int64 {
	return 8*int64(len(b.C)+len(b.B)) + 8*2*int64(b.Len()+1) + 4*3*int64(b.Len())
}

// solve uploads the batch, solves every problem on the GPU and downloads
// the solutions into b.B; bad[k] marks a rank deficient block.
func (d *Device) solve(ks []gpu.Kernel, b *spai.Blocks) ([]bool, error) {
	np := b.Len()
	var a arrays
	defer a.free(d)
	if err := a.alloc(d, b); err != nil {
		return nil, fmt.Errorf("spai: %d least-squares blocks on the GPU: %w", np, err)
	}
	gpu.UploadSlice(d.Raw, a.coff, b.COff)
	gpu.UploadSlice(d.Raw, a.boff, b.BOff)
	gpu.UploadSlice(d.Raw, a.rows, b.Rows)
	gpu.UploadSlice(d.Raw, a.cols, b.Cols)
	gpu.UploadSlice(d.Raw, a.c, b.C)
	gpu.UploadSlice(d.Raw, a.b, b.B)
	maxn := b.Stats.MaxBlockCols
	c := d.Grid(min(np, 32*d.SMs()), threads(maxn), 8*(2*maxn+1))
	launchQR(d.Raw, ks, c, int32(np), a.coff, a.boff, a.rows, a.cols, a.c, a.b, a.bad)
	flags := make([]int32, np)
	gpu.DownloadSlice(d.Raw, b.B, a.b)
	gpu.DownloadSlice(d.Raw, flags, a.bad)
	if err := d.SyncStream(); err != nil {
		return nil, err
	}
	bad := make([]bool, np)
	for k, f := range flags {
		bad[k] = f != 0
	}
	return bad, nil
}

// threads is the block size of a problem of n columns: the kernel's
// threads update one column each, so the power of two above n (the
// right-hand side is one more), from a warp to 256.
func threads(n int) int {
	t := 32
	for t < n+1 && t < 256 {
		t *= 2
	}
	return t
}

// arrays are a batch's device arrays.
type arrays struct {
	coff, boff, rows, cols, c, b, bad uintptr
}

// alloc allocates the arrays of b, stopping at the first failure.
func (a *arrays) alloc(d *Device, b *spai.Blocks) error {
	np := b.Len()
	var err error
	for _, x := range []struct {
		p     *uintptr
		bytes int
		what  string
	}{{&a.coff, 8 * (np + 1), "block offsets"}, {&a.boff, 8 * (np + 1), "right-hand side offsets"},
		{&a.rows, 4 * np, "block rows"}, {&a.cols, 4 * np, "block columns"}, {&a.c, 8 * len(b.C), "blocks"},
		{&a.b, 8 * len(b.B), "right-hand sides"}, {&a.bad, 4 * np, "rank flags"}} {
		if *x.p, err = d.Alloc(x.bytes, x.what); err != nil {
			return err
		}
	}
	return nil
}

// free releases the arrays alloc made.
func (a *arrays) free(d *Device) {
	for _, p := range []uintptr{a.coff, a.boff, a.rows, a.cols, a.c, a.b, a.bad} {
		if p != 0 {
			d.Free(p, "SPAI batch")
		}
	}
}
