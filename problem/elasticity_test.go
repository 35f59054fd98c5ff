package problem

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fsai-dist/fsai-dist/dsmat"
)

// elasticity parses an elasticity spec or fails the test.
func elasticity(t *testing.T, spec string) Spec {
	t.Helper()
	s, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestElasticitySize: rows 3 N (N+1)^2 (the whole box: 3 (N+1)^3), nnz
// 9 (3N+1)^2 (3N-2) (the whole box: 9 (3N+1)^3), 81 entries in an
// interior row.
func TestElasticitySize(t *testing.T) {
	for _, n := range []int64{1, 2, 3, 5} {
		s := Spec{Kind: "elasticity", N: int(n), Contrast: 10, Nu: 0.3}
		for _, unclamped := range []bool{false, true} {
			s.unclamped = unclamped
			rows, nnz := 3*n*(n+1)*(n+1), 9*(3*n+1)*(3*n+1)*(3*n-2)
			if unclamped {
				rows, nnz = 3*(n+1)*(n+1)*(n+1), 9*(3*n+1)*(3*n+1)*(3*n+1)
			}
			r := generate(t, s, 0, s.Rows())
			if s.Rows() != rows || r.NNZ() != nnz {
				t.Errorf("%v (unclamped %v): %d rows and %d entries, want %d and %d", s, unclamped, s.Rows(), r.NNZ(), rows, nnz)
			}
		}
	}
	s := elasticity(t, "elasticity:4")
	r := generate(t, s, 0, s.Rows())
	g := s.nodeGrid()
	inner := 3 * g.index(cell{2, 2, 2}) // a node away from every face
	if got := r.RowPtr[inner+1] - r.RowPtr[inner]; got != 81 {
		t.Errorf("interior row %d has %d entries, want 81", inner, got)
	}
}

// TestElasticitySymmetric: a_ij == a_ji bit for bit, and the diagonal is
// positive.
func TestElasticitySymmetric(t *testing.T) {
	s := elasticity(t, "elasticity:4:1e3:0.45")
	a := dense(generate(t, s, 0, s.Rows()))
	for i := range a {
		if a[i][i] <= 0 {
			t.Fatalf("a[%d][%d] = %g", i, i, a[i][i])
		}
		for j := range i {
			if a[i][j] != a[j][i] {
				t.Fatalf("a[%d][%d] = %.17g, a[%d][%d] = %.17g", i, j, a[i][j], j, i, a[j][i])
			}
		}
	}
}

// TestElasticitySPD: the clamped matrix has a dense Cholesky factor; the
// whole box's, singular, has none, or one whose condition number shows
// the null space.
func TestElasticitySPD(t *testing.T) {
	for _, spec := range []string{"elasticity:3", "elasticity:4:1e6:0.45", "elasticity:2:1:0"} {
		s := elasticity(t, spec)
		if ok, cond := denseCholesky(generate(t, s, 0, s.Rows())); !ok || cond > 1e12 {
			t.Errorf("%v: Cholesky %v, condition %.3g: not SPD", s, ok, cond)
		}
	}
	s := elasticity(t, "elasticity:3")
	s.unclamped = true
	if ok, cond := denseCholesky(generate(t, s, 0, s.Rows())); ok && cond < 1e12 {
		t.Errorf("%v unclamped: Cholesky succeeded, condition %.3g", s, cond)
	}
}

// denseCholesky factors the whole matrix r with gonum and reports whether
// it is positive definite, with the factor's estimate of its condition
// number.
func denseCholesky(r *dsmat.Rows) (bool, float64) {
	a := dense(r)
	sym := mat.NewSymDense(len(a), nil)
	for i := range a {
		for j := i; j < len(a); j++ {
			sym.SetSym(i, j, a[i][j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return false, math.Inf(1)
	}
	return true, ch.Cond()
}

// rigidModes returns the six rigid-body displacements of the nodes of g,
// the three translations and the three infinitesimal rotations about the
// box's centre, as vectors over the free unknowns.
func rigidModes(g nodeGrid) [6][]float64 {
	var modes [6][]float64
	n := g.nodes()
	centre := float64(g.n) / 2
	for m := range modes {
		modes[m] = make([]float64, 3*n)
	}
	for i := range n {
		c := g.at(i)
		x := [3]float64{float64(c[0]) - centre, float64(c[1]) - centre, float64(c[2]) - centre}
		for d := range 3 {
			modes[d][3*i+int64(d)] = 1
			// rotation about axis d: omega x x with omega = e_d
			u, v := (d+1)%3, (d+2)%3
			modes[3+d][3*i+int64(u)] = -x[v]
			modes[3+d][3*i+int64(v)] = x[u]
		}
	}
	return modes
}

// TestElasticityRigidModes: before the bottom is clamped, A times each of
// the six rigid-body modes is zero to roundoff relative to ||A|| ||u||
// (infinity norms); a stretch u = x e_x is not in the null space, nor is a
// translation once the bottom is clamped.
func TestElasticityRigidModes(t *testing.T) {
	for _, spec := range []string{"elasticity:3:1e3:0.3", "elasticity:4:1e6:0.45"} {
		s := elasticity(t, spec)
		s.unclamped = true
		r := generate(t, s, 0, s.Rows())
		norm := normInf(r)
		g := s.nodeGrid()
		for m, u := range rigidModes(g) {
			if rel := maxAbs(mulRows(r, u)) / (norm * maxAbs(u)); rel > 1e-13 {
				t.Errorf("%v unclamped: |A u|/(|A| |u|) = %.3g for rigid mode %d", s, rel, m)
			}
		}
		stretch := make([]float64, s.Rows())
		for i := range g.nodes() {
			stretch[3*i] = float64(g.at(i)[0])
		}
		if rel := maxAbs(mulRows(r, stretch)) / (norm * maxAbs(stretch)); rel < 1e-3 {
			t.Errorf("%v unclamped: a stretch gives |A u|/(|A| |u|) = %.3g", s, rel)
		}
		clamped := elasticity(t, spec)
		rc := generate(t, clamped, 0, clamped.Rows())
		up := rigidModes(clamped.nodeGrid())[2]
		if rel := maxAbs(mulRows(rc, up)) / normInf(rc); rel < 1e-3 {
			t.Errorf("%v: a translation of the clamped box gives |A u|/|A| = %.3g", clamped, rel)
		}
	}
}

// TestElasticityLayers: every complete group of 8 layers of elements spans
// the contrast, each layer's stiffness is its modulus times the unit
// material's, and a layer's elements share one matrix.
func TestElasticityLayers(t *testing.T) {
	s := elasticity(t, "elasticity:16:1e4:0.3")
	m := newMaterials(s)
	unit := hexStiffness(1, s.Nu, 1/float64(s.N))
	for group := 0; group < s.N; group += layerGroup {
		lo, hi := math.Inf(1), 0.0
		for ez := group; ez < group+layerGroup; ez++ {
			e := m.layer[ez][0][0] / unit[0][0]
			lo, hi = min(lo, e), max(hi, e)
			for p := range unit {
				for q := range unit[p] {
					if d := math.Abs(m.layer[ez][p][q] - e*unit[p][q]); d > 1e-12*e*unit[0][0] {
						t.Fatalf("layer %d: K[%d][%d] = %g, want %g times %g", ez, p, q, m.layer[ez][p][q], e, unit[p][q])
					}
				}
			}
		}
		if c := hi / lo; math.Abs(c-s.Contrast) > 1e-9*s.Contrast || lo != 1 {
			t.Errorf("layers %d to %d: moduli %g to %g, contrast %g, want 1 to %g", group, group+layerGroup-1, lo, hi, c, s.Contrast)
		}
	}
}

// normInf is the largest absolute row sum of the stripe r.
func normInf(r *dsmat.Rows) float64 {
	norm := 0.0
	for i := range r.Count() {
		sum := 0.0
		for k := r.RowPtr[i]; k < r.RowPtr[i+1]; k++ {
			sum += math.Abs(r.Val[k])
		}
		norm = max(norm, sum)
	}
	return norm
}

// mulRows returns r u for the whole matrix r.
func mulRows(r *dsmat.Rows, u []float64) []float64 {
	y := make([]float64, r.Count())
	for i := range y {
		for k := r.RowPtr[i]; k < r.RowPtr[i+1]; k++ {
			y[i] += r.Val[k] * u[r.Col[k]]
		}
	}
	return y
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// TestGeometry: elasticity's rows 3k, 3k+1 and 3k+2 sit at node k, the free
// nodes of the clamped box (z from 1 to N), every node once; a grid
// problem's row sits at its grid point; a range outside the matrix has no
// geometry.
func TestGeometry(t *testing.T) {
	s := elasticity(t, "elasticity:3")
	coords, bs, ok := s.Geometry(0, s.Rows())
	if !ok || bs != 3 {
		t.Fatalf("elasticity:3: ok %v, block size %d", ok, bs)
	}
	seen := map[[3]float64]bool{}
	for k := 0; 9*k < len(coords); k++ {
		p := [3]float64(coords[9*k : 9*k+3])
		if [3]float64(coords[9*k+3:9*k+6]) != p || [3]float64(coords[9*k+6:9*k+9]) != p {
			t.Fatalf("node %d: its three rows sit at %v", k, coords[9*k:9*k+9])
		}
		if p[2] < 1 || p[2] > 3 || p[0] < 0 || p[0] > 3 || p[1] < 0 || p[1] > 3 || seen[p] {
			t.Fatalf("node %d at %v: outside the free nodes, or twice", k, p)
		}
		seen[p] = true
	}
	if len(seen) != 4*4*3 {
		t.Errorf("%d nodes, want 48", len(seen))
	}

	g, err := Parse("poisson7:4")
	if err != nil {
		t.Fatal(err)
	}
	coords, bs, ok = g.Geometry(21, 23)
	if !ok || bs != 1 || !slices.Equal(coords, []float64{1, 1, 1, 2, 1, 1}) {
		t.Errorf("poisson7:4 rows 21 and 22: %v, block size %d, ok %v; want (1,1,1) and (2,1,1)", coords, bs, ok)
	}
	if _, _, ok := g.Geometry(60, 65); ok {
		t.Error("rows 60 to 64 of poisson7:4 (64 rows) have a geometry")
	}
}
