// Package backendtest is the conformance suite of backend.Backend: Run
// checks every method of a backend against plain host loops written here,
// as gonum's testblas serves every BLAS implementation. A backend's tests
// call Run with a function that opens a fresh backend:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, func(t *testing.T) backend.Backend { return New(1) })
//	}
//
// The cases cover vectors of length 0, 1 and odd lengths (one long enough
// that a multi-threaded backend splits it), views made by Slice, blocks of
// 1 to 67 columns, matrices stored in double and single precision, square,
// rectangular and with a row map, and rows with no entries.
//
// Results that the contract fixes bit for bit are compared bit for bit:
// transfers, Fill, Copy, MulCols, Gather, the halo pack and upload, the
// rows of y that a row-mapped product must not touch, DotCols, DotMany and
// SpMMDot's sums repeated on the same inputs (a run must repeat), sums
// that start at zero and are zero after TakeSum, and SpMMDot's y with one
// column, which must be SpMM's. Results that are sums, which a backend may
// add in any order, or products that it may fuse (a*x + b*y in one
// rounding), are compared within 1e-14 times the number of terms times the
// sum of the terms' magnitudes. A vector is a block of one column: the
// one-vector functions of package backend (SpMV, Dot, Axpby, Mul), which
// call the block methods with k = 1, are checked on vectors of every
// length beside the blocks.
//
// The contract's edges are checked too: SpMM and SpMMDot refuse a
// beta other than 0 or 1 by recording an error, which Err, Sync, Download,
// TakeSum and Close then return; with beta 0 or b == 0 the old values of
// y are not read (they may be NaN); NewMatrix refuses a row map of the
// wrong length and SetValues a wrong number of values.
package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
)

// Run runs the conformance suite on the backends open returns, one fresh
// backend per subtest, which the suite closes at the subtest's end (after
// freeing what it made). open may skip the test (no device).
func Run(t *testing.T, open func(t *testing.T) backend.Backend) {
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			s := newSuite(t, open(t), false)
			c.run(s)
		})
	}
	for _, c := range badProducts {
		t.Run("BadProduct/"+c.name, func(t *testing.T) {
			s := newSuite(t, open(t), true)
			s.badProduct(c)
		})
	}
}

// checks are the subtests of valid use.
var checks = []struct {
	name string
	run  func(s *suite)
}{
	{"Describe", (*suite).testDescribe},
	{"Transfers", (*suite).testTransfers},
	{"Pin", (*suite).testPin},
	{"Slice", (*suite).testSlice},
	{"Fill", (*suite).testFill},
	{"Copy", (*suite).testCopy},
	{"Axpby", (*suite).testAxpby},
	{"Mul", (*suite).testMul},
	{"Dot", (*suite).testDot},
	{"Gather", (*suite).testGather},
	{"Halo", (*suite).testHalo},
	{"NewMatrix", (*suite).testNewMatrix},
	{"SpMV", (*suite).testSpMV},
	{"SpMM", (*suite).testSpMM},
	{"Sums", (*suite).testSums},
	{"SpMMDot", (*suite).testSpMMDot},
	{"SetValues", (*suite).testSetValues},
	{"DotCols", (*suite).testDotCols},
	{"DotPairCols", (*suite).testDotPairCols},
	{"DotMany", (*suite).testDotMany},
	{"AxpyMany", (*suite).testAxpyMany},
	{"AxpyDotMany", (*suite).testAxpyDotMany},
	{"AxpbyCols", (*suite).testAxpbyCols},
	{"MulCols", (*suite).testMulCols},
	{"UpdateRZCols", (*suite).testUpdateRZCols},
	{"UpdateXPCols", (*suite).testUpdateXPCols},
	{"UpdateSRCols", (*suite).testUpdateSRCols},
	{"DotsSRCols", (*suite).testDotsSRCols},
	{"BiCGSTABDirection", (*suite).testBiCGSTABDirection},
	{"BiCGSTABHalf", (*suite).testBiCGSTABHalf},
	{"BiCGSTABStep", (*suite).testBiCGSTABStep},
}

// lengths are the vector lengths of the element-wise checks: empty, one,
// odd, and one that a multi-threaded backend splits into several ranges.
var lengths = []int{0, 1, 2, 7, 100, bigRows}

// bigRows is a row count that the CPU backend splits over three goroutines.
const bigRows = 50001

// shapes are the n x k blocks of the block checks, k = 1 included.
var shapes = []struct{ rows, k int }{
	{0, 1}, {0, 3}, {1, 1}, {1, 2}, {7, 1}, {7, 3}, {7, 5}, {100, 4}, {33, 67}, {bigRows, 1}, {bigRows, 3},
}

// suite is the state of one subtest: its backend and a random source fixed
// by the subtest, so that a failure repeats.
type suite struct {
	t   *testing.T
	b   backend.Backend
	rng *rand.Rand
}

// newSuite prepares a subtest on b. At its end, after what the subtest
// made is freed, it checks Err and Sync (nil after valid use, not nil once
// an error was recorded, as failed says) and closes b, which must return
// the recorded error too.
func newSuite(t *testing.T, b backend.Backend, failed bool) *suite {
	t.Cleanup(func() {
		for _, c := range []struct {
			what string
			call func() error
		}{{"Err", b.Err}, {"Sync", b.Sync}, {"Close", b.Close}} {
			err := c.call()
			if failed && err == nil {
				t.Errorf("%s returned no error after one was recorded", c.what)
			} else if !failed && err != nil {
				t.Errorf("%s: %v", c.what, err)
			}
		}
	})
	return &suite{t: t, b: b, rng: rand.New(rand.NewPCG(1, uint64(len(t.Name()))))}
}

// random returns n values of varied sign and magnitude.
func (s *suite) random(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = s.rng.NormFloat64() * math.Ldexp(1, s.rng.IntN(9)-4)
	}
	return v
}

// nans returns n NaNs: what a y that must not be read holds.
func nans(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// vector returns a backend vector holding host, freed at the subtest's end.
func (s *suite) vector(host []float64) backend.Vector {
	s.t.Helper()
	v, err := s.b.NewVector(len(host))
	if err != nil {
		s.t.Fatalf("NewVector(%d): %v", len(host), err)
	}
	s.t.Cleanup(v.Free)
	if v.Len() != len(host) {
		s.t.Fatalf("NewVector(%d).Len() = %d", len(host), v.Len())
	}
	s.b.Upload(v, host)
	return v
}

// host downloads v.
func (s *suite) host(v backend.Vector) []float64 {
	s.t.Helper()
	out := make([]float64, v.Len())
	if err := s.b.Download(out, v); err != nil {
		s.t.Fatalf("Download: %v", err)
	}
	return out
}

// exact fails the subtest unless got and want hold the same bits (NaN
// matching NaN).
func (s *suite) exact(what string, got, want []float64) {
	s.t.Helper()
	if len(got) != len(want) {
		s.t.Errorf("%s: %d values, want %d", what, len(got), len(want))
		return
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			s.t.Errorf("%s: [%d] = %v, want %v exactly", what, i, got[i], want[i])
			return
		}
	}
}

// near fails the subtest unless |got[i] - want[i]| <= 1e-14 * terms *
// scale[i]: scale[i] is the sum of the magnitudes of the terms of want[i]
// and terms their number, which bounds the effect of adding them in
// another order or fusing a multiply and an add.
func (s *suite) near(what string, got, want, scale []float64, terms int) {
	s.t.Helper()
	if len(got) != len(want) {
		s.t.Errorf("%s: %d values, want %d", what, len(got), len(want))
		return
	}
	tol := 1e-14 * float64(max(terms, 1))
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= tol*scale[i]) && got[i] != want[i] {
			s.t.Errorf("%s: [%d] = %v, want %v (within %g)", what, i, got[i], want[i], tol*scale[i])
			return
		}
	}
}

// name describes a case for messages.
func name(format string, args ...any) string { return fmt.Sprintf(format, args...) }
