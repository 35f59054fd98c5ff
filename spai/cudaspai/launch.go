package cudaspai

import "github.com/fsai-dist/fsai-dist/gpu"

// spaiKernelSet are the kernels of the SPAI set-up (kernels/spai_solve.cu),
// looked up per set-up in the backend's module.
var spaiKernelSet gpu.KernelSet

var (
	kCount        = spaiKernelSet.Declare("spai_count")
	kSolveShared  = spaiKernelSet.Declare("spai_solve_shared")
	kSolveScratch = spaiKernelSet.Declare("spai_solve_scratch")
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
