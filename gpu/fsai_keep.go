package gpu

import (
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/afsai"
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// G kept on the device (afsai.Device's AdaptiveFactor). PCG applies G and
// G' on the device, so the set-up leaves them there: fsai_assemble writes
// G's diagonal block straight into a Matrix of its exact size, Transpose
// builds G' from it, and only the entries in other ranks' columns, a thin
// band near the stripe's first rows, come to the host, where the halo plans
// of G and G' are made. Bringing all of G to the host, transposing it there
// and uploading both moved about 1.2 GB and cost 0.3 s on diffusion:200.

// keptRows are a set-up's rows of G when the job keeps them: the diagonal
// block on the device, the entries left of it on the host.
type keptRows struct {
	left *csr.Matrix[float32]
	diag *Matrix
}

// free releases the diagonal block; a nil k holds nothing.
func (k *keptRows) free() {
	if k != nil {
		k.diag.Free()
	}
}

// AdaptiveFactor computes the adaptive FSAI rows of the local system a's
// rows own and after, as AdaptiveSetup does, and leaves G's diagonal block
// and its transpose on the device in float32 (afsai.Device). When the rows
// need several batches (device memory), G comes to the host batch by batch
// as in AdaptiveSetup and its diagonal block is uploaded. It refuses what
// AdaptiveSetup refuses.
func (b *Backend) AdaptiveFactor(a *csr.Matrix[float32], own int, p afsai.Params) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, error) {
	return b.adaptiveFactor(a, own, p, 0)
}

// adaptiveFactor is AdaptiveFactor with at most maxBatch rows per batch (0:
// as many as memory allows), so that tests can take the path of several.
func (b *Backend) adaptiveFactor(a *csr.Matrix[float32], own int, p afsai.Params, maxBatch int) (afsai.DeviceFactor, afsai.Stats, afsai.KernelTimes, error) {
	if own < 0 || own > a.Rows {
		return afsai.DeviceFactor{}, afsai.Stats{}, afsai.KernelTimes{},
			fmt.Errorf("gpu: adaptive FSAI: own rows from %d of a local system of %d", own, a.Rows)
	}
	rows := make([]int, a.Rows-own)
	for k := range rows {
		rows[k] = own + k
	}
	res, err := b.adaptiveSetup(a, rows, p, fsaiJob{keep: true, own: own, maxBatch: maxBatch})
	if err != nil {
		return afsai.DeviceFactor{}, res.st, res.kt, err
	}
	kept := res.kept
	if kept == nil {
		if kept, err = b.splitRows(res.g, own); err != nil {
			return afsai.DeviceFactor{}, res.st, res.kt, err
		}
	}
	t := time.Now()
	diagT, err := b.Transpose(kept.diag)
	if err == nil {
		err = b.Sync()
	}
	res.kt.Transpose = time.Since(t).Seconds()
	if err != nil {
		if diagT != nil {
			diagT.Free()
		}
		kept.free()
		return afsai.DeviceFactor{}, res.st, res.kt, err
	}
	return afsai.DeviceFactor{Left: kept.left, Diag: kept.diag, DiagT: diagT}, res.st, res.kt, nil
}

// assembleKept assembles the nb rows of G, all rows of the set-up, on the
// device: the diagonal block into a Matrix of its exact size, the entries
// left of it into arrays that come to the host.
func (r *fsaiRun) assembleKept(nb int) error {
	b, fn, l, tm, kt := r.b, r.fn, r.l, &r.tm, &r.kt
	own := r.job.own
	l.rows(&fn.countLeft, nb, uint64(own), uint64(r.leftDev))
	b.download(unsafe.Pointer(&r.leftLen[0]), r.leftDev, 4*nb)
	if b.syncLocked() != nil {
		return b.err
	}
	r.ptr[0], r.leftPtr[0] = 0, 0
	for k, n := range r.leftLen[:nb] {
		r.leftPtr[k+1] = r.leftPtr[k] + n
		r.ptr[k+1] = r.ptr[k] + r.lens[k] + 1 - n
	}
	nnz, nLeft := int(r.ptr[nb]), int(r.leftPtr[nb])
	d := &Matrix{b: b, rows: nb, cols: nb, nnz: nnz, prec: backend.Single, width: spmvWidth(nb, nnz, backend.Single)}
	var err error
	if d.rowPtr, err = b.alloc(4*(nb+1), "G row pointers"); err == nil {
		if d.col, err = b.alloc(4*nnz, "G columns"); err == nil {
			d.val, err = b.alloc(4*nnz, "G values")
		}
	}
	leftPtr := r.bufs.alloc(4*(nb+1), "G's left row pointers")
	leftCol := r.bufs.alloc(4*nLeft, "G's left columns")
	leftVal := r.bufs.alloc(4*nLeft, "G's left values")
	if err == nil {
		err = r.bufs.err
	}
	if err != nil {
		d.Free()
		return err
	}
	b.upload(d.rowPtr, unsafe.Pointer(&r.ptr[0]), 4*(nb+1))
	b.upload(leftPtr, unsafe.Pointer(&r.leftPtr[0]), 4*(nb+1))
	l.rows(&fn.assemble, nb, uint64(own), uint64(d.rowPtr), uint64(d.col), uint64(d.val),
		uint64(leftPtr), uint64(leftCol), uint64(leftVal))
	tm.mark(&kt.Assemble)
	left := &csr.Matrix[float32]{Rows: nb, Cols: r.g.Cols, RowPtr: slices.Clone(r.leftPtr[:nb+1]),
		ColIdx: make([]int32, nLeft), Val: make([]float32, nLeft)}
	downloadSlice(b, left.ColIdx, leftCol)
	downloadSlice(b, left.Val, leftVal)
	if b.syncLocked() != nil {
		d.Free()
		return b.err
	}
	tm.mark(&kt.Download)
	r.kept = &keptRows{left: left, diag: d}
	return tm.collect()
}

// splitRows is afsai.SplitRows with the diagonal block uploaded: what
// assembleKept leaves, for a set-up of several batches, which brings G to
// the host.
func (b *Backend) splitRows(g *csr.Matrix[float32], own int) (*keptRows, error) {
	left, diag := afsai.SplitRows(g, own)
	d, err := b.NewMatrix(diag, nil, backend.Single)
	if err != nil {
		return nil, err
	}
	return &keptRows{left: left, diag: d.(*Matrix)}, nil
}
