package problem

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/dsmat"
)

// allKinds are the symmetric problems; everyKind adds convdiff.
var (
	allKinds  = []string{"poisson7", "poisson27", "diffusion", "aniso"}
	everyKind = append(slices.Clone(allKinds), "convdiff")
)

func TestParse(t *testing.T) {
	valid := []struct {
		in   string
		want Spec
		str  string
	}{
		{"poisson7:64", Spec{Kind: "poisson7", N: 64, Seed: 0}, "poisson7:64"},
		{"poisson27:1", Spec{Kind: "poisson27", N: 1, Seed: 0}, "poisson27:1"},
		{"aniso:5", Spec{Kind: "aniso", N: 5, Seed: 0}, "aniso:5"},
		{"diffusion:100", Spec{Kind: "diffusion", N: 100, Seed: DefaultSeed}, "diffusion:100:1"},
		{"diffusion:100:7", Spec{Kind: "diffusion", N: 100, Seed: 7}, "diffusion:100:7"},
		{"diffusion:3:-2", Spec{Kind: "diffusion", N: 3, Seed: -2}, "diffusion:3:-2"},
		{"poisson7:100000", Spec{Kind: "poisson7", N: MaxN, Seed: 0}, "poisson7:100000"},
		{"convdiff:64", Spec{Kind: "convdiff", N: 64, Peclet: DefaultPeclet}, "convdiff:64:10"},
		{"convdiff:8:250", Spec{Kind: "convdiff", N: 8, Peclet: 250}, "convdiff:8:250"},
		{"convdiff:8:0.1", Spec{Kind: "convdiff", N: 8, Peclet: 0.1}, "convdiff:8:0.1"},
		{"convdiff:8:0", Spec{Kind: "convdiff", N: 8}, "convdiff:8:0"},
		{"convdiff:8:1e9", Spec{Kind: "convdiff", N: 8, Peclet: MaxPeclet}, "convdiff:8:1e+09"},
		{"elasticity:8", Spec{Kind: "elasticity", N: 8, Contrast: DefaultContrast, Nu: DefaultNu}, "elasticity:8:1000:0.3"},
		{"elasticity:8:1e6", Spec{Kind: "elasticity", N: 8, Contrast: 1e6, Nu: DefaultNu}, "elasticity:8:1e+06:0.3"},
		{"elasticity:2:1:0.45", Spec{Kind: "elasticity", N: 2, Contrast: 1, Nu: 0.45}, "elasticity:2:1:0.45"},
		{"elasticity:2:1e12:-0.5", Spec{Kind: "elasticity", N: 2, Contrast: MaxContrast, Nu: -0.5}, "elasticity:2:1e+12:-0.5"},
	}
	for _, c := range valid {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got != c.want || got.String() != c.str {
			t.Errorf("Parse(%q) = %+v (%v), want %+v (%s)", c.in, got, got, c.want, c.str)
		}
		if again, err := Parse(got.String()); err != nil || again != got {
			t.Errorf("Parse(%q) = %+v, %v: String does not round-trip", got.String(), again, err)
		}
	}

	invalid := []struct{ in, why string }{
		{"poisson7:0", "out of range"},
		{"poisson7:-3", "out of range"},
		{"poisson7:100001", "out of range"},
		{"poisson7", "missing grid size"},
		{"poisson7:", "missing grid size"},
		{"poisson7:3.5", "not an integer"},
		{"poisson7:x", "not an integer"},
		{"foo:3", `unknown problem "foo"`},
		{"Poisson7:3", "unknown problem"},
		{"", "unknown problem"},
		{"diffusion:10:x", `seed "x" is not an integer`},
		{"diffusion:10:1:2", "too many fields"},
		{"aniso:5:3", "too many fields for aniso"},
		{"poisson27:4:1", "too many fields"},
		{"convdiff:8:x", `peclet "x" is not a number`},
		{"convdiff:8:-1", "peclet -1 out of range"},
		{"convdiff:8:NaN", "peclet NaN out of range"},
		{"convdiff:8:Inf", "peclet +Inf out of range"},
		{"convdiff:8:2e9", "peclet 2e+09 out of range"},
		{"convdiff:8:1:2", "too many fields for convdiff"},
		{"elasticity:8:10:0.3:1", "too many fields for elasticity (form elasticity:N[:contrast[:nu]])"},
		{"elasticity:8:x", `contrast "x" is not a number`},
		{"elasticity:8:10:", `nu "" is not a number`},
		{"elasticity:8:0.5", "contrast 0.5 out of range"},
		{"elasticity:8:NaN", "contrast NaN out of range"},
		{"elasticity:8:1e13", "contrast 1e+13 out of range"},
		{"elasticity:8:10:0.5", "nu 0.5 out of range (-1, 0.5)"},
		{"elasticity:8:10:-1", "nu -1 out of range"},
		{"elasticity:0", "grid size 0 out of range"},
	}
	for _, c := range invalid {
		_, err := Parse(c.in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want error %q", c.in, c.why)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.why) || !strings.Contains(msg, "diffusion:N[:seed]") {
			t.Errorf("Parse(%q) error %q: want it to say %q and list the valid forms", c.in, msg, c.why)
		}
	}
}

func TestGenerateRejects(t *testing.T) {
	ok := Spec{Kind: "poisson7", N: 3}
	cases := []struct {
		s      Spec
		lo, hi int64
		why    string
	}{
		{ok, -1, 2, "not within"},
		{ok, 3, 2, "not within"},
		{ok, 0, 28, "not within"},
		{Spec{Kind: "poisson7"}, 0, 0, "out of range"},
		{Spec{Kind: "poisson7", N: MaxN + 1}, 0, 1, "out of range"},
		{Spec{Kind: "foo", N: 3}, 0, 1, "unknown problem"},
	}
	for _, c := range cases {
		if _, err := c.s.Generate(c.lo, c.hi); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%+v.Generate(%d, %d): error %v, want one saying %q", c.s, c.lo, c.hi, err, c.why)
		}
	}
	if r, err := ok.Generate(27, 27); err != nil || r.Count() != 0 || r.NNZ() != 0 {
		t.Errorf("empty stripe: %+v, %v", r, err)
	}
}

// generate is Generate that fails the test on error or a broken stripe.
func generate(t testing.TB, s Spec, lo, hi int64) *dsmat.Rows {
	t.Helper()
	r, err := s.Generate(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(); err != nil {
		t.Fatalf("%v rows [%d,%d): %v", s, lo, hi, err)
	}
	if r.N != s.Rows() || r.First != lo || int64(r.Count()) != hi-lo {
		t.Fatalf("%v rows [%d,%d): got N %d, First %d, %d rows", s, lo, hi, r.N, r.First, r.Count())
	}
	return r
}

// concat joins consecutive stripes into one.
func concat(parts ...*dsmat.Rows) *dsmat.Rows {
	out := &dsmat.Rows{N: parts[0].N, First: parts[0].First, RowPtr: []int64{0}}
	for _, p := range parts {
		base := out.NNZ()
		for _, q := range p.RowPtr[1:] {
			out.RowPtr = append(out.RowPtr, base+q)
		}
		out.Col = append(out.Col, p.Col...)
		out.Val = append(out.Val, p.Val...)
	}
	return out
}

func equalRows(a, b *dsmat.Rows) bool {
	return a.N == b.N && a.First == b.First && slices.Equal(a.RowPtr, b.RowPtr) &&
		slices.Equal(a.Col, b.Col) && slices.Equal(a.Val, b.Val)
}

// TestStripes checks that stripes of any size (one row, less than a plane,
// more than a plane; for elasticity also within a node's three rows) give
// exactly the rows of the whole matrix, as every rank count does.
func TestStripes(t *testing.T) {
	for _, kind := range append(slices.Clone(everyKind), "elasticity") {
		s := Spec{Kind: kind, N: 6, Seed: 3, Peclet: 30, Contrast: 1e4, Nu: 0.45}
		n := s.Rows()
		full := generate(t, s, 0, n)
		for _, cut := range [][2]int64{{1, 37}, {20, 50}, {100, 150}, {0, n}, {n / 2, n / 2}} {
			a, b := cut[0], cut[1]
			got := concat(generate(t, s, 0, a), generate(t, s, a, b), generate(t, s, b, n))
			if !equalRows(got, full) {
				t.Errorf("%v: stripes [0,%d) [%d,%d) [%d,%d) differ from the whole matrix", s, a, a, b, b, n)
			}
		}
		one := make([]*dsmat.Rows, n)
		for i := range n {
			one[i] = generate(t, s, i, i+1)
		}
		if !equalRows(concat(one...), full) {
			t.Errorf("%v: one-row stripes differ from the whole matrix", s)
		}
	}
}

// dense expands a whole matrix.
func dense(r *dsmat.Rows) [][]float64 {
	a := make([][]float64, r.N)
	for i := range a {
		a[i] = make([]float64, r.N)
		for k := r.RowPtr[i]; k < r.RowPtr[i+1]; k++ {
			a[i][r.Col[k]] = r.Val[k]
		}
	}
	return a
}

// reference builds the dense matrix of s from the definitions in the package
// doc, pair by pair, independently of the stencil walk and the windows.
func reference(s Spec) [][]float64 {
	n := int64(s.N)
	g := grid{n}
	var k []float64 // diffusion coefficients of all cells
	if s.Kind == "diffusion" {
		k = newField(g, uint64(s.Seed)).window(0, s.Rows()).k
	}
	coupling := func(i, j int64, axis int) float64 { // face neighbours
		switch s.Kind {
		case "aniso":
			if axis == 2 {
				return 1e-3
			}
		case "diffusion":
			return 2 * k[i] * k[j] / (k[i] + k[j])
		}
		return 1
	}
	boundary := func(i int64, axis int) float64 {
		if s.Kind == "diffusion" {
			return 2 * k[i]
		}
		return coupling(i, i, axis)
	}
	a := make([][]float64, s.Rows())
	for i := range a {
		a[i] = make([]float64, s.Rows())
		ci := g.at(int64(i))
		for j := range a {
			cj := g.at(int64(j))
			cheb, manh, axis := int64(0), int64(0), 0
			for d := range 3 {
				dist := max(ci[d]-cj[d], cj[d]-ci[d])
				cheb, manh = max(cheb, dist), manh+dist
				if dist != 0 {
					axis = d
				}
			}
			switch {
			case i == j && s.Kind == "poisson27":
				a[i][i] = 26
			case i == j:
				for d := range 3 {
					for _, step := range []int64{-1, 1} {
						if g.inside(ci[d] + step) {
							a[i][i] += coupling(int64(i), int64(i)+step*g.strides()[d], d)
						} else {
							a[i][i] += boundary(int64(i), d)
						}
					}
				}
			case s.Kind == "poisson27" && cheb == 1:
				a[i][j] = -1
			case s.Kind != "poisson27" && manh == 1:
				a[i][j] = -coupling(int64(i), int64(j), axis)
			}
		}
	}
	return a
}

// TestMatrix checks the entries against the definitions, symmetry, diagonal
// dominance and the nonzero counts.
func TestMatrix(t *testing.T) {
	for _, kind := range allKinds {
		s := Spec{Kind: kind, N: 6, Seed: 5}
		g := grid{int64(s.N)}
		a, want := dense(generate(t, s, 0, s.Rows())), reference(s)
		for i := range a {
			c := g.at(int64(i))
			onBoundary := slices.Contains(c[:], 0) || slices.Contains(c[:], g.n-1)
			off := 0.0
			for j := range a {
				if i == j {
					continue
				}
				if a[i][j] != want[i][j] || a[i][j] != a[j][i] {
					t.Fatalf("%v: a[%d][%d] = %g, a[%d][%d] = %g, want %g", s, i, j, a[i][j], j, i, a[j][i], want[i][j])
				}
				off += math.Abs(a[i][j])
			}
			d := a[i][i]
			if d <= 0 || math.Abs(d-want[i][i]) > 1e-14*d {
				t.Fatalf("%v: diagonal %d = %g, want %g", s, i, d, want[i][i])
			}
			if margin := d - off; margin < -1e-14*d || onBoundary && margin <= 1e-12*d {
				t.Fatalf("%v: row %d (boundary %v): diagonal %g, off-diagonal sum %g", s, i, onBoundary, d, off)
			}
		}
	}
}

func TestNNZ(t *testing.T) {
	for _, kind := range everyKind {
		for _, n := range []int64{1, 2, 3, 7} {
			s := Spec{Kind: kind, N: int(n), Seed: 1, Peclet: 30}
			want := 7*n*n*n - 6*n*n
			if kind == "poisson27" {
				want = (3*n - 2) * (3*n - 2) * (3*n - 2)
			}
			if got := generate(t, s, 0, s.Rows()).NNZ(); got != want {
				t.Errorf("%v: nnz %d, want %d", s, got, want)
			}
		}
	}
}

// cholesky factors a dense matrix in place and reports whether it is SPD.
func cholesky(a [][]float64) bool {
	for j := range a {
		d := a[j][j]
		for k := range j {
			d -= a[j][k] * a[j][k]
		}
		if d <= 0 {
			return false
		}
		a[j][j] = math.Sqrt(d)
		for i := j + 1; i < len(a); i++ {
			v := a[i][j]
			for k := range j {
				v -= a[i][k] * a[j][k]
			}
			a[i][j] = v / a[j][j]
		}
	}
	return true
}

func TestSPD(t *testing.T) {
	for _, kind := range allKinds {
		s := Spec{Kind: kind, N: 5, Seed: 1}
		if !cholesky(dense(generate(t, s, 0, s.Rows()))) {
			t.Errorf("%v: Cholesky failed, matrix not SPD", s)
		}
	}
	// the check can fail: the same matrix shifted by its largest diagonal is indefinite
	a := dense(generate(t, Spec{Kind: "diffusion", N: 5, Seed: 1}, 0, 125))
	shift := 0.0
	for i := range a {
		shift = max(shift, a[i][i])
	}
	for i := range a {
		a[i][i] -= shift
	}
	if cholesky(a) {
		t.Error("Cholesky accepted an indefinite matrix")
	}
}

// contrast is max(k)/min(k) of the diffusion coefficient on the whole grid.
func contrast(n int64, seed uint64) float64 {
	k := newField(grid{n}, seed).window(0, n*n*n).k
	return slices.Max(k) / slices.Min(k)
}

func TestDiffusionContrast(t *testing.T) {
	if c := contrast(16, DefaultSeed); c < 1e6 {
		t.Errorf("N=16: contrast %.3g < 1e6", c)
	}
	for seed := range uint64(50) {
		if c := contrast(8, seed); c < 1e6 {
			t.Errorf("N=8 seed %d: contrast %.3g < 1e6", seed, c)
		}
	}
}

func TestDiffusionSeed(t *testing.T) {
	s := Spec{Kind: "diffusion", N: 6, Seed: 1}
	a, b := generate(t, s, 0, s.Rows()), generate(t, s, 0, s.Rows())
	if !equalRows(a, b) {
		t.Error("same seed, different matrices")
	}
	s.Seed = 2
	c := generate(t, s, 0, s.Rows())
	if !slices.Equal(a.Col, c.Col) {
		t.Error("the seed changed the sparsity pattern")
	}
	same := 0
	for k := range a.Val {
		if a.Val[k] == c.Val[k] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 1 and 2 share %d of %d values", same, len(a.Val))
	}
}

// TestLayers checks the coefficient model: per-layer means, the spread
// about them, and the standard normal draws.
func TestLayers(t *testing.T) {
	const n = 64
	f := newField(grid{n}, 9)
	levels := map[int]int{} // layers per level 0..7
	logK := make([]float64, n*n)
	for z := range int64(n) {
		f.logK(z*n*n, logK)
		m := f.layerMean(z)
		levels[int(math.Round((m+layerSpan)*(layerGroup-1)/(2*layerSpan)))]++
		mean, sd := moments(logK)
		if math.Abs(mean-m) > 0.05 || math.Abs(sd-cellSigma) > 0.05 {
			t.Errorf("layer %d: log10 k mean %.3f sd %.3f, want %.3f and %.3f", z, mean, sd, m, cellSigma)
		}
	}
	for l := range layerGroup {
		if levels[l] != n/layerGroup {
			t.Errorf("level %d used by %d layers, want %d", l, levels[l], n/layerGroup)
		}
	}
	g := make([]float64, 100000)
	for i := range g {
		g[i] = normal(f.cellKey, uint64(i))
	}
	if mean, sd := moments(g); math.Abs(mean) > 0.02 || math.Abs(sd-1) > 0.02 {
		t.Errorf("normal draws: mean %.4f sd %.4f", mean, sd)
	}
}

func moments(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}

func BenchmarkGenerate(b *testing.B) {
	for _, kind := range []string{"poisson7", "diffusion"} {
		s := Spec{Kind: kind, N: 64, Seed: 1}
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Generate(0, s.Rows()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(s.Rows())*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestAll: All gives every row, as Generate over the whole range does, and
// passes Parse's errors on.
func TestAll(t *testing.T) {
	full, err := All("diffusion:5")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := Parse("diffusion:5")
	want, _ := s.Generate(0, s.Rows())
	if full.Count() != 125 || !slices.Equal(full.RowPtr, want.RowPtr) || !slices.Equal(full.Col, want.Col) || !slices.Equal(full.Val, want.Val) {
		t.Errorf("All(diffusion:5) differs from Generate(0, 125)")
	}
	if _, err := All("poisson7"); err == nil {
		t.Error("All(poisson7) without a size: no error")
	}
}

// TestMaxNNZ: the bound that the command's memory check counts holds every
// entry of each kind's matrix, and is tight for the interior rows.
func TestMaxNNZ(t *testing.T) {
	for _, spec := range []string{"poisson7:5", "poisson27:5", "diffusion:5", "aniso:5", "convdiff:5", "elasticity:5"} {
		s, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Generate(0, s.Rows())
		if err != nil {
			t.Fatal(err)
		}
		if nnz := r.NNZ(); nnz > s.MaxNNZ() || nnz < s.MaxNNZ()/2 {
			t.Errorf("%s: %d entries, bound %d", spec, nnz, s.MaxNNZ())
		}
	}
}

// TestConvDiff checks convdiff against its definition in the package doc,
// entry by entry: the upwind and downwind couplings, the row sums (0 inside,
// the eliminated boundary couplings at the boundary), the asymmetry,
// diagonal dominance, the M-matrix's positive pivots (nonsingular), and
// that Peclet number 0 is poisson7 bit for bit.
func TestConvDiff(t *testing.T) {
	const peclet = 40
	s := Spec{Kind: "convdiff", N: 5, Peclet: peclet}
	g := grid{int64(s.N)}
	c := peclet / math.Sqrt(3) / float64(s.N+1)
	a := dense(generate(t, s, 0, s.Rows()))
	asym := 0.0
	for i := range a {
		ci := g.at(int64(i))
		wantSum := 0.0 // the couplings to eliminated boundary values
		for d := range 3 {
			if ci[d] == 0 {
				wantSum += 1 + c
			}
			if ci[d] == g.n-1 {
				wantSum++
			}
		}
		sum, off := 0.0, 0.0
		for j := range a {
			sum += a[i][j]
			if i == j {
				continue
			}
			off += math.Abs(a[i][j])
			asym += (a[i][j] - a[j][i]) * (a[i][j] - a[j][i])
			want := 0.0
			for d, st := range g.strides() {
				switch {
				case j == i-int(st) && ci[d] > 0:
					want = -(1 + c)
				case j == i+int(st) && ci[d] < g.n-1:
					want = -1
				}
			}
			if a[i][j] != want {
				t.Fatalf("a[%d][%d] = %g, want %g", i, j, a[i][j], want)
			}
		}
		if d := a[i][i]; math.Abs(d-(6+3*c)) > 1e-14*d {
			t.Fatalf("diagonal %d = %.17g, want %.17g", i, d, 6+3*c)
		}
		if math.Abs(sum-wantSum) > 1e-14*a[i][i] {
			t.Fatalf("row %d sums to %g, want %g", i, sum, wantSum)
		}
		if margin := a[i][i] - off; margin < -1e-14*a[i][i] || wantSum > 0 && margin <= 1e-12*a[i][i] {
			t.Fatalf("row %d (boundary couplings %g): diagonal %g, off-diagonal sum %g", i, wantSum, a[i][i], off)
		}
	}
	if asym == 0 {
		t.Fatal("convdiff is symmetric")
	}
	if i, p := pivots(a); p <= 0 {
		t.Fatalf("pivot %d of the LU factorization is %g: not a nonsingular M-matrix", i, p)
	}

	zero := generate(t, Spec{Kind: "convdiff", N: 6}, 0, 216)
	if !equalRows(zero, generate(t, Spec{Kind: "poisson7", N: 6}, 0, 216)) {
		t.Error("convdiff with Peclet number 0 differs from poisson7")
	}
	if !(Spec{Kind: "convdiff", N: 6}).Symmetric() || s.Symmetric() {
		t.Error("Symmetric: want true for Peclet number 0 only")
	}
}

// pivots factors a (destroyed) by Gaussian elimination without pivoting and
// returns the first pivot that is not positive, with its row, or the last.
func pivots(a [][]float64) (int, float64) {
	for k := range a {
		if a[k][k] <= 0 {
			return k, a[k][k]
		}
		for i := k + 1; i < len(a); i++ {
			if a[i][k] == 0 {
				continue
			}
			l := a[i][k] / a[k][k]
			for j := k; j < len(a); j++ {
				a[i][j] -= l * a[k][j]
			}
		}
	}
	return len(a) - 1, a[len(a)-1][len(a)-1]
}
