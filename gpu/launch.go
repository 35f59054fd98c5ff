package gpu

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
)

// The kernels the backend launches, one typed function each, in the order
// of kernels/*.cu. Each mirrors its kernel's C signature after the launch
// configuration and the selectors of a kernel among its instances (cfg,
// backend.Precision, int): int32 for int, int64 for long long, float64 for
// double, uintptr for a device pointer, []float64 for an FsaiCols struct,
// fsaiGathers for an FsaiGathers struct.

// backendKernels are looked up when the backend opens.
var backendKernels KernelSet

// bicgstab.cu
var (
	kBiCGSTABDirection = backendKernels.Declare("bicgstab_direction")
	kBiCGSTABHalf      = backendKernels.Declare("bicgstab_half")
	kBiCGSTABStep      = backendKernels.Declare("bicgstab_step")
)

func (b *Backend) launchBiCGSTABDirection(c Cfg, n int64, beta, omega float64, p, r, v, d, ph uintptr) {
	b.launch(b.fn, kBiCGSTABDirection, c, I64(n), F64(beta), F64(omega), Ptr(p), Ptr(r), Ptr(v), Ptr(d), Ptr(ph))
}

func (b *Backend) launchBiCGSTABHalf(c Cfg, n int64, alpha float64, s, r, v, d, sh, partials, counter, result uintptr) {
	b.launch(b.fn, kBiCGSTABHalf, c, I64(n), F64(alpha), Ptr(s), Ptr(r), Ptr(v), Ptr(d), Ptr(sh),
		Ptr(partials), Ptr(counter), Ptr(result))
}

func (b *Backend) launchBiCGSTABStep(c Cfg, n int64, alpha, omega float64, x, ph, sh, r, s, t, rhat, partials, counter, result uintptr) {
	b.launch(b.fn, kBiCGSTABStep, c, I64(n), F64(alpha), F64(omega), Ptr(x), Ptr(ph), Ptr(sh), Ptr(r), Ptr(s), Ptr(t), Ptr(rhat),
		Ptr(partials), Ptr(counter), Ptr(result))
}

// block.cu
var (
	kAxpbyCols    = backendKernels.Declare("axpby_cols")
	kMulCols      = backendKernels.Declare("mul_cols")
	kDotCols      = backendKernels.Declare("dot_cols")
	kDotPairCols  = backendKernels.Declare("dot_pair_cols")
	kAxpyMany     = backendKernels.Declare("axpy_many")
	kUpdateRZCols = backendKernels.Declare("update_rz_cols")
	kUpdateXPCols = backendKernels.Declare("update_xp_cols")
)

func (b *Backend) launchAxpbyCols(c Cfg, a, beta []float64, n int64, ld, kc int32, x, y uintptr) {
	b.launchCols(kAxpbyCols, c, [][]float64{a, beta}, I64(n), I32(ld), I32(kc), Ptr(x), Ptr(y))
}

func (b *Backend) launchMulCols(c Cfg, n int64, ld, kc int32, d, r, z uintptr) {
	b.launch(b.fn, kMulCols, c, I64(n), I32(ld), I32(kc), Ptr(d), Ptr(r), Ptr(z))
}

func (b *Backend) launchDotCols(c Cfg, n int64, ld, kc int32, x, y, partials, counter, result uintptr) {
	b.launch(b.fn, kDotCols, c, I64(n), I32(ld), I32(kc), Ptr(x), Ptr(y), Ptr(partials), Ptr(counter), Ptr(result))
}

func (b *Backend) launchAxpyMany(c Cfg, a []float64, n int64, kc int32, v, w uintptr) {
	b.launchCols(kAxpyMany, c, [][]float64{a}, I64(n), I32(kc), Ptr(v), Ptr(w))
}

func (b *Backend) launchDotPairCols(c Cfg, n int64, ld, kc, stride, add int32, x, y, z, partials, counter, result uintptr) {
	b.launch(b.fn, kDotPairCols, c, I64(n), I32(ld), I32(kc), I32(stride), I32(add), Ptr(x), Ptr(y), Ptr(z),
		Ptr(partials), Ptr(counter), Ptr(result))
}

func (b *Backend) launchUpdateRZCols(c Cfg, a []float64, n int64, ld, kc int32, r, q, d, partials, counter, result uintptr) {
	b.launchCols(kUpdateRZCols, c, [][]float64{a}, I64(n), I32(ld), I32(kc), Ptr(r), Ptr(q), Ptr(d),
		Ptr(partials), Ptr(counter), Ptr(result))
}

func (b *Backend) launchUpdateXPCols(c Cfg, a, beta []float64, n int64, ld, kc int32, x, p, d, r uintptr) {
	b.launchCols(kUpdateXPCols, c, [][]float64{a, beta}, I64(n), I32(ld), I32(kc), Ptr(x), Ptr(p), Ptr(d), Ptr(r))
}

// cgsr.cu
var kCGSRUpdate = backendKernels.Declare("cg_sr_update")

func (b *Backend) launchCGSRUpdate(c Cfg, a, beta []float64, n int64, ld, kc int32, x, r, p, s, u, w, d, partials, counter, result uintptr) {
	b.launchCols(kCGSRUpdate, c, [][]float64{a, beta}, I64(n), I32(ld), I32(kc), Ptr(x), Ptr(r), Ptr(p), Ptr(s), Ptr(u), Ptr(w), Ptr(d),
		Ptr(partials), Ptr(counter), Ptr(result))
}

// gather.cu
var (
	kGather    = backendKernels.Declare("gather")
	kGatherF32 = backendKernels.Declare("gather_f32")
)

func (b *Backend) launchGather(c Cfg, n int64, idx, src, dst uintptr) {
	b.launch(b.fn, kGather, c, I64(n), Ptr(idx), Ptr(src), Ptr(dst))
}

func (b *Backend) launchGatherF32(c Cfg, n int64, idx, src, dst uintptr) {
	b.launch(b.fn, kGatherF32, c, I64(n), Ptr(idx), Ptr(src), Ptr(dst))
}

// halo_gather.cu
var kGatherHalos = backendKernels.Declare("gather_halos")

func (b *Backend) launchGatherHalos(c Cfg, g fsaiGathers, n int64, src uintptr) {
	if b.err != nil || c.grid == 0 {
		return
	}
	p := b.gathers
	p.g, p.n, p.src = g, I64(n), Ptr(src)
	b.fail(b.drv.Launch(b.fn[kGatherHalos].f, c.grid, c.block, c.shared, c.stream, &p.ptrs[0]))
}

// gramschmidt.cu: many_{8,32}, [index in manySizes]
var kMany = [...]KernelID{backendKernels.Declare("many_8"), backendKernels.Declare("many_32")}

func (b *Backend) launchMany(c Cfg, i int, a []float64, n int64, kc, update int32, v, w, partials, counter, result uintptr) {
	b.launchCols(kMany[i], c, [][]float64{a}, I64(n), I32(kc), I32(update), Ptr(v), Ptr(w), Ptr(partials), Ptr(counter), Ptr(result))
}

// reduce.cu
var (
	kDot      = backendKernels.Declare("dot")
	kUpdateRZ = backendKernels.Declare("update_rz")
)

func (b *Backend) launchDot(c Cfg, n int64, x, y, partials, counter, result uintptr) {
	b.launch(b.fn, kDot, c, I64(n), Ptr(x), Ptr(y), Ptr(partials), Ptr(counter), Ptr(result))
}

func (b *Backend) launchUpdateRZ(c Cfg, n int64, a float64, r, q, d, partials, counter, result uintptr) {
	b.launch(b.fn, kUpdateRZ, c, I64(n), F64(a), Ptr(r), Ptr(q), Ptr(d), Ptr(partials), Ptr(counter), Ptr(result))
}

// spmm.cu: spmm_{d,s}_c{C} and their _dot twins, [Precision][index in
// spmmPerLane].
var kSpmm, kSpmmDot = declareFamily("spmm", "_c", spmmPerLane[:])

func (b *Backend) launchSpMM(c Cfg, p backend.Precision, ci int, nrows int32, rowptr, col, val, x, y uintptr, ld, kc, logWC, logP, accumulate int32,
	rowmap uintptr) {
	b.launch(b.fn, kSpmm[p][ci], c, I32(nrows), Ptr(rowptr), Ptr(col), Ptr(val), Ptr(x), Ptr(y), I32(ld), I32(kc),
		I32(logWC), I32(logP), I32(accumulate), Ptr(rowmap))
}

func (b *Backend) launchSpMMDot(c Cfg, p backend.Precision, ci int, nrows int32, rowptr, col, val, x, y uintptr, ld, kc, logWC, logP, accumulate int32,
	rowmap, w, partials, counter, acc uintptr) {
	b.launch(b.fn, kSpmmDot[p][ci], c, I32(nrows), Ptr(rowptr), Ptr(col), Ptr(val), Ptr(x), Ptr(y), I32(ld), I32(kc),
		I32(logWC), I32(logP), I32(accumulate), Ptr(rowmap), Ptr(w), Ptr(partials), Ptr(counter), Ptr(acc))
}

// spmv.cu: spmv_{d,s}_w{W} and their _dot twins, [Precision][index in
// spmvWidths].
var kSpmv, kSpmvDot = declareFamily("spmv", "_w", spmvWidths[:])

func (b *Backend) launchSpMV(c Cfg, p backend.Precision, wi int, nrows int32, rowptr, col, val, x, y uintptr, accumulate int32, rowmap uintptr) {
	b.launch(b.fn, kSpmv[p][wi], c, I32(nrows), Ptr(rowptr), Ptr(col), Ptr(val), Ptr(x), Ptr(y), I32(accumulate), Ptr(rowmap))
}

func (b *Backend) launchSpMVDot(c Cfg, p backend.Precision, wi int, nrows int32, rowptr, col, val, x, y uintptr, accumulate int32,
	rowmap, w, partials, counter, acc uintptr) {
	b.launch(b.fn, kSpmvDot[p][wi], c, I32(nrows), Ptr(rowptr), Ptr(col), Ptr(val), Ptr(x), Ptr(y), I32(accumulate), Ptr(rowmap),
		Ptr(w), Ptr(partials), Ptr(counter), Ptr(acc))
}

// declareFamily declares the kernels base_d<sep><v> and base_s<sep><v>
// for each v of vs, and their _dot twins: [Precision][index in vs].
func declareFamily(base, sep string, vs []int) (plain, dot [2][]KernelID) {
	for p, suffix := range precisionSuffix {
		for _, v := range vs {
			name := fmt.Sprintf("%s%s%s%d", base, suffix, sep, v)
			plain[p] = append(plain[p], backendKernels.Declare(name))
			dot[p] = append(dot[p], backendKernels.Declare(name+"_dot"))
		}
	}
	return plain, dot
}

// transpose.cu
var (
	kTransposeCount   = backendKernels.Declare("transpose_count")
	kScanTiles        = backendKernels.Declare("transpose_scan_tiles")
	kScanSums         = backendKernels.Declare("transpose_scan_sums")
	kScanAdd          = backendKernels.Declare("transpose_scan_add")
	kTransposeScatter = backendKernels.DeclarePrecisions("transpose_scatter")
	kTransposeSort    = backendKernels.DeclarePrecisions("transpose_sort")
)

func (b *Backend) launchTransposeCount(c Cfg, nnz int64, col, count uintptr) {
	b.launch(b.fn, kTransposeCount, c, I64(nnz), Ptr(col), Ptr(count))
}

func (b *Backend) launchScanTiles(c Cfg, n int64, data, sums uintptr) {
	b.launch(b.fn, kScanTiles, c, I64(n), Ptr(data), Ptr(sums))
}

func (b *Backend) launchScanSums(c Cfg, tiles int64, sums uintptr) {
	b.launch(b.fn, kScanSums, c, I64(tiles), Ptr(sums))
}

func (b *Backend) launchScanAdd(c Cfg, n int64, data, sums uintptr) {
	b.launch(b.fn, kScanAdd, c, I64(n), Ptr(data), Ptr(sums))
}

func (b *Backend) launchTransposeScatter(c Cfg, p backend.Precision, rows int32, rowptr, col, val, end, colT, valT uintptr) {
	b.launch(b.fn, kTransposeScatter[p], c, I32(rows), Ptr(rowptr), Ptr(col), Ptr(val), Ptr(end), Ptr(colT), Ptr(valT))
}

func (b *Backend) launchTransposeSort(c Cfg, p backend.Precision, rows int32, rowptr, col, val uintptr) {
	b.launch(b.fn, kTransposeSort[p], c, I32(rows), Ptr(rowptr), Ptr(col), Ptr(val))
}

// vector.cu
var (
	kFill     = backendKernels.Declare("fill")
	kAxpby    = backendKernels.Declare("axpby")
	kMul      = backendKernels.Declare("mul")
	kUpdateXP = backendKernels.Declare("update_xp")
)

func (b *Backend) launchFill(c Cfg, n int64, v float64, x uintptr) {
	b.launch(b.fn, kFill, c, I64(n), F64(v), Ptr(x))
}

func (b *Backend) launchAxpby(c Cfg, n int64, a float64, x uintptr, beta float64, y uintptr) {
	b.launch(b.fn, kAxpby, c, I64(n), F64(a), Ptr(x), F64(beta), Ptr(y))
}

func (b *Backend) launchMul(c Cfg, n int64, d, r, z uintptr) {
	b.launch(b.fn, kMul, c, I64(n), Ptr(d), Ptr(r), Ptr(z))
}

func (b *Backend) launchUpdateXP(c Cfg, n int64, a, beta float64, x, p, d, r uintptr) {
	b.launch(b.fn, kUpdateXP, c, I64(n), F64(a), F64(beta), Ptr(x), Ptr(p), Ptr(d), Ptr(r))
}
