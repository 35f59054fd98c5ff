package afsai

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Device is the row computation of the FSAI set-up on a device: what an
// implementation for a device (package afsai/cudafsai for the CUDA
// backend) supplies in Config.Device, where New and the Updater run it
// instead of the CPU kernels of this package. New never asks a backend what
// it is: the composition root (package solver) supplies the Device of the
// backend it hands New. A method that cannot handle its input returns an
// error wrapping ErrDeviceUnsupported, and that part of the set-up runs on
// the CPU.
type Device interface {
	// Name is the backend's name ("cuda"), reported as setup_device.
	Name() string
	// AdaptiveSetup computes what Adaptive(a, rows, p) computes: the same
	// rows of G in the same layout (columns ascending, diagonal last) and
	// the same Stats; and the device seconds of its stages. It returns an
	// error wrapping ErrDeviceUnsupported when the device cannot handle the
	// input, which New then computes on the CPU.
	AdaptiveSetup(a *csr.Matrix[float32], rows []int, p Params) (*csr.Matrix[float32], Stats, KernelTimes, error)
	// AdaptiveFactor is AdaptiveSetup for the rows a.Own and after of the
	// local system a (a rank's own rows, which its local system holds
	// last), which it joins where it computes, and it leaves G where PCG
	// uses it: G's diagonal block (its columns a.Own and after, numbered
	// from 0) and the block's transpose, built there too, stay on the
	// device in float32, which holds the set-up's values exactly; only the
	// rows' entries in the columns before a.Own (other ranks') come to the
	// host. It refuses what AdaptiveSetup refuses for the joined system.
	AdaptiveFactor(a Split, p Params) (DeviceFactor, Stats, KernelTimes, error)
	// ReadMatrix copies a matrix of the backend to the host, and its row
	// map (nil without one): the Updater moves new values through host
	// copies of the blocks that AdaptiveFactor left on the device.
	ReadMatrix(m backend.Matrix) (*csr.Matrix[float64], []int32, error)
	// StaticFactor is AdaptiveFactor for static FSAI, which New runs for a
	// single-precision static set-up that keeps G where PCG applies it: it
	// computes what Static(a', rows, p) computes for the joined system a'
	// and its rows a.Own and after, the same rows and the same Stats, and
	// leaves them as AdaptiveFactor does. It refuses what Static refuses,
	// and returns an error wrapping ErrDeviceUnsupported for patterns too
	// long for it.
	StaticFactor(a Split, p StaticParams) (DeviceFactor, Stats, KernelTimes, error)
	// StartRows computes a local system's own rows in two parts: with it a
	// rank starts its set-up from A's diagonal block, on the rows whose
	// set-up cannot reach a received row, while it collects its
	// neighbours' rows, and finishes it once it has them (early.go; the
	// CPU set-up has no such overlap to gain: it would compute on the
	// cores the collection uses). StartRows computes the rows of G that
	// AdaptiveFactor computes for the interior own rows of a, a system of
	// A's diagonal block alone (Own 0): those farther than hops from every
	// own row listed in seeds in the graph of a's diagonal block
	// (InteriorRows, CheckStart), and keeps them, with its set-up, for the
	// run's Finish. It returns the other own rows, near, ascending. A
	// device that declines (ErrDeviceUnsupported) sets up once the rows
	// are collected.
	StartRows(a Split, seeds []int32, hops int, p Params) (run RowsRun, near []int32, st Stats, kt KernelTimes, err error)
	// PrepareFixed prepares the computation of FixedPattern(a', rows,
	// patterns) for the matrices a' with a's pattern: it keeps what does
	// not depend on the values. An Updater of a single-precision set-up
	// prepares a plan once and computes with it on every Update, so that
	// an update computes where New computed, and moves only A's values to
	// the device. It refuses the input that FixedPattern refuses
	// (CheckFixed, on a's values), and returns an error wrapping
	// ErrDeviceUnsupported when the device cannot handle it, which is then
	// computed on the CPU.
	PrepareFixed(a *csr.Matrix[float32], rows []int, patterns [][]int32) (FixedPlan, error)
}

// StaticDevice, RowsDevice and FixedDevice are Device, which holds their
// methods; PlacingPlan is FixedPlan, which holds its. The names are kept
// for programs written against them.
type (
	StaticDevice = Device
	RowsDevice   = Device
	FixedDevice  = Device
	PlacingPlan  = FixedPlan
)

// DeviceFactor is a rank's stripe of G as AdaptiveFactor leaves it.
type DeviceFactor struct {
	// Left holds G's rows with only their entries in columns before own,
	// in the local system's numbering (most rows are empty): every own
	// row, or, when LeftRows is not nil, the own rows it lists (numbered
	// from 0, ascending; an empty list for none), Left's row k being own
	// row LeftRows[k]. Then no pass on the host runs over millions of
	// empty rows.
	Left     *csr.Matrix[float32]
	LeftRows []int32
	// Diag is G's diagonal block and DiagT its transpose, on the device.
	Diag, DiagT backend.Matrix
	// Scratch, when not nil, releases the device memory that the set-up
	// kept past its end (its state: tens of GB on a large stripe), which
	// the device may keep for its next allocations rather than free: a
	// free of that size takes milliseconds and stalls the device. Call it
	// once. New calls it when every rank's set-up is done: a free on one
	// GPU stalled the set-up running on another.
	Scratch func()
}

// LeftRow returns the entries of own row i in Left (numbered from 0).
func (df DeviceFactor) LeftRow(i int) ([]int32, []float32) {
	if df.LeftRows == nil {
		return df.Left.Row(i)
	}
	k, ok := slices.BinarySearch(df.LeftRows, int32(i))
	if !ok {
		return nil, nil
	}
	return df.Left.Row(k)
}

// FixedPlan is a FixedPattern computation that a Device prepared for
// one matrix pattern, rows and patterns.
type FixedPlan interface {
	// Compute computes what FixedPattern computes for the plan's matrix
	// with values vals, in its CSR order: the same rows in the same layout,
	// the same breakdown fallback and the same Stats. G may be the plan's
	// memory, valid until the next Compute or Free.
	Compute(vals []float32) (*csr.Matrix[float32], Stats, error)
	// Free releases the plan's memory; the plan must not be used after.
	Free()

	// Place, ComputeOnDevice and Store leave the rows on the device, in
	// the blocks that PCG applies: the Updater of a set-up that kept G's
	// diagonal block and its transpose on the device then moves only the
	// entries in other ranks' columns through the host.
	//
	// Place prepares ComputeOnDevice and Store: value e of the kth block
	// given to Store will be entry maps[k][e] of the rows laid out on their
	// whole patterns (row after row, a row's columns ascending and the
	// diagonal last, zero where a breakdown left a column out: onPattern's
	// layout), and the entries pick come to the host. It returns an error
	// wrapping ErrDeviceUnsupported when the device has no room for the
	// maps, or when it cannot place rows at all.
	Place(maps [][]int32, pick []int32) error
	// ComputeOnDevice computes the rows as Compute does, with the same
	// Stats, but leaves them on the device for Store.
	ComputeOnDevice(vals []float32) (Stats, error)
	// Store writes the rows of the last ComputeOnDevice into blocks,
	// float32 matrices of the backend with the lengths of Place's maps, and
	// the picked entries into picked.
	Store(blocks []backend.Matrix, picked []float32) error
}

// ErrDeviceUnsupported is wrapped by a Device's errors for
// input it cannot handle (for instance rows too long for its on-chip
// scratch).
var ErrDeviceUnsupported = errors.New("afsai: the device cannot run this set-up")

// KernelTimes are the device seconds of the stages of a set-up on a Device,
// each summed over the pattern-growing steps. In Info they are the largest
// over ranks.
type KernelTimes struct {
	Upload   float64 `json:"upload_s"`   // A and the row list to the device
	Gradient float64 `json:"gradient_s"` // Kaporin gradient and selection of the new columns
	Gather   float64 `json:"gather_s"`   // systems gather: the new rows of A[P,P] and A[P,i]
	Cholesky float64 `json:"cholesky_s"` // bordered Cholesky, psi update and convergence test
	Solve    float64 `json:"solve_s"`    // triangular solves for g
	Assemble float64 `json:"assemble_s"` // scaling by 1/sqrt(psi) and assembly of G
	Download float64 `json:"download_s"` // G (AdaptiveFactor: its off-rank entries) back to the host
	// Transpose is G' from G's diagonal block on the device
	// (AdaptiveFactor): wall seconds of the call, allocation included
	Transpose float64 `json:"transpose_s"`
	// Compact is moving the rows still active together once most have
	// stopped, and their results back
	Compact float64 `json:"compact_s"`
	// Pattern is static FSAI's pattern Low(A~^K): its search over all rows
	// for the longest pattern, and per batch
	Pattern float64 `json:"pattern_s"`
	// Filter is static FSAI's post-filter
	Filter float64 `json:"filter_s"`
}

// Total is the sum of the stages.
func (k KernelTimes) Total() float64 {
	var s float64
	for _, v := range k.values() {
		s += v
	}
	return s
}

// values lists the stages in a fixed order, for reductions over ranks.
func (k *KernelTimes) values() []float64 {
	return []float64{k.Upload, k.Gradient, k.Gather, k.Cholesky, k.Solve, k.Assemble, k.Download, k.Transpose, k.Compact, k.Pattern, k.Filter}
}

// add adds the stage times of o.
func (k *KernelTimes) add(o KernelTimes) {
	v, w := k.values(), o.values()
	for i := range v {
		v[i] += w[i]
	}
	k.setValues(v)
}

// setValues is the inverse of values.
func (k *KernelTimes) setValues(v []float64) {
	k.Upload, k.Gradient, k.Gather, k.Cholesky, k.Solve, k.Assemble, k.Download, k.Transpose, k.Compact, k.Pattern, k.Filter =
		v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10]
}

// CheckAdaptive validates the arguments of Adaptive as Adaptive does and
// returns A's diagonal: for Device implementations, so that they accept and
// refuse the same input.
func CheckAdaptive[T csr.Real](a *csr.Matrix[T], rows []int, p Params) ([]T, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return checkInput(a, rows)
}

// stripe is a rank's stripe of G as its set-up leaves it: rows holds G's
// rows in the local system's numbering, all their entries or, where a
// Device made and holds the diagonal block (diag) and its transpose
// (diagT), only the entries in other ranks' columns.
type stripe struct {
	rows        *csr.Matrix[float64]
	leftRows    []int32 // DeviceFactor.LeftRows: the own rows that rows holds (nil: all)
	diag, diagT backend.Matrix
	scratch     func() // DeviceFactor.Scratch
}

// free releases the device blocks that were not handed on, and the
// set-up's scratch.
func (f *stripe) free() {
	for _, m := range []*backend.Matrix{&f.diag, &f.diagT} {
		if *m != nil {
			(*m).Free()
			*m = nil
		}
	}
	f.releaseScratch()
}

// releaseScratch releases the set-up's scratch on the device, if any.
func (f *stripe) releaseScratch() {
	if f.scratch != nil {
		f.scratch()
		f.scratch = nil
	}
}

// setupFactor is computeFactor, on the device that cfg supplies for a
// single-precision set-up (falling back to the CPU for input the device
// does not support), and leaves G's diagonal block and its
// transpose on the device unless cfg asks for them in float64 (Wide). It
// records in info where the set-up ran and, for a device, its stage times.
func setupFactor(ls *localSystem, cfg Config, info *Info) (stripe, Stats, error) {
	info.SetupDevice = "cpu"
	onCPU := func() (stripe, Stats, error) {
		g, st, err := computeFactor(ls, cfg)
		return stripe{rows: g}, st, err
	}
	dev := cfg.device()
	if dev == nil {
		return onCPU()
	}
	var f stripe
	var g *csr.Matrix[float32]
	var st Stats
	var times KernelTimes
	var err error
	if !cfg.keptOnDevice() {
		g, st, times, err = dev.AdaptiveSetup(ls.matrix32(), ls.ownRows(), cfg.Params)
	} else {
		var df DeviceFactor
		if cfg.Static {
			df, st, times, err = dev.StaticFactor(*ls.split, cfg.StaticParams)
		} else {
			df, st, times, err = dev.AdaptiveFactor(*ls.split, cfg.Params)
		}
		g, f.leftRows, f.diag, f.diagT, f.scratch = df.Left, df.LeftRows, df.Diag, df.DiagT, df.Scratch
	}
	if errors.Is(err, ErrDeviceUnsupported) {
		return onCPU()
	}
	if err != nil {
		return f, st, err
	}
	info.recordDevice(dev.Name(), times)
	f.rows = csr.Convert[float64](g)
	return f, st, nil
}

// device returns the Device that runs the set-up of cfg, nil when it runs
// on the CPU: a set-up in single precision (the blueprint's) on
// cfg.Device, the static one only where it keeps G where PCG applies it.
func (cfg Config) device() Device {
	if cfg.Device == nil || cfg.Setup != backend.Single || cfg.Static && !cfg.keptOnDevice() {
		return nil
	}
	return cfg.Device
}

// keptOnDevice reports whether a Device keeps G where PCG applies it
// (AdaptiveFactor): unless cfg asks for G and G' in float64 storage (Wide),
// which the host makes.
func (cfg Config) keptOnDevice() bool {
	return !(cfg.Apply == backend.Double && cfg.Wide)
}

// recordDevice records that the set-up ran on the device name, and adds
// its stage times.
func (info *Info) recordDevice(name string, times KernelTimes) {
	info.SetupDevice = name
	if info.SetupKernels == nil {
		info.SetupKernels = &KernelTimes{}
	}
	info.SetupKernels.add(times)
}

// RowsRun is a set-up that Device.StartRows began.
type RowsRun interface {
	// Finish returns what AdaptiveFactor(s, p) returns, for StartRows' p
	// and a local system s with the diagonal block of StartRows' (the
	// rank's whole local system, once collected): it computes the own
	// rows listed in rest, all that StartRows did not, from s and joins
	// them to the started rows. When a started row, or a column of its
	// pattern, is listed in marked (own rows numbered from 0, ascending),
	// it computes all own rows from s instead, and reached is true. The
	// statistics and stage times are Finish's own. It frees the run.
	Finish(s Split, rest, marked []int32) (f DeviceFactor, st Stats, kt KernelTimes, reached bool, err error)
	// Free releases a run that Finish is not called on.
	Free()
}

// CheckStart validates the arguments of Device.StartRows: a system
// of a diagonal block alone, seeds a row list (CheckRows), hops not
// negative.
func CheckStart(a Split, seeds []int32, hops int) error {
	if a.Own != 0 || a.Border.NNZ() != 0 {
		return fmt.Errorf("afsai: rows started in a local system of %d rows before its own and %d entries in its border: want its diagonal block alone",
			a.Own, a.Border.NNZ())
	}
	if hops < 0 {
		return fmt.Errorf("afsai: rows started %d hops from the seed rows: want 0 or more", hops)
	}
	return CheckRows(a, seeds)
}

// CheckRows validates a row list of a Device for the local system s:
// own rows numbered from 0, ascending, each once. It checks on all cores:
// the lists are most of a stripe.
func CheckRows(s Split, rows []int32) error {
	bad := make([]int, parallel.Chunks(len(rows))) // per chunk, one more than its first bad entry
	parallel.For(len(rows), func(c, lo, hi int) {
		for k := lo; k < hi; k++ {
			if r := rows[k]; r < 0 || int(r) >= s.Diag.Rows || (k > 0 && r <= rows[k-1]) {
				bad[c] = k + 1
				return
			}
		}
	})
	for _, k := range bad {
		if k > 0 {
			return fmt.Errorf("afsai: row list: entry %d is %d: want own rows 0 to %d, ascending", k-1, rows[k-1], s.Diag.Rows-1)
		}
	}
	return nil
}
