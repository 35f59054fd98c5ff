package gpu

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/internal/cuda"
	"github.com/fsai-dist/fsai-dist/kernels"
)

// spmvWidths are the group sizes of the miniwarp SpMV kernels, in the order
// of functions.spmv's second index.
var spmvWidths = [...]int{1, 2, 4, 8, 16, 32}

// kernel is a function of the loaded module and its name in kernels/*.cu.
type kernel struct {
	f    cuda.Function
	name string
	// resident is how many blocks of blockSize threads fit on a
	// multiprocessor at once (its registers and shared memory decide):
	// grid-stride kernels launch that many per multiprocessor, one wave,
	// so that no second, partial wave leaves most of the GPU idle.
	resident int
}

// functions are the kernels the backend launches.
type functions struct {
	spmv, spmvDot                                                [2][len(spmvWidths)]kernel // [Precision][width index]
	gather, gatherF32, fill, axpby, mul, dot, updateRZ, updateXP kernel
	// Block kernels (block.go).
	spmm, spmmDot                                                        [2][len(spmmPerLane)]kernel // [Precision][columns per lane index]
	axpbyCols, mulCols, dotCols, dotPairCols, updateRZCols, updateXPCols kernel
	// Transpose kernels (transpose.go).
	transposeCount, scanTiles, scanSums, scanAdd kernel
	transposeScatter, transposeSort              [2]kernel // [Precision]
}

// table lists every kernel slot, with its name filled in.
func (f *functions) table() []*kernel {
	f.gather.name, f.gatherF32.name, f.fill.name, f.axpby.name, f.mul.name = "gather", "gather_f32", "fill", "axpby", "mul"
	f.dot.name, f.updateRZ.name, f.updateXP.name = "dot", "update_rz", "update_xp"
	f.axpbyCols.name, f.mulCols.name, f.dotCols.name, f.dotPairCols.name = "axpby_cols", "mul_cols", "dot_cols", "dot_pair_cols"
	f.updateRZCols.name, f.updateXPCols.name = "update_rz_cols", "update_xp_cols"
	t := []*kernel{&f.gather, &f.gatherF32, &f.fill, &f.axpby, &f.mul, &f.dot, &f.updateRZ, &f.updateXP,
		&f.axpbyCols, &f.mulCols, &f.dotCols, &f.dotPairCols, &f.updateRZCols, &f.updateXPCols}
	f.transposeCount.name, f.scanTiles.name, f.scanSums.name, f.scanAdd.name =
		"transpose_count", "transpose_scan_tiles", "transpose_scan_sums", "transpose_scan_add"
	t = append(t, &f.transposeCount, &f.scanTiles, &f.scanSums, &f.scanAdd)
	for p, suffix := range []string{"_d", "_s"} {
		f.transposeScatter[p].name, f.transposeSort[p].name = "transpose_scatter"+suffix, "transpose_sort"+suffix
		t = append(t, &f.transposeScatter[p], &f.transposeSort[p])
	}
	for p, prefix := range []string{"spmm_d", "spmm_s"} {
		for i, c := range spmmPerLane {
			f.spmm[p][i].name = fmt.Sprintf("%s_c%d", prefix, c)
			f.spmmDot[p][i].name = f.spmm[p][i].name + "_dot"
			t = append(t, &f.spmm[p][i], &f.spmmDot[p][i])
		}
	}
	for p, prefix := range []string{"spmv_d", "spmv_s"} {
		for i, w := range spmvWidths {
			f.spmv[p][i].name = fmt.Sprintf("%s_w%d", prefix, w)
			f.spmvDot[p][i].name = f.spmv[p][i].name + "_dot"
			t = append(t, &f.spmv[p][i], &f.spmvDot[p][i])
		}
	}
	return t
}

// loadModule compiles (or finds in the cache) the kernels for the device and
// loads them into the current context. A cached image that the driver
// refuses (a damaged file) is compiled afresh.
func (b *Backend) loadModule() error {
	dir := cuda.CacheDir()
	image, t, cached, err := cuda.Image(kernels.Source(), kernelsName, b.cc, dir, false)
	if err != nil {
		return err
	}
	if err = b.loadImage(image, t); err != nil && cached {
		if image, t, _, err = cuda.Image(kernels.Source(), kernelsName, b.cc, dir, true); err == nil {
			err = b.loadImage(image, t)
		}
	}
	if err != nil {
		return err
	}
	b.target = t
	for _, k := range b.fn.table() {
		if k.f, err = b.drv.Function(b.module, k.name); err != nil {
			return err
		}
		n, err := b.drv.Resident(k.f, blockSize)
		if err != nil {
			return err
		}
		k.resident = max(1, n)
	}
	return nil
}

// kernelsName names the kernel sources in compiler messages.
const kernelsName = "fsai-kernels.cu"

func (b *Backend) loadImage(image []byte, t cuda.Target) (err error) {
	b.module, err = b.drv.ModuleLoad(image, "kernels for "+t.String())
	return err
}
