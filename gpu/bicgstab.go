package gpu

import (
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
)

// BiCGSTAB's fused updates (bicgstab.Fused), kernels/bicgstab.cu: one
// launch each, the sums deterministic like Dot's.

// BiCGSTABDirection sets p = r + beta*(p - omega*v), or p = r where beta
// is 0 (p and v not read), and ph = d .* p where d is not nil.
func (b *Backend) BiCGSTABDirection(p, r, v backend.Vector, beta, omega float64, d, ph backend.Vector) {
	defer b.enter()()
	vs := b.vectors("BiCGSTABDirection", p, r, v)
	dh := b.diagonalPair("BiCGSTABDirection", d, ph, vs)
	if vs == nil || dh == nil {
		return
	}
	n := vs[0].n
	b.launchBiCGSTABDirection(b.blocks(b.elementBlocks(n)), int64(n), beta, omega, vs[0].ptr, vs[1].ptr, vs[2].ptr,
		dh[0].arg(), dh[1].arg())
}

// BiCGSTABHalf sets s = r - alpha*v, and sh = d .* s where d is not nil,
// and returns s's. NaN once an error is recorded.
func (b *Backend) BiCGSTABHalf(s, r, v backend.Vector, alpha float64, d, sh backend.Vector) float64 {
	defer b.enter()()
	vs := b.vectors("BiCGSTABHalf", s, r, v)
	dh := b.diagonalPair("BiCGSTABHalf", d, sh, vs)
	switch {
	case vs == nil || dh == nil:
		return math.NaN()
	case vs[0].n == 0:
		return 0
	}
	n := vs[0].n
	b.launchBiCGSTABHalf(b.reduceGrid(kBiCGSTABHalf, n), int64(n), alpha, vs[0].ptr, vs[1].ptr, vs[2].ptr,
		dh[0].arg(), dh[1].arg(), b.partials, b.counter, uintptr(b.host))
	return b.reduced()[0]
}

// BiCGSTABStep sets x += alpha*ph + omega*sh and r = s - omega*t, and
// returns r'r and r'rhat of the new r. NaNs once an error is recorded.
func (b *Backend) BiCGSTABStep(x, ph, sh backend.Vector, alpha, omega float64, r, s, t, rhat backend.Vector) (rr, rrhat float64) {
	defer b.enter()()
	vs := b.vectors("BiCGSTABStep", x, ph, sh, r, s, t, rhat)
	switch {
	case vs == nil:
		return math.NaN(), math.NaN()
	case vs[0].n == 0:
		return 0, 0
	}
	n := vs[0].n
	b.launchBiCGSTABStep(b.reduceGrid(kBiCGSTABStep, n), int64(n), alpha, omega, vs[0].ptr, vs[1].ptr, vs[2].ptr,
		vs[3].ptr, vs[4].ptr, vs[5].ptr, vs[6].ptr, b.partials, b.counter, uintptr(b.host))
	sums := b.reduced()
	return sums[0], sums[1]
}

// vectors returns vs as vectors of this backend of one length, or records
// why not and returns nil.
func (b *Backend) vectors(op string, vs ...backend.Vector) []*Vector {
	return b.block(op, 1, vs...)
}

// diagonalPair returns d and its output z as vectors of this backend of
// the length of vs, nils where d is nil, or records why not and returns
// nil (also where vs is nil).
func (b *Backend) diagonalPair(op string, d, z backend.Vector, vs []*Vector) []*Vector {
	switch {
	case vs == nil:
		return nil
	case d == nil:
		return []*Vector{nil, nil}
	}
	if all := b.block(op, 1, vs[0], d, z); all != nil {
		return all[1:]
	}
	return nil
}
