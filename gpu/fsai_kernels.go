package gpu

import "github.com/fsai-dist/fsai-dist/backend"

// The kernels of the FSAI set-ups, one typed function each, in the order
// of kernels/*.cu, mirroring their C signatures as launch.go's do. Those
// that take the set-up's state (struct FsaiSetup) are methods of
// fsaiLauncher, which passes its current setup first; the others are
// methods of fsaiKernels and run on the backend's stream.

// fsaiKernelSet are looked up per set-up (Backend.fsaiKernels).
var fsaiKernelSet kernelSet

// fsaiKernels are the kernels of fsaiKernelSet in the loaded module.
type fsaiKernels []kernel

// fsaiKernels looks the set-up kernels up in the backend's module. They are
// part of the module that Open loaded, but not of the kernels that the
// solver launches, and a set-up runs once: looking them up per set-up
// costs microseconds.
func (b *Backend) fsaiKernels() (fsaiKernels, error) {
	return fsaiKernelSet.lookup(b.drv, b.module, false)
}

// cholesky.cu
var (
	fkInit       = fsaiKernelSet.declare("fsai_init")
	fkBorder     = fsaiKernelSet.declare("fsai_border")
	fkBorderWarp = fsaiKernelSet.declare("fsai_border_warp")
	fkSolve      = fsaiKernelSet.declare("fsai_solve")
	fkSolveWarp  = fsaiKernelSet.declare("fsai_solve_warp")
)

func (l *fsaiLauncher) launchInit(c cfg)       { l.launch(fkInit, c) }
func (l *fsaiLauncher) launchBorder(c cfg)     { l.launch(fkBorder, c) }
func (l *fsaiLauncher) launchBorderWarp(c cfg) { l.launch(fkBorderWarp, c) }

func (l *fsaiLauncher) launchSolve(c cfg, all int32)     { l.launch(fkSolve, c, i32(all)) }
func (l *fsaiLauncher) launchSolveWarp(c cfg, all int32) { l.launch(fkSolveWarp, c, i32(all)) }

// fsai_assemble.cu
var (
	fkKeptCounts     = fsaiKernelSet.declare("fsai_kept_counts")
	fkAssemble       = fsaiKernelSet.declare("fsai_assemble")
	fkAssemblePadded = fsaiKernelSet.declare("fsai_assemble_padded")
)

func (l *fsaiLauncher) launchKeptCounts(c cfg, own int32, diagptr uintptr, diagbase int32, leftptr uintptr, leftbase int32,
	stats uintptr) {
	l.launch(fkKeptCounts, c, i32(own), ptr(diagptr), i32(diagbase), ptr(leftptr), i32(leftbase), ptr(stats))
}

func (l *fsaiLauncher) launchAssemble(c cfg, own int32, outptr uintptr, outbase int32, outcol, outval, leftptr uintptr,
	leftbase int32, leftcol, leftval uintptr) {
	l.launch(fkAssemble, c, i32(own), ptr(outptr), i32(outbase), ptr(outcol), ptr(outval), ptr(leftptr), i32(leftbase),
		ptr(leftcol), ptr(leftval))
}

func (l *fsaiLauncher) launchAssemblePadded(c cfg, full, outptr, outval uintptr) {
	l.launch(fkAssemblePadded, c, ptr(full), ptr(outptr), ptr(outval))
}

// fsai_compact.cu: kernels between two levels (fsai_level.go), given both
// setups and the map up from the rows of the lower to those of the upper.
var (
	fkCompact = fsaiKernelSet.declare("fsai_compact")
	fkRestore = fsaiKernelSet.declare("fsai_restore")
)

func (l *fsaiLauncher) launchCompact(c cfg, upper, lower fsaiSetup, up uintptr) {
	l.levels(fkCompact, c, upper, lower, up)
}

func (l *fsaiLauncher) launchRestore(c cfg, upper, lower fsaiSetup, up uintptr) {
	l.levels(fkRestore, c, upper, lower, up)
}

// fsai_filter.cu
var fkStaticFilter = fsaiKernelSet.declare("fsai_static_filter")

func (l *fsaiLauncher) launchStaticFilter(c cfg, delta float64, longest, dropped uintptr) {
	l.launch(fkStaticFilter, c, f64(delta), ptr(longest), ptr(dropped))
}

// fsai_interior.cu
var (
	fkSeed          = fsaiKernelSet.declare("fsai_seed")
	fkHops          = fsaiKernelSet.declare("fsai_hops")
	fkInteriorFlags = fsaiKernelSet.declare("fsai_interior_flags")
	fkInteriorSplit = fsaiKernelSet.declare("fsai_interior_split")
)

func (fn fsaiKernels) launchSeed(b *Backend, c cfg, nseeds int32, seeds, dist uintptr) {
	b.launch(fn, fkSeed, c, i32(nseeds), ptr(seeds), ptr(dist))
}

func (fn fsaiKernels) launchHops(b *Backend, c cfg, m, own int32, rowptr, col, dist uintptr, level int32) {
	b.launch(fn, fkHops, c, i32(m), i32(own), ptr(rowptr), ptr(col), ptr(dist), i32(level))
}

func (fn fsaiKernels) launchInteriorFlags(b *Backend, c cfg, m int32, dist, pos uintptr) {
	b.launch(fn, fkInteriorFlags, c, i32(m), ptr(dist), ptr(pos))
}

func (fn fsaiKernels) launchInteriorSplit(b *Backend, c cfg, m, own int32, dist, pos, interior, near uintptr) {
	b.launch(fn, fkInteriorSplit, c, i32(m), i32(own), ptr(dist), ptr(pos), ptr(interior), ptr(near))
}

// fsai_join.cu: fsai_join_d and fsai_join_s, by the precision of the
// diagonal block's values.
var fkJoin = fsaiKernelSet.declarePrecisions("fsai_join")

func (fn fsaiKernels) launchJoin(b *Backend, c cfg, p backend.Precision, m, own int32, bptr, bcol, bval, dptr, dcol, dval,
	rowptr, col, val, diag, bad, rows uintptr) {
	b.launch(fn, fkJoin[p], c, i32(m), i32(own), ptr(bptr), ptr(bcol), ptr(bval), ptr(dptr), ptr(dcol), ptr(dval),
		ptr(rowptr), ptr(col), ptr(val), ptr(diag), ptr(bad), ptr(rows))
}

// fsai_pattern.cu: fsai_static_pattern8 and 32, [staticGrow.groups]
var fkStaticPattern = [...]kernelID{
	fsaiKernelSet.declare("fsai_static_pattern8"),
	fsaiKernelSet.declare("fsai_static_pattern32"),
}

func (l *fsaiLauncher) launchStaticPattern(c cfg, groups int, tau float64, k int32, longest uintptr) {
	l.launch(fkStaticPattern[groups], c, f64(tau), i32(k), ptr(longest))
}

// fsai_rows.cu
var (
	fkTouches   = fsaiKernelSet.declare("fsai_touches")
	fkRowsCount = fsaiKernelSet.declare("fsai_rows_count")
	fkRowsCopy  = fsaiKernelSet.declare("fsai_rows_copy")
)

func (fn fsaiKernels) launchTouches(b *Backend, c cfg, nrows int32, rows, rowptr, col uintptr, nflags int32, flags, count uintptr) {
	b.launch(fn, fkTouches, c, i32(nrows), ptr(rows), ptr(rowptr), ptr(col), i32(nflags), ptr(flags), ptr(count))
}

func (fn fsaiKernels) launchRowsCount(b *Backend, c cfg, nrows int32, rows, rowptr, outptr uintptr) {
	b.launch(fn, fkRowsCount, c, i32(nrows), ptr(rows), ptr(rowptr), ptr(outptr))
}

func (fn fsaiKernels) launchRowsCopy(b *Backend, c cfg, nrows int32, rows, rowptr, col, val, outptr, outcol, outval uintptr) {
	b.launch(fn, fkRowsCopy, c, i32(nrows), ptr(rows), ptr(rowptr), ptr(col), ptr(val), ptr(outptr), ptr(outcol), ptr(outval))
}

// kapgrad.cu: fsai_kapgrad8 and 32, [lanes/32]
var fkKapgrad = [...]kernelID{
	fsaiKernelSet.declare("fsai_kapgrad8"),
	fsaiKernelSet.declare("fsai_kapgrad32"),
}

func (l *fsaiLauncher) launchKapgrad(c cfg, lanes32 int, bits int32) {
	l.launch(fkKapgrad[lanes32], c, i32(bits))
}

// sysgather.cu
var (
	fkSysgather       = fsaiKernelSet.declare("fsai_sysgather")
	fkSysgatherSorted = fsaiKernelSet.declare("fsai_sysgather_sorted")
)

func (l *fsaiLauncher) launchSysgather(c cfg, width int32) { l.launch(fkSysgather, c, i32(width)) }
func (l *fsaiLauncher) launchSysgatherSorted(c cfg)        { l.launch(fkSysgatherSorted, c) }
