package cudafsai

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/gpu"
	"github.com/fsai-dist/fsai-dist/kernels"
)

// The kernels of the FSAI set-ups, one typed function each, in the order
// of kernels/*.cu, mirroring their C signatures as package gpu's do. Those
// that take the set-up's state (struct FsaiSetup) are methods of
// fsaiLauncher, which passes its current setup first; the others are
// methods of fsaiKernels and run on the backend's stream.

// fsaiKernelSet are looked up per set-up (Device.fsaiKernels).
var fsaiKernelSet gpu.KernelSet

// fsaiKernels are the kernels of fsaiKernelSet in the loaded module.
type fsaiKernels []gpu.Kernel

// fsaiKernels looks the set-up kernels up in the backend's module. They are
// part of the module that gpu.Open loaded, but not of the kernels that the
// solver launches, and a set-up runs once: looking them up per set-up
// costs microseconds. Before the first lookup on a backend it compares the
// layout of struct FsaiSetup with its Go mirror, fsaiSetup, on the GPU
// (gpu.Raw.CheckLayout), so that no kernel reads a set-up's state from the
// wrong bytes.
func (b *Device) fsaiKernels() (fsaiKernels, error) {
	if err := b.CheckLayout(kernels.Headers(), "FsaiSetup", fsaiSetup{}); err != nil {
		return nil, fmt.Errorf("cudafsai: %w", err)
	}
	ks, err := b.Lookup(&fsaiKernelSet)
	return fsaiKernels(ks), err
}

// cholesky.cu
var (
	fkInit       = fsaiKernelSet.Declare("fsai_init")
	fkBorder     = fsaiKernelSet.Declare("fsai_border")
	fkBorderWarp = fsaiKernelSet.Declare("fsai_border_warp")
	fkSolve      = fsaiKernelSet.Declare("fsai_solve")
	fkSolveWarp  = fsaiKernelSet.Declare("fsai_solve_warp")
)

func (l *fsaiLauncher) launchInit(c gpu.Cfg)       { l.launch(fkInit, c) }
func (l *fsaiLauncher) launchBorder(c gpu.Cfg)     { l.launch(fkBorder, c) }
func (l *fsaiLauncher) launchBorderWarp(c gpu.Cfg) { l.launch(fkBorderWarp, c) }

func (l *fsaiLauncher) launchSolve(c gpu.Cfg, all int32)     { l.launch(fkSolve, c, gpu.I32(all)) }
func (l *fsaiLauncher) launchSolveWarp(c gpu.Cfg, all int32) { l.launch(fkSolveWarp, c, gpu.I32(all)) }

// fsai_assemble.cu
var (
	fkKeptCounts     = fsaiKernelSet.Declare("fsai_kept_counts")
	fkAssemble       = fsaiKernelSet.Declare("fsai_assemble")
	fkAssemblePadded = fsaiKernelSet.Declare("fsai_assemble_padded")
)

func (l *fsaiLauncher) launchKeptCounts(c gpu.Cfg, own int32, diagptr uintptr, diagbase int32, leftptr uintptr, leftbase int32,
	stats uintptr) {
	l.launch(fkKeptCounts, c, gpu.I32(own), gpu.Ptr(diagptr), gpu.I32(diagbase), gpu.Ptr(leftptr), gpu.I32(leftbase), gpu.Ptr(stats))
}

func (l *fsaiLauncher) launchAssemble(c gpu.Cfg, own int32, outptr uintptr, outbase int32, outcol, outval, leftptr uintptr,
	leftbase int32, leftcol, leftval uintptr) {
	l.launch(fkAssemble, c, gpu.I32(own), gpu.Ptr(outptr), gpu.I32(outbase), gpu.Ptr(outcol), gpu.Ptr(outval), gpu.Ptr(leftptr), gpu.I32(leftbase),
		gpu.Ptr(leftcol), gpu.Ptr(leftval))
}

func (l *fsaiLauncher) launchAssemblePadded(c gpu.Cfg, full, outptr, outval uintptr) {
	l.launch(fkAssemblePadded, c, gpu.Ptr(full), gpu.Ptr(outptr), gpu.Ptr(outval))
}

// fsai_compact.cu: kernels between two levels (fsai_level.go), given both
// setups and the map up from the rows of the lower to those of the upper.
var (
	fkCompact = fsaiKernelSet.Declare("fsai_compact")
	fkRestore = fsaiKernelSet.Declare("fsai_restore")
)

func (l *fsaiLauncher) launchCompact(c gpu.Cfg, upper, lower fsaiSetup, up uintptr) {
	l.levels(fkCompact, c, upper, lower, up)
}

func (l *fsaiLauncher) launchRestore(c gpu.Cfg, upper, lower fsaiSetup, up uintptr) {
	l.levels(fkRestore, c, upper, lower, up)
}

// fsai_filter.cu
var fkStaticFilter = fsaiKernelSet.Declare("fsai_static_filter")

func (l *fsaiLauncher) launchStaticFilter(c gpu.Cfg, delta float64, longest, dropped uintptr) {
	l.launch(fkStaticFilter, c, gpu.F64(delta), gpu.Ptr(longest), gpu.Ptr(dropped))
}

// fsai_interior.cu
var (
	fkSeed          = fsaiKernelSet.Declare("fsai_seed")
	fkHops          = fsaiKernelSet.Declare("fsai_hops")
	fkInteriorFlags = fsaiKernelSet.Declare("fsai_interior_flags")
	fkInteriorSplit = fsaiKernelSet.Declare("fsai_interior_split")
)

func (fn fsaiKernels) launchSeed(b *Device, c gpu.Cfg, nseeds int32, seeds, dist uintptr) {
	b.Launch(fn, fkSeed, c, gpu.I32(nseeds), gpu.Ptr(seeds), gpu.Ptr(dist))
}

func (fn fsaiKernels) launchHops(b *Device, c gpu.Cfg, m, own int32, rowptr, col, dist uintptr, level int32) {
	b.Launch(fn, fkHops, c, gpu.I32(m), gpu.I32(own), gpu.Ptr(rowptr), gpu.Ptr(col), gpu.Ptr(dist), gpu.I32(level))
}

func (fn fsaiKernels) launchInteriorFlags(b *Device, c gpu.Cfg, m int32, dist, pos uintptr) {
	b.Launch(fn, fkInteriorFlags, c, gpu.I32(m), gpu.Ptr(dist), gpu.Ptr(pos))
}

func (fn fsaiKernels) launchInteriorSplit(b *Device, c gpu.Cfg, m, own int32, dist, pos, interior, near uintptr) {
	b.Launch(fn, fkInteriorSplit, c, gpu.I32(m), gpu.I32(own), gpu.Ptr(dist), gpu.Ptr(pos), gpu.Ptr(interior), gpu.Ptr(near))
}

// fsai_join.cu: fsai_join_d and fsai_join_s, by the precision of the
// diagonal block's values.
var fkJoin = fsaiKernelSet.DeclarePrecisions("fsai_join")

func (fn fsaiKernels) launchJoin(b *Device, c gpu.Cfg, p backend.Precision, m, own int32, bptr, bcol, bval, dptr, dcol, dval,
	rowptr, col, val, diag, bad, rows uintptr) {
	b.Launch(fn, fkJoin[p], c, gpu.I32(m), gpu.I32(own), gpu.Ptr(bptr), gpu.Ptr(bcol), gpu.Ptr(bval), gpu.Ptr(dptr), gpu.Ptr(dcol), gpu.Ptr(dval),
		gpu.Ptr(rowptr), gpu.Ptr(col), gpu.Ptr(val), gpu.Ptr(diag), gpu.Ptr(bad), gpu.Ptr(rows))
}

// fsai_pattern.cu: fsai_static_pattern8 and 32, [staticGrow.groups]
var fkStaticPattern = [...]gpu.KernelID{
	fsaiKernelSet.Declare("fsai_static_pattern8"),
	fsaiKernelSet.Declare("fsai_static_pattern32"),
}

func (l *fsaiLauncher) launchStaticPattern(c gpu.Cfg, groups int, tau float64, k int32, longest uintptr) {
	l.launch(fkStaticPattern[groups], c, gpu.F64(tau), gpu.I32(k), gpu.Ptr(longest))
}

// fsai_rows.cu
var (
	fkTouches   = fsaiKernelSet.Declare("fsai_touches")
	fkRowsCount = fsaiKernelSet.Declare("fsai_rows_count")
	fkRowsCopy  = fsaiKernelSet.Declare("fsai_rows_copy")
)

func (fn fsaiKernels) launchTouches(b *Device, c gpu.Cfg, nrows int32, rows, rowptr, col uintptr, nflags int32, flags, count uintptr) {
	b.Launch(fn, fkTouches, c, gpu.I32(nrows), gpu.Ptr(rows), gpu.Ptr(rowptr), gpu.Ptr(col), gpu.I32(nflags), gpu.Ptr(flags), gpu.Ptr(count))
}

func (fn fsaiKernels) launchRowsCount(b *Device, c gpu.Cfg, nrows int32, rows, rowptr, outptr uintptr) {
	b.Launch(fn, fkRowsCount, c, gpu.I32(nrows), gpu.Ptr(rows), gpu.Ptr(rowptr), gpu.Ptr(outptr))
}

func (fn fsaiKernels) launchRowsCopy(b *Device, c gpu.Cfg, nrows int32, rows, rowptr, col, val, outptr, outcol, outval uintptr) {
	b.Launch(fn, fkRowsCopy, c, gpu.I32(nrows), gpu.Ptr(rows), gpu.Ptr(rowptr), gpu.Ptr(col), gpu.Ptr(val), gpu.Ptr(outptr), gpu.Ptr(outcol), gpu.Ptr(outval))
}

// kapgrad.cu: fsai_kapgrad8 and 32, [lanes/32]
var fkKapgrad = [...]gpu.KernelID{
	fsaiKernelSet.Declare("fsai_kapgrad8"),
	fsaiKernelSet.Declare("fsai_kapgrad32"),
}

func (l *fsaiLauncher) launchKapgrad(c gpu.Cfg, lanes32 int, bits int32) {
	l.launch(fkKapgrad[lanes32], c, gpu.I32(bits))
}

// sysgather.cu
var (
	fkSysgather       = fsaiKernelSet.Declare("fsai_sysgather")
	fkSysgatherSorted = fsaiKernelSet.Declare("fsai_sysgather_sorted")
)

func (l *fsaiLauncher) launchSysgather(c gpu.Cfg, width int32) {
	l.launch(fkSysgather, c, gpu.I32(width))
}
func (l *fsaiLauncher) launchSysgatherSorted(c gpu.Cfg) { l.launch(fkSysgatherSorted, c) }
