package gpu

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
)

// Block kernels (several right-hand sides) on row-major blocks: entry (i, c)
// of an n x k block at element i*k+c (kernels/block.cu and spmm.cu). One
// launch covers at most colChunk columns; wider blocks go chunk by chunk,
// each launch given the block's row stride and pointers to its first column.
// With k = 1 every method runs its one-column kernel (spmv, spmvDot, dot,
// axpby, mul, updateRZ, updateXP), tuned for one vector.

// colChunk is FSAI_COLS of kernels/block.cu: the most columns of one launch,
// whose per-column scalars travel by value in a kernel parameter.
const colChunk = 64

// SpMM computes Y = A*X + beta*Y (beta 0 or 1) for blocks of k columns. A
// group of threads owns a row: WC column lanes of C columns each for the
// chunk's kc columns, times P parts that split the row's entries
// (spmmShape).
func (b *Backend) SpMM(y backend.Vector, a backend.Matrix, x backend.Vector, k int, beta float64) {
	b.spmm(y, a, x, k, beta, nil, nil, 0)
}

// spmm is SpMM, or SpMMDot adding to s when w is not nil, with perLane
// columns per lane (1 or 2; raised where the chunk needs more than 32
// lanes), or spmmShape's choice when it is 0. The products with dots stride
// over the rows with one wave of blocks, which the deterministic grid-wide
// sums have room for.
func (b *Backend) spmm(y backend.Vector, a backend.Matrix, x backend.Vector, k int, beta float64, w backend.Vector, s backend.Sum, perLane int) {
	defer b.enter()()
	call := "SpMM"
	if w != nil {
		call = "SpMMDot"
	}
	yv, xv := b.vector(call, y), b.vector(call, x)
	if yv == nil || xv == nil {
		return
	}
	m, ok := a.(*Matrix)
	switch {
	case !ok || m == nil || m.b != b:
		b.fail(fmt.Errorf("gpu: %s: %T is not a matrix of this backend", call, a))
		return
	case k < 1:
		b.fail(fmt.Errorf("gpu: %s: %d columns", call, k))
		return
	case beta != 0 && beta != 1:
		b.fail(fmt.Errorf("gpu: %s: beta %g is neither 0 nor 1", call, beta))
		return
	case xv.n != m.cols*k || yv.n%k != 0 || (m.rowMap == 0 && yv.n != m.rows*k):
		b.fail(fmt.Errorf("gpu: %s: %dx%d matrix, %d columns, x of %d, y of %d", call, m.rows, m.cols, k, xv.n, yv.n))
		return
	}
	var wv *Vector
	var sum *Sum
	if w != nil {
		if wv, sum = b.vector(call, w), b.sum(call, s, k); wv == nil || sum == nil {
			return
		}
		if wv.n != yv.n {
			b.fail(fmt.Errorf("gpu: %s: w of %d for y of %d", call, wv.n, yv.n))
			return
		}
	}
	switch {
	case k == 1 && w != nil:
		b.queueSpMVDot(m, xv, yv, beta, wv, sum, 0)
		return
	case k == 1:
		b.queueSpMV(m, xv, yv, beta, 0)
		return
	}
	for c0 := 0; c0 < k; c0 += colChunk {
		kc := min(colChunk, k-c0)
		ci, logWC, logP := spmmShape(kc, m.width, perLane)
		off := uintptr(8 * c0)
		blocks := ceilDiv(m.rows<<(logWC+logP), blockSize)
		if w == nil {
			b.launchSpMM(b.blocks(blocks), m.prec, ci, int32(m.rows), m.rowPtr, m.col, m.val, xv.ptr+off, yv.ptr+off,
				int32(k), int32(kc), int32(logWC), int32(logP), int32(beta), m.rowMap)
			continue
		}
		c := b.blocks(b.wave(kSpmmDot[m.prec][ci], min(blocks, b.maxReduceBlocks)))
		b.launchSpMMDot(c, m.prec, ci, int32(m.rows), m.rowPtr, m.col, m.val, xv.ptr+off, yv.ptr+off,
			int32(k), int32(kc), int32(logWC), int32(logP), int32(beta), m.rowMap,
			wv.ptr+off, b.partials, b.counter, uintptr(sum.p)+off)
	}
}

// spmmPerLane are the columns per lane of the SpMM kernels, in the order
// of the second index of kSpmm and kSpmmDot.
var spmmPerLane = [...]int{1, 2}

// spmmShape returns, for a chunk of kc columns and a matrix whose SpMV runs
// width threads per row, the kernel's index in spmmPerLane (C columns per
// lane: perLane, or the rule's when 0, raised until 32 lanes suffice), log2
// of WC (the power of two at or above kc/C) and log2 of P (spmmParts).
func spmmShape(kc, width, perLane int) (ci, logWC, logP int) {
	if perLane == 0 {
		perLane = spmmLanesRule(kc, width)
	}
	for ci = 0; spmmPerLane[ci] < perLane || spmmPerLane[ci]*32 < kc; ci++ {
	}
	c := spmmPerLane[ci]
	logWC = bits.Len(uint((kc+c-1)/c - 1))
	return ci, logWC, spmmParts(width, logWC)
}

// spmmParts returns log2 of P, the parts that split a row's entries in
// SpMM with 2^logWC column lanes, for a matrix whose SpMV runs width threads
// per row: a group of about twice that width, at least the column lanes and
// at most the warp. Measured on an H100 with the 7- and 27-point Laplacians
// of 2.1M rows in both precisions (BenchmarkSpMM), this P was the fastest
// or within 2% of it for 2 to 16 columns; a group of the SpMV width times
// the column lanes was up to 1.4 times slower.
func spmmParts(width, logWC int) int {
	return max(0, min(bits.TrailingZeros(uint(width))+1-logWC, 5-logWC))
}

// spmmLanesRule is the columns per lane SpMM uses: two from 4 columns on,
// and from 2 for rows of more than one thread's share. Measured on an H200
// (BenchmarkSpMM, the 7- and 27-point Laplacians of 2.1M rows, both
// precisions, 2 to 32 columns): two columns per lane were the fastest or
// within 2% of it there, 1.36 to 1.69 times one from 8 columns on; one
// was faster only on the 7-point matrix at 2 columns (by 9% in double);
// four were never the fastest, and are not built.
func spmmLanesRule(kc, width int) int {
	if kc >= 4 || (kc >= 2 && width > 1) {
		return 2
	}
	return 1
}

// DotCols sets out[c] to the dot product of columns c of x and y, summed in
// an order fixed by the sizes and the GPU, so the same inputs give the same
// bits on every run. NaNs once an error is recorded.
func (b *Backend) DotCols(x, y backend.Vector, out []float64) {
	defer b.enter()()
	k := len(out)
	vs := b.block("DotCols", k, x, y)
	switch {
	case vs == nil:
		fillNaN(out)
	case k == 1:
		out[0] = b.dot(vs[0], vs[1])
	default:
		rows := vs[0].n / k
		b.reduceCols(kDotCols, rows, k, [][]float64{out}, func(c Cfg, c0, kc int) {
			b.launchDotCols(c, int64(rows), int32(k), int32(kc), vs[0].at(c0), vs[1].at(c0), b.partials, b.counter, uintptr(b.host))
		})
	}
}

// DotMany sets out[c] to the dot product of w with the c-th vector of w's
// length in v, one launch per manyFused vectors (kernels/gramschmidt.cu:
// a thread per entry, each vector read once), summed in an order fixed by
// the sizes and the GPU. NaNs once an error is recorded.
func (b *Backend) DotMany(v, w backend.Vector, out []float64) {
	defer b.enter()()
	k := len(out)
	vv, wv := b.vector("DotMany", v), b.vector("DotMany", w)
	switch {
	case vv == nil || wv == nil:
		fillNaN(out)
	case vv.n < k*wv.n:
		b.fail(fmt.Errorf("gpu: DotMany: %d vectors of %d entries in %d", k, wv.n, vv.n))
		fillNaN(out)
	default:
		sums := make([]float64, manyFused+1)
		for c0 := 0; c0 < k; c0 += manyFused {
			kc := min(manyFused, k-c0)
			b.many(vv.at(c0*wv.n), wv, nil, sums[:kc+1])
			copy(out[c0:], sums[:kc])
		}
		if b.err != nil {
			fillNaN(out)
		}
	}
}

// AxpyMany computes w += sum_c a[c]*v_c over the c-th vectors of w's
// length in v, one launch per colChunk vectors (each reads and writes w
// once), a thread per entry adding its terms in the order of c.
func (b *Backend) AxpyMany(w, v backend.Vector, a []float64) {
	defer b.enter()()
	k := len(a)
	wv, vv := b.vector("AxpyMany", w), b.vector("AxpyMany", v)
	switch {
	case wv == nil || vv == nil:
		// the error is recorded
	case vv.n < k*wv.n:
		b.fail(fmt.Errorf("gpu: AxpyMany: %d vectors of %d entries in %d", k, wv.n, vv.n))
	default:
		n := wv.n
		for c0 := 0; c0 < k; c0 += colChunk {
			kc := min(colChunk, k-c0)
			b.launchAxpyMany(b.blocks(b.colBlocks(n, 1, 32*b.sms)), a[c0:c0+kc], int64(n), int32(kc), vv.at(c0*n), wv.at(0))
		}
	}
}

// manySizes are the most vectors of the kernels of
// kernels/gramschmidt.cu, in the order of kMany; manyFused the largest.
var manySizes = [...]int{8, 32}

const manyFused = 32

// many runs fsai_many of kernels/gramschmidt.cu on the len(out)-1 vectors
// of w's length from the device address v: with a (update), w += sum_c
// a[c]*v_c first; then out[c] = v_c'w and out[len(out)-1] = w'w. It waits
// for the sums; NaNs once an error is recorded.
func (b *Backend) many(v uintptr, w *Vector, a, out []float64) {
	kc, n := len(out)-1, w.n
	if n == 0 {
		clear(out)
		return
	}
	i := 0
	for manySizes[i] < kc {
		i++
	}
	update := int32(0)
	if a != nil {
		update = 1
	}
	b.launchMany(b.reduceGrid(kMany[i], n), i, a, int64(n), int32(kc), update, v, w.ptr, b.partials, b.counter, uintptr(b.host))
	if b.syncLocked() != nil {
		fillNaN(out)
		return
	}
	copy(out, unsafe.Slice((*float64)(b.host), kc+1))
}

// AxpyDotMany is AxpyMany, then out[c] = v_c'w and out[len(a)] = w'w with
// the updated w, in one launch that reads each vector once (many), for up
// to manyFused vectors. With more, the vectors before the last manyFused
// are added first (AxpyMany) and their dots taken after (DotMany): those
// are read twice. NaNs once an error is recorded.
func (b *Backend) AxpyDotMany(w, v backend.Vector, a, out []float64) {
	defer b.enter()()
	k := len(a)
	wv, vv := b.vector("AxpyDotMany", w), b.vector("AxpyDotMany", v)
	switch {
	case wv == nil || vv == nil:
		fillNaN(out)
	case len(out) != k+1:
		b.fail(fmt.Errorf("gpu: AxpyDotMany: %d sums for %d vectors", len(out), k))
		fillNaN(out)
	case vv.n < k*wv.n:
		b.fail(fmt.Errorf("gpu: AxpyDotMany: %d vectors of %d entries in %d", k, wv.n, vv.n))
		fillNaN(out)
	default:
		first := max(0, k-manyFused) // the vectors read twice
		if first > 0 {
			b.AxpyMany(w, v, a[:first])
		}
		b.many(vv.at(first*wv.n), wv, a[first:], out[first:])
		if first > 0 {
			b.DotMany(v, w, out[:first])
		}
		if b.err != nil {
			fillNaN(out)
		}
	}
}

// DotPairCols sets xy[c] = x[:,c]'y[:,c] and xz[c] = x[:,c]'z[:,c] in one
// reduction (also for one column: one round trip instead of two).
func (b *Backend) DotPairCols(x, y, z backend.Vector, xy, xz []float64) {
	defer b.enter()()
	k := len(xy)
	vs := b.block("DotPairCols", k, x, y, z)
	switch {
	case vs == nil:
		fillNaN(xy)
		fillNaN(xz)
	case len(xz) != k:
		b.fail(fmt.Errorf("gpu: DotPairCols: %d and %d sums", k, len(xz)))
		fillNaN(xy)
		fillNaN(xz)
	default:
		rows := vs[0].n / k
		b.reduceCols(kDotPairCols, rows, k, [][]float64{xy, xz}, func(c Cfg, c0, kc int) {
			b.launchDotPairCols(c, int64(rows), int32(k), int32(kc), int32(kc), 0, vs[0].at(c0), vs[1].at(c0), vs[2].at(c0),
				b.partials, b.counter, uintptr(b.host))
		})
	}
}

// AxpbyCols computes y[:,c] = a[c]*x[:,c] + b[c]*y[:,c]; a column with
// b[c] == 0 does not read y.
func (b *Backend) AxpbyCols(y backend.Vector, a []float64, x backend.Vector, beta []float64) {
	defer b.enter()()
	k := len(a)
	vs := b.block("AxpbyCols", k, y, x)
	switch {
	case vs == nil:
		// the error is recorded
	case len(beta) != k:
		b.fail(fmt.Errorf("gpu: AxpbyCols: %d scalars a but %d scalars b", k, len(beta)))
	case k == 1:
		b.axpby(vs[0], a[0], vs[1], beta[0])
	default:
		rows := vs[0].n / k
		for c0 := 0; c0 < k; c0 += colChunk {
			kc := min(colChunk, k-c0)
			b.launchAxpbyCols(b.blocks(b.colBlocks(rows, kc, 32*b.sms)), a[c0:c0+kc], beta[c0:c0+kc],
				int64(rows), int32(k), int32(kc), vs[1].at(c0), vs[0].at(c0))
		}
	}
}

// MulCols computes z[i,c] = d[i]*r[i,c] for blocks of k columns.
func (b *Backend) MulCols(z, d, r backend.Vector, k int) {
	defer b.enter()()
	vs, dv := b.block("MulCols", k, z, r), b.vector("MulCols", d)
	switch {
	case vs == nil || dv == nil || !b.diagonal("MulCols", dv, vs[0], k):
		// the error is recorded
	case k == 1:
		b.mul(vs[0], dv, vs[1])
	default:
		rows := dv.n
		for c0 := 0; c0 < k; c0 += colChunk {
			kc := min(colChunk, k-c0)
			b.launchMulCols(b.blocks(b.colBlocks(rows, kc, 32*b.sms)),
				int64(rows), int32(k), int32(kc), dv.ptr, vs[1].at(c0), vs[0].at(c0))
		}
	}
}

// UpdateRZCols is r[:,c] -= a[c]*q[:,c], with rr[c] and rz[c] set to r'r
// and r'(d .* r) of column c after it. NaNs once an error is recorded.
func (b *Backend) UpdateRZCols(r backend.Vector, a []float64, q, d backend.Vector, rr, rz []float64) {
	defer b.enter()()
	k := len(a)
	vs, dv := b.block("UpdateRZCols", k, r, q), b.vector("UpdateRZCols", d)
	switch {
	case vs == nil || dv == nil || !b.diagonal("UpdateRZCols", dv, vs[0], k):
		fillNaN(rr)
		fillNaN(rz)
	case len(rr) != k || len(rz) != k:
		b.fail(fmt.Errorf("gpu: UpdateRZCols: %d scalars but %d and %d sums", k, len(rr), len(rz)))
		fillNaN(rr)
		fillNaN(rz)
	case k == 1:
		rr[0], rz[0] = b.updateRZ(vs[0], a[0], vs[1], dv)
	default:
		rows := dv.n
		b.reduceCols(kUpdateRZCols, rows, k, [][]float64{rr, rz}, func(c Cfg, c0, kc int) {
			b.launchUpdateRZCols(c, a[c0:c0+kc], int64(rows), int32(k), int32(kc), vs[0].at(c0), vs[1].at(c0), dv.ptr,
				b.partials, b.counter, uintptr(b.host))
		})
	}
}

// UpdateXPCols is x[:,c] += a[c]*p[:,c], then p[:,c] = z[:,c] +
// beta[c]*p[:,c] with z = d .* r, or z = r when d is nil.
func (b *Backend) UpdateXPCols(x backend.Vector, a []float64, p, d, r backend.Vector, beta []float64) {
	defer b.enter()()
	k := len(a)
	vs := b.block("UpdateXPCols", k, x, p, r)
	var dv *Vector
	if d != nil {
		if dv = b.vector("UpdateXPCols", d); dv == nil {
			return
		}
	}
	switch {
	case vs == nil || (dv != nil && !b.diagonal("UpdateXPCols", dv, vs[0], k)):
		// the error is recorded
	case len(beta) != k:
		b.fail(fmt.Errorf("gpu: UpdateXPCols: %d scalars a but %d scalars b", k, len(beta)))
	case k == 1:
		b.updateXP(vs[0], a[0], vs[1], dv, vs[2], beta[0])
	default:
		rows := vs[0].n / k
		for c0 := 0; c0 < k; c0 += colChunk {
			kc := min(colChunk, k-c0)
			b.launchUpdateXPCols(b.blocks(b.colBlocks(rows, kc, 32*b.sms)), a[c0:c0+kc], beta[c0:c0+kc],
				int64(rows), int32(k), int32(kc), vs[0].at(c0), vs[1].at(c0), dv.arg(), vs[2].at(c0))
		}
	}
}

// at is the device address of column c of a block in v.
func (v *Vector) at(c int) uintptr { return v.ptr + uintptr(8*c) }

// block returns vs as vectors of this backend holding blocks of k columns
// of one size, or records why not and returns nil.
func (b *Backend) block(op string, k int, vs ...backend.Vector) []*Vector {
	out := make([]*Vector, len(vs))
	lens := make([]int, len(vs))
	for i, v := range vs {
		if out[i] = b.vector(op, v); out[i] == nil {
			return nil
		}
		lens[i] = out[i].n
	}
	switch {
	case k < 1:
		b.fail(fmt.Errorf("gpu: %s: %d columns", op, k))
		return nil
	case lens[0]%k != 0:
		b.fail(fmt.Errorf("gpu: %s: %d entries do not make rows of %d columns", op, lens[0], k))
		return nil
	}
	if !b.sameLen(op, lens...) {
		return nil
	}
	return out
}

// diagonal records an error unless d has one entry per row of the k-column
// block v.
func (b *Backend) diagonal(op string, d, v *Vector, k int) bool {
	if d.n*k != v.n {
		b.fail(fmt.Errorf("gpu: %s: diagonal of %d for %d entries in rows of %d columns", op, d.n, v.n, k))
	}
	return b.err == nil
}

// colBlocks is the grid of a block kernel over rows rows of kc columns: one
// row of the block per FSAI_BLOCK/kc threads, at most limit blocks
// (grid-stride beyond).
func (b *Backend) colBlocks(rows, kc, limit int) int {
	return min(ceilDiv(rows, blockSize/kc), limit)
}

// reduceCols runs a per-column reduction kernel k of len(outs) sums per
// column chunk by chunk: launch(c, c0, kc) queues it on c for the kc
// columns from c0, and sum s of column c goes into outs[s][c]. It waits
// for each chunk; on an error it fills outs with NaN. The kernel writes
// its sums into page-locked host memory, as dot's does (reduced).
func (b *Backend) reduceCols(k KernelID, rows, width int, outs [][]float64, launch func(c Cfg, c0, kc int)) {
	if rows == 0 {
		for _, o := range outs {
			clear(o)
		}
		return
	}
	for c0 := 0; c0 < width && b.err == nil; c0 += colChunk {
		kc := min(colChunk, width-c0)
		launch(b.reduceColsGrid(k, rows, kc), c0, kc)
		if b.syncLocked() != nil {
			break
		}
		sums := unsafe.Slice((*float64)(b.host), len(outs)*kc)
		for s, o := range outs {
			copy(o[c0:c0+kc], sums[s*kc:])
		}
	}
	if b.err != nil {
		for _, o := range outs {
			fillNaN(o)
		}
	}
}

// reduceColsGrid is the grid of a per-column reduction kernel k over rows
// rows of kc columns: at most the blocks resident at once, and at most
// those the reduction scratch has room for.
func (b *Backend) reduceColsGrid(k KernelID, rows, kc int) Cfg {
	return b.blocks(b.colBlocks(rows, kc, min(b.maxReduceBlocks, b.fn[k].resident*b.sms)))
}

// fillNaN sets every entry of s to NaN, the sums of a failed reduction.
func fillNaN(s []float64) {
	for i := range s {
		s[i] = math.NaN()
	}
}
