package cudaspai

import (
	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/gpu"
)

// spaiKernelSet are the kernels of the SPAI set-up (kernels/spai_solve.cu,
// kernels/spai_pattern.cu, kernels/spai_join.cu), looked up per set-up in
// the backend's module.
var spaiKernelSet gpu.KernelSet

var (
	kCount        = spaiKernelSet.Declare("spai_count")
	kSolveShared  = spaiKernelSet.Declare("spai_solve_shared")
	kSolveScratch = spaiKernelSet.Declare("spai_solve_scratch")
	kPatternCount = spaiKernelSet.Declare("spai_pattern_count")
	kPatternFill  = spaiKernelSet.Declare("spai_pattern_fill")
	kWiden        = spaiKernelSet.Declare("spai_widen")
	kSplitCount   = spaiKernelSet.Declare("spai_split_count")
	kSplitFill    = spaiKernelSet.Declare("spai_split_fill")
	// spai_join_d and spai_join_s, by the precision of the diagonal
	// block's values
	kJoin = spaiKernelSet.DeclarePrecisions("spai_join")
)

// launchCount launches spai_count, whose C signature it mirrors.
func launchCount(r gpu.Raw, ks []gpu.Kernel, c gpu.Cfg, nprob int32, rowptr, col, patptr, pat, counts uintptr) {
	r.Launch(ks, kCount, c, gpu.I32(nprob), gpu.Ptr(rowptr), gpu.Ptr(col), gpu.Ptr(patptr), gpu.Ptr(pat), gpu.Ptr(counts))
}

// launchSolveShared launches spai_solve_shared, whose C signature it
// mirrors.
func launchSolveShared(r gpu.Raw, ks []gpu.Kernel, c gpu.Cfg, nprob, slot int32, rowptr, col, val, patptr, pat, counts uintptr,
	diag0 int32, out, status uintptr) {
	r.Launch(ks, kSolveShared, c, gpu.I32(nprob), gpu.I32(slot), gpu.Ptr(rowptr), gpu.Ptr(col), gpu.Ptr(val), gpu.Ptr(patptr),
		gpu.Ptr(pat), gpu.Ptr(counts), gpu.I32(diag0), gpu.Ptr(out), gpu.Ptr(status))
}

// launchSolveScratch launches spai_solve_scratch, whose C signature it
// mirrors.
func launchSolveScratch(r gpu.Raw, ks []gpu.Kernel, c gpu.Cfg, nlist int32, list, woff, scratch, rowptr, col, val, patptr, pat,
	counts uintptr, diag0 int32, out, status uintptr) {
	r.Launch(ks, kSolveScratch, c, gpu.I32(nlist), gpu.Ptr(list), gpu.Ptr(woff), gpu.Ptr(scratch), gpu.Ptr(rowptr), gpu.Ptr(col),
		gpu.Ptr(val), gpu.Ptr(patptr), gpu.Ptr(pat), gpu.Ptr(counts), gpu.I32(diag0), gpu.Ptr(out), gpu.Ptr(status))
}

// launchPatternCount launches spai_pattern_count, whose C signature it
// mirrors.
func launchPatternCount(r gpu.Raw, ks []gpu.Kernel, c gpu.Cfg, n int32, rowptr, col, val uintptr, below, diag0 int32,
	tau float64, frow, length, bad uintptr) {
	r.Launch(ks, kPatternCount, c, gpu.I32(n), gpu.Ptr(rowptr), gpu.Ptr(col), gpu.Ptr(val), gpu.I32(below), gpu.I32(diag0),
		gpu.F64(tau), gpu.Ptr(frow), gpu.Ptr(length), gpu.Ptr(bad))
}

// launchPatternFill launches spai_pattern_fill, whose C signature it
// mirrors.
func launchPatternFill(r gpu.Raw, ks []gpu.Kernel, c gpu.Cfg, n int32, rowptr, col, val uintptr, below, diag0 int32,
	tau float64, frow, off, pat uintptr) {
	r.Launch(ks, kPatternFill, c, gpu.I32(n), gpu.Ptr(rowptr), gpu.Ptr(col), gpu.Ptr(val), gpu.I32(below), gpu.I32(diag0),
		gpu.F64(tau), gpu.Ptr(frow), gpu.Ptr(off), gpu.Ptr(pat))
}

// launchWiden launches spai_widen, whose C signature it mirrors.
func launchWiden(r gpu.Raw, ks []gpu.Kernel, c gpu.Cfg, n int64, narrow, wide uintptr) {
	r.Launch(ks, kWiden, c, gpu.I64(n), gpu.Ptr(narrow), gpu.Ptr(wide))
}

// launchSplitCount launches spai_split_count, whose C signature it
// mirrors.
func launchSplitCount(r gpu.Raw, ks []gpu.Kernel, c gpu.Cfg, n int32, patptr, pat uintptr, below int32, dlen, olen uintptr) {
	r.Launch(ks, kSplitCount, c, gpu.I32(n), gpu.Ptr(patptr), gpu.Ptr(pat), gpu.I32(below), gpu.Ptr(dlen), gpu.Ptr(olen))
}

// launchSplitFill launches spai_split_fill, whose C signature it mirrors.
func launchSplitFill(r gpu.Raw, ks []gpu.Kernel, c gpu.Cfg, n int32, patptr, pat, out uintptr, below int32, doff, dcol,
	dval, ooff, ocol, oval uintptr) {
	r.Launch(ks, kSplitFill, c, gpu.I32(n), gpu.Ptr(patptr), gpu.Ptr(pat), gpu.Ptr(out), gpu.I32(below), gpu.Ptr(doff),
		gpu.Ptr(dcol), gpu.Ptr(dval), gpu.Ptr(ooff), gpu.Ptr(ocol), gpu.Ptr(oval))
}

// launchJoin launches spai_join_d or spai_join_s, by the precision p of
// the diagonal block's values, whose C signature it mirrors.
func launchJoin(r gpu.Raw, ks []gpu.Kernel, c gpu.Cfg, p backend.Precision, rows, below, n, colBelow int32, hptr, hcol,
	hval uintptr, ne int32, erows, eptr, ecol, eval, dptr, dcol, dval, rowptr, col, val uintptr) {
	r.Launch(ks, kJoin[p], c, gpu.I32(rows), gpu.I32(below), gpu.I32(n), gpu.I32(colBelow), gpu.Ptr(hptr), gpu.Ptr(hcol),
		gpu.Ptr(hval), gpu.I32(ne), gpu.Ptr(erows), gpu.Ptr(eptr), gpu.Ptr(ecol), gpu.Ptr(eval), gpu.Ptr(dptr),
		gpu.Ptr(dcol), gpu.Ptr(dval), gpu.Ptr(rowptr), gpu.Ptr(col), gpu.Ptr(val))
}
