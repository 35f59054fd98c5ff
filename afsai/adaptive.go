package afsai

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/csr"
)

// Params controls the adaptive FSAI (blueprint, section 2).
type Params struct {
	// Steps is the most pattern-growing steps per row (kmax); 0 gives the
	// Jacobi scaling D^-1/2.
	Steps int
	// StepSize is the number of columns added to a row per step (s).
	StepSize int
	// Eps stops a row once psi_k/psi_0 <= Eps, psi_0 = a_ii (eq. 2.16); 0
	// turns the test off.
	Eps float64
	// Stall stops a row after a step that lowered psi by less than Stall
	// times its value before the step (hypre's FSAI tolerance, which
	// HYPRE_FSAISetKapTolerance sets): the row is then close to the best
	// the search can reach, and more entries would add to the cost of
	// every PCG iteration for little gain. It puts the entries where they
	// help, which psi_k/psi_0 <= Eps cannot tell: psi has a floor (the
	// squared diagonal entry of A's Cholesky factor) that is not known in
	// advance. 0 turns the test off.
	Stall float64
	// Scaled ranks the candidates by |gradient_j|/sqrt(a_jj) instead of
	// |gradient_j|. Adding column j alone lowers psi by t_j^2/d_j, with
	// t_j half the gradient and d_j <= a_jj j's pivot against the current
	// pattern (factor.add), so the scaled value ranks by the bound
	// t_j^2/a_jj, the exact decrease but for the pivot, while the plain
	// gradient ignores the size of a_jj. The pattern is then the same for
	// A and DAD, D any positive diagonal: unknowns of different units
	// (displacements and rotations of structural matrices) compete fairly.
	Scaled bool
}

// DefaultParams are the parameters the solver uses unless told otherwise:
// up to 40 off-diagonal entries per row, added two at a time, a row stopped
// by the first step that lowers psi by less than 0.3%, candidates ranked by
// the scaled gradient. docs/afsai.md has the measurements
// (scripts/bench-afsai.sh). On the shared matrices with n >= 1000 and the
// generated diffusion, poisson7 and aniso problems they need 4 to 59% of
// Jacobi's PCG iterations at nnz(G)/nnz(A) 0.4 to 2.9, the same counts on 1
// and 4 ranks. Against the former defaults (10 steps of 2, no stall test,
// plain gradient) they cut the PCG work (SpMVs with A, G and G' and the
// vector updates) by 10 to 44% on every one of these matrices, 26% in the
// geometric mean, and the set-up time about 2 to 7 times: 35 and 24% fewer
// iterations on the structural bcsstk15 and s1rmq4m1, and on the others -6
// to +33% (poisson7) at 40 to 94% of the density. They gave the least
// work, within 1%, of a sweep over Steps 3 to 20, StepSize 1 to 4, Stall 0,
// 1e-4, 1e-3, 3e-3 and 1e-2, scaled and not.
func DefaultParams() Params {
	return Params{Steps: 20, StepSize: 2, Eps: 1e-3, Stall: 3e-3, Scaled: true}
}

func (p Params) check() error {
	if p.Steps < 0 || (p.Steps > 0 && p.StepSize < 1) {
		return fmt.Errorf("afsai: Steps %d and StepSize %d: need Steps >= 0 and StepSize >= 1", p.Steps, p.StepSize)
	}
	if !(p.Eps >= 0) || math.IsInf(p.Eps, 0) {
		return fmt.Errorf("afsai: Eps %g: need a finite Eps >= 0", p.Eps)
	}
	if !(p.Stall >= 0 && p.Stall < 1) {
		return fmt.Errorf("afsai: Stall %g: need 0 <= Stall < 1", p.Stall)
	}
	return nil
}

// Adaptive computes the rows of the adaptive FSAI factor G of A (Janna,
// Ferronato, Gambolati; blueprint section 2) for the requested local rows.
// A is square with both triangles stored; row k of the result is G's row for
// local row rows[k], with columns <= rows[k] in A's numbering.
//
// Row i starts from the empty pattern (g~ = e_i, psi_0 = a_ii). Each step
// evaluates the Kaporin gradient of psi, 2 (A g~)_j, at the candidates
// j < i not yet in the pattern, adds the StepSize candidates of largest
// |gradient| (divided by sqrt(a_jj) when Scaled; ties to the smaller
// column; zero gradients are never taken, they cannot lower psi), and
// updates the exact FSAI row on the grown pattern. A row stops after Steps
// steps, when psi/psi_0 <= Eps, after a step that lowered psi by less than
// Stall times its previous value, or when no candidate is left. Its final
// form is (g, 1)/sqrt(psi). A row whose
// Cholesky breaks down keeps the columns added before the failing one and
// stops there (Stats.FallbackRows).
func Adaptive[T csr.Real](a *csr.Matrix[T], rows []int, p Params) (*csr.Matrix[T], Stats, error) {
	if err := p.check(); err != nil {
		return nil, Stats{}, err
	}
	diag, err := checkInput(a, rows)
	if err != nil {
		return nil, Stats{}, err
	}
	var sqrtDiag []T
	if p.Scaled {
		sqrtDiag = make([]T, len(diag))
		for j, d := range diag {
			sqrtDiag[j] = T(math.Sqrt(float64(d)))
		}
	}
	// A row of G takes about as many entries as A's row (both triangles):
	// the chunks' outputs start with room for that, at most the cap.
	expect := func(k int) int {
		i := rows[k]
		return min(int(a.RowPtr[i+1]-a.RowPtr[i])+2, p.Steps*p.StepSize+1)
	}
	return computeRows(rows, a.Cols, expect, func() rowFunc[T] {
		w := &adaptiveWorker[T]{f: newFactor(a, diag), sqrtDiag: sqrtDiag,
			acc: make([]T, a.Cols), touched: make([]bool, a.Cols)}
		return func(k int, out *rowOut[T]) { w.row(rows[k], p, out) }
	})
}

// adaptiveWorker is one goroutine's scratch for Adaptive.
type adaptiveWorker[T csr.Real] struct {
	f        *factor[T]
	sqrtDiag []T       // sqrt(a_jj) when Params.Scaled, else nil (shared, read only)
	acc      []T       // sparse accumulator of A g~ (dense array, len A.Cols)
	touched  []bool    // marks the columns set in acc
	list     []int32   // the columns set in acc
	best     []cand[T] // the chosen candidates, best first
}

// cand is a candidate column with its weight: |gradient|, divided by
// sqrt(a_jj) when Params.Scaled.
type cand[T csr.Real] struct {
	col int32
	abs T
}

// before orders candidates: larger weight first, then smaller column.
func (c cand[T]) before(o cand[T]) bool {
	return c.abs > o.abs || (c.abs == o.abs && c.col < o.col)
}

// row computes the adaptive FSAI row i and adds it to out.
func (w *adaptiveWorker[T]) row(i int, p Params, out *rowOut[T]) {
	f := w.f
	f.reset(i)
	for step := 0; step < p.Steps && float64(f.psi) > p.Eps*float64(f.psi0); step++ {
		f.solve()
		w.gradient(p.StepSize)
		if len(w.best) == 0 {
			break
		}
		before := f.psi
		added := 0
		for _, c := range w.best {
			if !f.add(c.col) {
				break
			}
			added++
		}
		if added < len(w.best) {
			out.stats.FallbackRows++
			break
		}
		// psi only decreases, so Stall = 0 never stops a row
		if float64(before-f.psi) < p.Stall*float64(before) {
			break
		}
	}
	f.solve()
	out.stats.MaxPattern = max(out.stats.MaxPattern, len(f.pat))
	out.add(f.row())
}

// gradient sets w.best to the s candidates j < i, not in the pattern, of
// largest |(A g~)_j| (the Kaporin gradient up to its factor 2), divided by
// sqrt(a_jj) when Params.Scaled, with
// g~ = (g, 1) the current unscaled row: one sparse combination of the rows
// of A in the pattern and row i, cut to the columns < i.
func (w *adaptiveWorker[T]) gradient(s int) {
	f := w.f
	w.accumulate(int32(f.i), 1)
	for k, r := range f.pat {
		w.accumulate(r, f.g[k])
	}
	w.best = w.best[:0]
	for _, c := range w.list {
		v := w.acc[c]
		w.acc[c], w.touched[c] = 0, false
		if f.pos[c] >= 0 || v == 0 {
			continue
		}
		abs := max(v, -v)
		if w.sqrtDiag != nil {
			abs /= w.sqrtDiag[c]
		}
		w.offer(cand[T]{col: c, abs: abs}, s)
	}
	w.list = w.list[:0]
}

// accumulate adds coef times row r of A, columns < i, to the accumulator.
func (w *adaptiveWorker[T]) accumulate(r int32, coef T) {
	cols, vals := w.f.a.Row(int(r))
	for k, c := range cols {
		if int(c) >= w.f.i {
			break
		}
		if !w.touched[c] {
			w.touched[c] = true
			w.list = append(w.list, c)
		}
		w.acc[c] += coef * vals[k]
	}
}

// offer inserts c into w.best, kept sorted best first and at most s long.
func (w *adaptiveWorker[T]) offer(c cand[T], s int) {
	n := len(w.best)
	if n == s && !c.before(w.best[n-1]) {
		return
	}
	if n < s {
		w.best = append(w.best, c)
	}
	k := len(w.best) - 1
	for k > 0 && c.before(w.best[k-1]) {
		w.best[k] = w.best[k-1]
		k--
	}
	w.best[k] = c
}
