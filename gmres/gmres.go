// Package gmres solves distributed nonsymmetric systems A x = b by
// restarted GMRES(m), right preconditioned: it builds a Krylov basis of A
// M^{-1} and sets x = x0 + M^{-1} V y, so the residual it minimizes and
// estimates is the true, unpreconditioned b - A x, which krylov.Monitor
// judges as it does for every method. It is written once against the
// backend interface and runs on CPUs and GPUs alike.
//
// The basis V of m+1 vectors lives on the backend (device memory on a GPU)
// as one block, each vector a contiguous view of it, so that products and
// preconditioners take its vectors as they are. Arnoldi orthogonalizes by
// classical Gram-Schmidt with one reorthogonalization (CGS2), in three
// backend operations, each one pass over the basis so far (the j+1 vectors
// v_0..v_j of step j) and the new vector w:
//
//  1. DotMany: the dots V'w, summed over the ranks in one Allreduce;
//  2. AxpyDotMany: the projection w -= V h1 and, in the same pass, the
//     second pass's dots V'w of the updated w and its squared norm, summed
//     with the ranks' stop votes in the second Allreduce;
//  3. AxpyMany: the second projection w -= V h2 (AxpyMany also forms V y
//     at the end of a cycle).
//
// So a step reads the basis three times (CGS2 run pass by pass reads it
// four: dots, projection, dots, projection) and w three times, writing w
// twice; the new vector's norm after the second pass follows by
// Pythagoras (or from one more reduction where that would cancel). A step
// costs one product with A, one application of M^{-1} and two global
// reductions, where modified Gram-Schmidt would cost j+1. Givens rotations
// keep the Hessenberg matrix triangular and give the residual estimate of
// every step, which the monitor records. At each restart, and when the
// estimate meets the tolerance, x is formed (its update checked for NaN
// and Inf: one reduction; one that holds them leaves x as it was and stops
// the solve with reason nan) and its true residual computed (one product
// and one reduction): a restart continues from it, and the
// solve has converged only when it meets the tolerance.
//
// A zero subdiagonal entry (the new vector lies in the basis) ends the
// cycle: the solution of the Krylov space is then exact, and the true
// residual decides. A zero diagonal of the rotated matrix (A M^{-1} v = 0
// in the basis: A M^{-1} singular) stops the solve with reason breakdown,
// x formed from the steps before it.
//
// GMRES solves one right-hand side at a time: a block of several is an
// error (NewWorkspace).
package gmres

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/krylov"
)

// DefaultRestart is the restart length m of GMRES(m) where none is given.
const DefaultRestart = 30

// Workspace holds GMRES(m)'s basis, work vectors and small dense matrices
// for solves with one operator.
type Workspace struct {
	A     krylov.Operator
	m     int
	basis backend.Vector // the m+1 basis vectors, one after another
	v     []*ddmat.Dense // views of basis's vectors
	z, u  *ddmat.Dense   // M^{-1} v; the update V y
	h     [][]float64    // the Hessenberg matrix by columns, rotated
	cs    []float64      // Givens rotations: cosines
	sn    []float64      // and sines
	g     []float64      // the rotated right-hand side beta e1
	stop  float64        // the ranks' stop votes of the last step
	local []float64      // the local dots of one step, and more
	coef  []float64      // the coefficients of one AxpyMany
}

// NewWorkspace allocates the basis of restart+1 vectors and the work
// vectors for A, shaped like b, which must have one column.
func NewWorkspace(A krylov.Operator, b *ddmat.Dense, restart int) (*Workspace, error) {
	switch {
	case b.Cols != 1:
		return nil, fmt.Errorf("gmres: %d right-hand sides: GMRES solves one at a time", b.Cols)
	case restart < 1:
		return nil, fmt.Errorf("gmres: restart %d is not positive", restart)
	}
	n := b.Rows
	w := &Workspace{A: A, m: restart, cs: make([]float64, restart), sn: make([]float64, restart),
		g: make([]float64, restart+1), local: make([]float64, restart+3), coef: make([]float64, restart+1)}
	basis, err := b.BE.NewVector((restart + 1) * n)
	if err != nil {
		return nil, fmt.Errorf("gmres: allocate the basis of %d vectors: %w", restart+1, err)
	}
	w.basis = basis
	for j := range restart + 1 {
		w.v = append(w.v, &ddmat.Dense{Comm: b.Comm, BE: b.BE, Rows: n, Cols: 1, V: basis.Slice(j*n, n)})
		w.h = append(w.h, make([]float64, restart+1))
	}
	for _, d := range []**ddmat.Dense{&w.z, &w.u} {
		if *d, err = ddmat.NewVector(b.Comm, b.BE, n); err != nil {
			w.Free()
			return nil, fmt.Errorf("gmres: %w", err)
		}
	}
	return w, nil
}

// Free releases the basis and the work vectors.
func (w *Workspace) Free() {
	w.basis.Free()
	for _, d := range []*ddmat.Dense{w.z, w.u} {
		if d != nil {
			d.Free()
		}
	}
}

// SolveBlock solves for b's one column; it returns one Result. A
// right-hand side whose norm lies outside [2^-64, 2^64] is solved scaled
// by a power of two (krylov.Scales).
func (w *Workspace) SolveBlock(M krylov.Preconditioner, b, x *ddmat.Dense, opt krylov.Options) ([]krylov.Result, error) {
	return krylov.SolveOne("gmres", w.A, b, x, w.v[0], w.z, opt, func(bnorm float64, scale []float64) (krylov.Result, error) {
		return w.run(M, b, x, bnorm, scale, opt)
	})
}

// run is GMRES(m) on scale*b from the (scaled) x: cycles of at most m
// steps, each from the true residual of the x the last one formed.
func (w *Workspace) run(M krylov.Preconditioner, b, x *ddmat.Dense, bnorm float64, scale []float64, opt krylov.Options) (krylov.Result, error) {
	bn := bnorm * scale[0]
	rnorm, err := w.residual(b, x, scale)
	if err != nil {
		return krylov.Result{}, err
	}
	mon := krylov.NewMonitor(opt, rnorm/bn)
	w.stop = 0
	for it := 1; ; {
		steps, err := w.cycle(M, &mon, &it, rnorm, bn, opt)
		if err != nil {
			return krylov.Result{}, err
		}
		if steps > 0 && mon.Reason != krylov.NaN { // x stays finite
			if err := w.update(M, x, steps, &mon, it); err != nil {
				return krylov.Result{}, err
			}
		}
		if !mon.Active() {
			return mon.Result, nil
		}
		if rnorm, err = w.residual(b, x, scale); err != nil {
			return krylov.Result{}, err
		}
		if mon.NeedsTrue() {
			mon.Confirm(it, rnorm/bn)
		} else {
			mon.Restarted(rnorm / bn)
		}
	}
}

// residual sets v0 = scale*b - A x (z as scratch) and returns its norm.
func (w *Workspace) residual(b, x *ddmat.Dense, scale []float64) (float64, error) {
	if err := krylov.Residual(w.A, w.v[0], b, x, w.z, scale); err != nil {
		return 0, err
	}
	n, err := ddmat.Norms(w.v[0])
	if err != nil {
		return 0, err
	}
	return n[0], nil
}

// cycle runs Arnoldi steps from the residual in v0, of norm rnorm, until m
// steps, the estimate meets the tolerance, the new vector lies in the
// basis, or the monitor stops the solve; *it counts the iterations. It
// returns the number of steps whose columns the update may use.
func (w *Workspace) cycle(M krylov.Preconditioner, mon *krylov.Monitor, it *int, rnorm, bn float64, opt krylov.Options) (int, error) {
	for j := range w.m {
		if !mon.Check(*it, w.stop > 0) {
			return j, nil
		}
		if j == 0 {
			clear(w.g)
			w.g[0] = rnorm
			ddmat.Axpby(w.v[0], 1/rnorm, w.v[0], 0)
		}
		hnext, err := w.arnoldi(M, j, opt.StopVote())
		if err != nil {
			return 0, err
		}
		if !w.rotate(j, hnext) {
			mon.Stop(krylov.Breakdown, "the Hessenberg matrix is singular at iteration %d (A M^-1 maps a basis vector into the span of the others): A or the preconditioner is singular", *it)
			return j, nil
		}
		mon.Record(*it, math.Abs(w.g[j+1])/bn)
		if !krylov.Finite(mon.RecurrenceRelRes) {
			mon.Stop(krylov.NaN, "the residual estimate is %v at iteration %d: overflow or NaN in the product or the preconditioner", mon.RecurrenceRelRes, *it)
			return j, nil
		}
		if opt.Progress != nil {
			opt.Progress(*it, mon.RecurrenceRelRes)
		}
		*it++
		if hnext == 0 || mon.NeedsTrue() {
			return j + 1, nil
		}
		ddmat.Axpby(w.v[j+1], 1/hnext, w.v[j+1], 0)
	}
	return w.m, nil
}

// arnoldi sets v[j+1] = A M^{-1} v[j] orthogonalized against v[0..j] by
// CGS2, column j of h to its coefficients, and returns the norm of v[j+1]
// (not yet normalized), the subdiagonal entry h[j+1][j]; vote is this
// rank's stop vote, which the second reduction carries. The basis is read
// three times: the first pass's dots (DotMany), its projection fused with
// the second pass's dots and the new vector's squared norm (AxpyDotMany),
// and the second projection (AxpyMany).
func (w *Workspace) arnoldi(M krylov.Preconditioner, j int, vote float64) (float64, error) {
	nv := w.v[j+1]
	be := nv.BE
	if err := M.Apply(w.z, w.v[j]); err != nil {
		return 0, err
	}
	if err := w.A.ApplyBlock(nv.V, w.z.V, 1); err != nil {
		return 0, err
	}
	k := j + 1 // the basis vectors so far
	h := w.h[j]
	clear(h)
	be.DotMany(w.basis, nv.V, w.local[:k])
	first, err := w.sum(nv, w.local[:k])
	if err != nil {
		return 0, err
	}
	copy(h, first)
	be.AxpyDotMany(nv.V, w.basis, w.negated(first), w.local[:k+1])
	second, err := w.sum(nv, append(w.local[:k+1], vote))
	if err != nil {
		return 0, err
	}
	be.AxpyMany(nv.V, w.basis, w.negated(second[:k]))
	norm2 := second[k] // after the first pass
	for c := range k {
		h[c] += second[c]
		norm2 -= second[c] * second[c]
	}
	w.stop = second[k+1]
	if norm2 > 1e-8*second[k] || !krylov.Finite(norm2) {
		return math.Sqrt(norm2), nil
	}
	// Pythagoras cancels: the new vector nearly lies in the basis.
	n, err := ddmat.Norms(nv)
	if err != nil {
		return 0, err
	}
	return n[0], nil
}

// sum sums the local values over the ranks (one Allreduce), once the
// backend has computed them without error.
func (w *Workspace) sum(nv *ddmat.Dense, local []float64) ([]float64, error) {
	if err := nv.BE.Err(); err != nil {
		return nil, err
	}
	return ddmat.Sum(nv.Comm, local...)
}

// negated returns the negated sums, the coefficients of a projection.
func (w *Workspace) negated(sums []float64) []float64 {
	coef := w.coef[:len(sums)]
	for c, s := range sums {
		coef[c] = -s
	}
	return coef
}

// rotate applies the earlier Givens rotations to column j of h (whose
// subdiagonal entry is hnext), makes the one that zeroes hnext and applies
// it to g. It reports false when the rotated diagonal entry is zero.
func (w *Workspace) rotate(j int, hnext float64) bool {
	h := w.h[j]
	h[j+1] = hnext
	for i := range j {
		h[i], h[i+1] = w.cs[i]*h[i]+w.sn[i]*h[i+1], -w.sn[i]*h[i]+w.cs[i]*h[i+1]
	}
	d := math.Hypot(h[j], h[j+1])
	if d == 0 {
		return false
	}
	w.cs[j], w.sn[j] = h[j]/d, h[j+1]/d
	h[j], h[j+1] = d, 0
	w.g[j+1] = -w.sn[j] * w.g[j]
	w.g[j] *= w.cs[j]
	return true
}

// update solves the triangular system R y = g of the first k steps and
// sets x += M^{-1} (V y), unless M^{-1} (V y) holds NaN or Inf: then x
// stays and the monitor stops with reason nan (one reduction, once a
// cycle).
func (w *Workspace) update(M krylov.Preconditioner, x *ddmat.Dense, k int, mon *krylov.Monitor, it int) error {
	y := make([]float64, k)
	for i := k - 1; i >= 0; i-- {
		s := w.g[i]
		for c := i + 1; c < k; c++ {
			s -= w.h[c][i] * y[c]
		}
		y[i] = s / w.h[i][i]
	}
	n := w.u.Rows
	ddmat.Axpby(w.u, y[0], w.v[0], 0)
	w.u.BE.AxpyMany(w.u.V, w.basis.Slice(n, (k-1)*n), y[1:])
	if err := M.Apply(w.z, w.u); err != nil {
		return err
	}
	norm, err := ddmat.Norms(w.z)
	if err != nil {
		return err
	}
	if !krylov.Finite(norm[0]) {
		mon.Stop(krylov.NaN, "the update of x is %v at iteration %d: the preconditioner produced NaN or Inf", norm[0], it-1)
		return nil
	}
	ddmat.Axpby(x, 1, w.z, 1)
	return x.BE.Err()
}
