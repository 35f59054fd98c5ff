package cudafsai

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/fsai-dist/fsai-dist/afsai"
)

// fsaiSetup mirrors struct FsaiSetup of kernels/fsai.cuh, member for member
// (a `c` tag names a member whose name differs): device pointers and 8-byte
// scalars, so that both sides lay it out alike. The layouts are compared
// on the GPU before the first set-up on a backend (Device.fsaiKernels).
type fsaiSetup struct {
	rowptr, col, val, diag       uintptr // A
	rows, len, ncand, state, psi uintptr // per batch row
	pat                          uintptr
	l                            uintptr `c:"L"`
	y, g, sys                    uintptr
	activeCount                  uintptr `c:"active_count"`
	nb, mmax, s                  int64
	eps, tol, stall              float64
	scaled                       int64 // Params.Scaled as 0 or 1
	// the rows a step works on (nact of them) and the list of those still
	// active after it; active 0: all rows (fsai.cuh)
	active, next uintptr
	nact         int64
	gdiag        uintptr // static FSAI's post-filtered diagonal entries (fsai_filter.cu); 0: none
}

// Shared memory of the gradient kernel: a block may use 48 KiB without
// opting in; a table slot holds a column, a sum and a pattern flag.
const (
	sharedLimit = 48 << 10
	slotBytes   = 9
	maxThreads  = 256 // per block of the gradient kernel
)

// fsaiPlan is the shape of an adaptive set-up: the longest pattern and, per
// step, the hash table of the gradient kernel.
type fsaiPlan struct {
	steps, s, mmax int
	// filter: the rows are post-filtered (static FSAI), and a batch keeps
	// their diagonal entries (fsaiSetup.gdiag)
	filter bool
	// per step: log2 of the gradient's table size, lanes per row and rows
	// per block
	bits, lanes, rows []int
}

// planFSAI sizes the set-up of p on a matrix whose longest row has maxRow
// entries. At step st a pattern has at most st*s columns, so the gradient
// reaches at most (st*s+1)*maxRow columns; the table is the next power of
// two above that, which leaves an empty slot for probing to stop at. A
// table beyond the shared memory of one warp is not supported: such rows
// are left to the CPU, as are parameters that the kernels do not implement.
func planFSAI(maxRow int, p afsai.Params) (fsaiPlan, error) {
	pl := fsaiPlan{steps: p.Steps, s: p.StepSize, mmax: p.Steps * p.StepSize}
	// A field that afsai.Params gains is zero in the copy: set, it makes p
	// differ, and the set-up runs on the CPU until the kernels implement it.
	implemented := afsai.Params{Steps: p.Steps, StepSize: p.StepSize, Eps: p.Eps, Stall: p.Stall, Scaled: p.Scaled}
	if p != implemented {
		return pl, fmt.Errorf("gpu: adaptive FSAI parameters %+v: %w", p, afsai.ErrDeviceUnsupported)
	}
	for st := 0; st < p.Steps; st++ {
		reach := (st*p.StepSize + 1) * maxRow
		b := max(5, bits.Len(uint(reach)))
		if slotBytes<<b > sharedLimit {
			return pl, fmt.Errorf("gpu: adaptive FSAI step %d reaches up to %d columns: a gradient table of %d slots, "+
				"more than the %d that fit in shared memory: %w", st, reach, 1<<b, sharedLimit/slotBytes, afsai.ErrDeviceUnsupported)
		}
		lanes := gradientLanes(b)
		pl.bits = append(pl.bits, b)
		pl.lanes = append(pl.lanes, lanes)
		pl.rows = append(pl.rows, min(maxThreads/lanes, sharedLimit/(slotBytes<<b)))
	}
	return pl, nil
}

// gradientLanes is the lanes of the gradient kernel per row for a table of
// 2^bits slots: 8 for the smallest table (32 slots), else a warp. A warp
// per row left most lanes idle in the first steps; 8 lanes made those steps
// of diffusion:200 1.4 to 2.3 times faster on an H200, but the steps with 64
// slots (8 lanes) and 128 (16 lanes) 1.1 to 1.2 times slower.
func gradientLanes(bits int) int {
	if bits <= 5 {
		return 8
	}
	return 32
}

// rowBytes is the device memory one batch row needs: the per-row state of
// fsai.cuh and the largest output row.
func (pl fsaiPlan) rowBytes() int {
	m := pl.mmax
	words := 5 + 3*m + m*(m+1)/2 + pl.s*(m+1) + 1 + 2 // state, pat/y/g, L, sys, outptr, active lists
	if pl.filter {
		words++ // gdiag
	}
	return 4*words + 8*(m+1)
}

// fsaiBuffers allocates device memory and frees all of it at once; the
// first allocation error is kept and later allocations are skipped.
type fsaiBuffers struct {
	b    *Device
	ptrs []uintptr
	err  error
}

func (f *fsaiBuffers) alloc(bytes int, what string) uintptr {
	if f.err != nil {
		return 0
	}
	p, err := f.b.Alloc(bytes, what)
	if err != nil {
		f.err = err
		return 0
	}
	if p != 0 {
		f.ptrs = append(f.ptrs, p)
	}
	return p
}

// release frees one allocation of f now.
func (f *fsaiBuffers) release(p uintptr, what string) {
	f.take(p)
	f.b.Free(p, what)
}

// take hands one allocation of f over to the caller, who frees it.
func (f *fsaiBuffers) take(p uintptr) uintptr {
	f.ptrs = slices.DeleteFunc(f.ptrs, func(q uintptr) bool { return q == p })
	return p
}

func (f *fsaiBuffers) free() {
	for _, p := range f.ptrs {
		f.b.Free(p, "FSAI set-up")
	}
	f.ptrs = nil
}

// allocator hands out device memory: fsaiBuffers from the driver, arena
// from an allocation of its own. A failure is kept and returns 0.
type allocator interface {
	alloc(bytes int, what string) uintptr
}

// allocBatch allocates the per-row state of nb batch rows into s from f:
// all of it but the rows, which point into the list of all requested rows,
// and, unless withPat, the patterns, which a fixed-pattern set-up keeps for
// all rows (fixed.go).
func allocBatch(f allocator, s *fsaiSetup, pl fsaiPlan, nb int, withPat bool) {
	m := pl.mmax
	type array struct {
		p     *uintptr
		words int
		what  string
	}
	state := []array{
		{&s.len, 1, "pattern lengths"}, {&s.ncand, 1, "candidate counts"},
		{&s.state, 1, "row states"}, {&s.psi, 1, "psi"},
		{&s.l, m * (m + 1) / 2, "Cholesky factors"}, {&s.y, m, "y"}, {&s.g, m, "g"},
		{&s.sys, pl.s * (m + 1), "gathered systems"},
	}
	if withPat {
		state = append(state, array{&s.pat, m, "patterns"})
	}
	if pl.filter {
		state = append(state, array{&s.gdiag, 1, "filtered diagonal entries"})
	}
	for _, a := range state {
		*a.p = f.alloc(4*max(a.words, 1)*nb, a.what)
	}
	s.activeCount = f.alloc(4, "active row count")
}

// arena carves allocations out of the size bytes from base, 256-byte
// aligned as cuMemAlloc's; one that does not fit sets err. With base 0 it
// only adds up the bytes that allocations would take.
type arena struct {
	base       uintptr
	size, used int
	err        error
}

func (a *arena) alloc(bytes int, what string) uintptr {
	at := (a.used + 255) &^ 255
	if a.err != nil || at+bytes > a.size {
		if a.err == nil {
			a.err = fmt.Errorf("gpu: %d bytes for %s: past the %d of the arena", bytes, what, a.size)
		}
		return 0
	}
	a.used = at + bytes
	return a.base + uintptr(at)
}
