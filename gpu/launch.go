package gpu

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
)

// The kernels the backend launches, one typed function each, in the order
// of kernels/*.cu. Each mirrors its kernel's C signature after the launch
// configuration and the selectors of a kernel among its instances (cfg,
// backend.Precision, int): int32 for int, int64 for long long, float64 for
// double, uintptr for a device pointer, []float64 for an FsaiCols struct.

// backendKernels are looked up when the backend opens.
var backendKernels kernelSet

// block.cu
var (
	kAxpbyCols    = backendKernels.declare("axpby_cols")
	kMulCols      = backendKernels.declare("mul_cols")
	kDotCols      = backendKernels.declare("dot_cols")
	kDotPairCols  = backendKernels.declare("dot_pair_cols")
	kDotMany      = backendKernels.declare("dot_many")
	kUpdateRZCols = backendKernels.declare("update_rz_cols")
	kUpdateXPCols = backendKernels.declare("update_xp_cols")
)

func (b *Backend) launchAxpbyCols(c cfg, a, beta []float64, n int64, ld, kc int32, x, y uintptr) {
	b.launchCols(kAxpbyCols, c, [][]float64{a, beta}, i64(n), i32(ld), i32(kc), ptr(x), ptr(y))
}

func (b *Backend) launchMulCols(c cfg, n int64, ld, kc int32, d, r, z uintptr) {
	b.launch(b.fn, kMulCols, c, i64(n), i32(ld), i32(kc), ptr(d), ptr(r), ptr(z))
}

func (b *Backend) launchDotCols(c cfg, n int64, ld, kc int32, x, y, partials, counter, result uintptr) {
	b.launch(b.fn, kDotCols, c, i64(n), i32(ld), i32(kc), ptr(x), ptr(y), ptr(partials), ptr(counter), ptr(result))
}

func (b *Backend) launchDotMany(c cfg, n int64, kc int32, v, w, partials, counter, result uintptr) {
	b.launch(b.fn, kDotMany, c, i64(n), i32(kc), ptr(v), ptr(w), ptr(partials), ptr(counter), ptr(result))
}

func (b *Backend) launchDotPairCols(c cfg, n int64, ld, kc int32, x, y, z, partials, counter, result uintptr) {
	b.launch(b.fn, kDotPairCols, c, i64(n), i32(ld), i32(kc), ptr(x), ptr(y), ptr(z), ptr(partials), ptr(counter), ptr(result))
}

func (b *Backend) launchUpdateRZCols(c cfg, a []float64, n int64, ld, kc int32, r, q, d, partials, counter, result uintptr) {
	b.launchCols(kUpdateRZCols, c, [][]float64{a}, i64(n), i32(ld), i32(kc), ptr(r), ptr(q), ptr(d),
		ptr(partials), ptr(counter), ptr(result))
}

func (b *Backend) launchUpdateXPCols(c cfg, a, beta []float64, n int64, ld, kc int32, x, p, d, r uintptr) {
	b.launchCols(kUpdateXPCols, c, [][]float64{a, beta}, i64(n), i32(ld), i32(kc), ptr(x), ptr(p), ptr(d), ptr(r))
}

// gather.cu
var (
	kGather    = backendKernels.declare("gather")
	kGatherF32 = backendKernels.declare("gather_f32")
)

func (b *Backend) launchGather(c cfg, n int64, idx, src, dst uintptr) {
	b.launch(b.fn, kGather, c, i64(n), ptr(idx), ptr(src), ptr(dst))
}

func (b *Backend) launchGatherF32(c cfg, n int64, idx, src, dst uintptr) {
	b.launch(b.fn, kGatherF32, c, i64(n), ptr(idx), ptr(src), ptr(dst))
}

// reduce.cu
var (
	kDot      = backendKernels.declare("dot")
	kUpdateRZ = backendKernels.declare("update_rz")
)

func (b *Backend) launchDot(c cfg, n int64, x, y, partials, counter, result uintptr) {
	b.launch(b.fn, kDot, c, i64(n), ptr(x), ptr(y), ptr(partials), ptr(counter), ptr(result))
}

func (b *Backend) launchUpdateRZ(c cfg, n int64, a float64, r, q, d, partials, counter, result uintptr) {
	b.launch(b.fn, kUpdateRZ, c, i64(n), f64(a), ptr(r), ptr(q), ptr(d), ptr(partials), ptr(counter), ptr(result))
}

// spmm.cu: spmm_{d,s}_c{C} and their _dot twins, [Precision][index in
// spmmPerLane].
var kSpmm, kSpmmDot = declareFamily("spmm", "_c", spmmPerLane[:])

func (b *Backend) launchSpMM(c cfg, p backend.Precision, ci int, nrows int32, rowptr, col, val, x, y uintptr, ld, kc, logWC, logP, accumulate int32,
	rowmap uintptr) {
	b.launch(b.fn, kSpmm[p][ci], c, i32(nrows), ptr(rowptr), ptr(col), ptr(val), ptr(x), ptr(y), i32(ld), i32(kc),
		i32(logWC), i32(logP), i32(accumulate), ptr(rowmap))
}

func (b *Backend) launchSpMMDot(c cfg, p backend.Precision, ci int, nrows int32, rowptr, col, val, x, y uintptr, ld, kc, logWC, logP, accumulate int32,
	rowmap, w, partials, counter, acc uintptr) {
	b.launch(b.fn, kSpmmDot[p][ci], c, i32(nrows), ptr(rowptr), ptr(col), ptr(val), ptr(x), ptr(y), i32(ld), i32(kc),
		i32(logWC), i32(logP), i32(accumulate), ptr(rowmap), ptr(w), ptr(partials), ptr(counter), ptr(acc))
}

// spmv.cu: spmv_{d,s}_w{W} and their _dot twins, [Precision][index in
// spmvWidths].
var kSpmv, kSpmvDot = declareFamily("spmv", "_w", spmvWidths[:])

func (b *Backend) launchSpMV(c cfg, p backend.Precision, wi int, nrows int32, rowptr, col, val, x, y uintptr, accumulate int32, rowmap uintptr) {
	b.launch(b.fn, kSpmv[p][wi], c, i32(nrows), ptr(rowptr), ptr(col), ptr(val), ptr(x), ptr(y), i32(accumulate), ptr(rowmap))
}

func (b *Backend) launchSpMVDot(c cfg, p backend.Precision, wi int, nrows int32, rowptr, col, val, x, y uintptr, accumulate int32,
	rowmap, w, partials, counter, acc uintptr) {
	b.launch(b.fn, kSpmvDot[p][wi], c, i32(nrows), ptr(rowptr), ptr(col), ptr(val), ptr(x), ptr(y), i32(accumulate), ptr(rowmap),
		ptr(w), ptr(partials), ptr(counter), ptr(acc))
}

// declareFamily declares the kernels base_d<sep><v> and base_s<sep><v>
// for each v of vs, and their _dot twins: [Precision][index in vs].
func declareFamily(base, sep string, vs []int) (plain, dot [2][]kernelID) {
	for p, suffix := range precisionSuffix {
		for _, v := range vs {
			name := fmt.Sprintf("%s%s%s%d", base, suffix, sep, v)
			plain[p] = append(plain[p], backendKernels.declare(name))
			dot[p] = append(dot[p], backendKernels.declare(name+"_dot"))
		}
	}
	return plain, dot
}

// transpose.cu
var (
	kTransposeCount   = backendKernels.declare("transpose_count")
	kScanTiles        = backendKernels.declare("transpose_scan_tiles")
	kScanSums         = backendKernels.declare("transpose_scan_sums")
	kScanAdd          = backendKernels.declare("transpose_scan_add")
	kTransposeScatter = backendKernels.declarePrecisions("transpose_scatter")
	kTransposeSort    = backendKernels.declarePrecisions("transpose_sort")
)

func (b *Backend) launchTransposeCount(c cfg, nnz int64, col, count uintptr) {
	b.launch(b.fn, kTransposeCount, c, i64(nnz), ptr(col), ptr(count))
}

func (b *Backend) launchScanTiles(c cfg, n int64, data, sums uintptr) {
	b.launch(b.fn, kScanTiles, c, i64(n), ptr(data), ptr(sums))
}

func (b *Backend) launchScanSums(c cfg, tiles int64, sums uintptr) {
	b.launch(b.fn, kScanSums, c, i64(tiles), ptr(sums))
}

func (b *Backend) launchScanAdd(c cfg, n int64, data, sums uintptr) {
	b.launch(b.fn, kScanAdd, c, i64(n), ptr(data), ptr(sums))
}

func (b *Backend) launchTransposeScatter(c cfg, p backend.Precision, rows int32, rowptr, col, val, end, colT, valT uintptr) {
	b.launch(b.fn, kTransposeScatter[p], c, i32(rows), ptr(rowptr), ptr(col), ptr(val), ptr(end), ptr(colT), ptr(valT))
}

func (b *Backend) launchTransposeSort(c cfg, p backend.Precision, rows int32, rowptr, col, val uintptr) {
	b.launch(b.fn, kTransposeSort[p], c, i32(rows), ptr(rowptr), ptr(col), ptr(val))
}

// vector.cu
var (
	kFill     = backendKernels.declare("fill")
	kAxpby    = backendKernels.declare("axpby")
	kMul      = backendKernels.declare("mul")
	kUpdateXP = backendKernels.declare("update_xp")
)

func (b *Backend) launchFill(c cfg, n int64, v float64, x uintptr) {
	b.launch(b.fn, kFill, c, i64(n), f64(v), ptr(x))
}

func (b *Backend) launchAxpby(c cfg, n int64, a float64, x uintptr, beta float64, y uintptr) {
	b.launch(b.fn, kAxpby, c, i64(n), f64(a), ptr(x), f64(beta), ptr(y))
}

func (b *Backend) launchMul(c cfg, n int64, d, r, z uintptr) {
	b.launch(b.fn, kMul, c, i64(n), ptr(d), ptr(r), ptr(z))
}

func (b *Backend) launchUpdateXP(c cfg, n int64, a, beta float64, x, p, d, r uintptr) {
	b.launch(b.fn, kUpdateXP, c, i64(n), f64(a), f64(beta), ptr(x), ptr(p), ptr(d), ptr(r))
}
