package cudaspai

import "github.com/fsai-dist/fsai-dist/gpu"

// spaiKernelSet are the kernels of the SPAI set-up (kernels/spai_qr.cu),
// looked up per set-up in the backend's module.
var spaiKernelSet gpu.KernelSet

var kQR = spaiKernelSet.Declare("spai_qr")

// launchQR launches spai_qr, whose C signature it mirrors.
func launchQR(r gpu.Raw, ks []gpu.Kernel, c gpu.Cfg, nprob int32, coff, boff, rows, cols, cvals, b, bad uintptr) {
	r.Launch(ks, kQR, c, gpu.I32(nprob), gpu.Ptr(coff), gpu.Ptr(boff), gpu.Ptr(rows), gpu.Ptr(cols), gpu.Ptr(cvals), gpu.Ptr(b),
		gpu.Ptr(bad))
}
