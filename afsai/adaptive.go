package afsai

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/csr"
	"os"
	"strconv"
)

var xScaled = os.Getenv("AFSAI_SCALED") == "1"
var xStall, _ = strconv.ParseFloat(os.Getenv("AFSAI_STALL"), 64)


// Params controls the adaptive FSAI (blueprint, section 2).
type Params struct {
	// Steps is the most pattern-growing steps per row (kmax); 0 gives the
	// Jacobi scaling D^-1/2.
	Steps int
	// StepSize is the number of columns added to a row per step (s).
	StepSize int
	// Eps stops a row once psi_k/psi_0 <= Eps, psi_0 = a_ii (eq. 2.16); 0
	// runs every row for all Steps (or until no candidate is left).
	Eps float64
}

// DefaultParams are the parameters the solver uses unless told otherwise: up
// to 20 off-diagonal entries per row, added two at a time. On the shared
// test matrices they cut PCG iterations 2 to 16 times against Jacobi with
// nnz(G) about 2 to 4 times nnz(A) (0.35 for the 3D elasticity one), and
// gave the least PCG work (SpMVs with A, G and G' plus vector updates) of a
// sweep over Steps 3..15 and StepSize 1..3. Eps rarely stops a row before
// Steps at this size; it saves work on rows that are easy.
func DefaultParams() Params { return Params{Steps: 10, StepSize: 2, Eps: 1e-3} }

func (p Params) check() error {
	if p.Steps < 0 || (p.Steps > 0 && p.StepSize < 1) {
		return fmt.Errorf("afsai: Steps %d and StepSize %d: need Steps >= 0 and StepSize >= 1", p.Steps, p.StepSize)
	}
	if !(p.Eps >= 0) || math.IsInf(p.Eps, 0) {
		return fmt.Errorf("afsai: Eps %g: need a finite Eps >= 0", p.Eps)
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
// |gradient| (ties to the smaller column; zero gradients are never taken,
// they cannot lower psi), and updates the exact FSAI row on the grown
// pattern. A row stops after Steps steps, when psi/psi_0 <= Eps, or when no
// candidate is left. Its final form is (g, 1)/sqrt(psi). A row whose
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
	return computeRows(rows, a.Cols, func() rowFunc[T] {
		w := &adaptiveWorker[T]{f: newFactor(a, diag), acc: make([]T, a.Cols), touched: make([]bool, a.Cols)}
		return func(k int, out *rowOut[T]) { w.row(rows[k], p, out) }
	})
}

// adaptiveWorker is one goroutine's scratch for Adaptive.
type adaptiveWorker[T csr.Real] struct {
	f       *factor[T]
	acc     []T       // sparse accumulator of A g~ (dense array, len A.Cols)
	touched []bool    // marks the columns set in acc
	list    []int32   // the columns set in acc
	best    []cand[T] // the chosen candidates, best first
}

// cand is a candidate column with its |gradient|.
type cand[T csr.Real] struct {
	col int32
	abs T
}

// before orders candidates: larger |gradient| first, then smaller column.
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
		added := 0
		old := f.psi
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
		if xStall > 0 && float64(old-f.psi) < xStall*float64(old) {
			break
		}
	}
	f.solve()
	out.stats.MaxPattern = max(out.stats.MaxPattern, len(f.pat))
	out.add(f.row())
}

// gradient sets w.best to the s candidates j < i, not in the pattern, of
// largest |(A g~)_j| (the Kaporin gradient up to its factor 2), with
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
		a := max(v, -v)
		if xScaled {
			a /= T(math.Sqrt(float64(f.diag[c])))
		}
		w.offer(cand[T]{col: c, abs: a}, s)
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
