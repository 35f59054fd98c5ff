package twolevel_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/gentest"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/precond"
	"github.com/fsai-dist/fsai-dist/twolevel"
)

func TestMain(m *testing.M) { mpitest.Main(m) }

// system is one rank's stripe of a generated problem on a backend.
type system struct {
	op     *dsmat.Operator
	coords []float64
	first  int64
}

func newSystem(t *testing.T, c *comm.Comm, be backend.Backend, spec string) system {
	t.Helper()
	op, p := gentest.Operator(t, c, be, spec)
	first := op.Matrix().First()
	coords, _, ok := p.Geometry(first, first+int64(op.Matrix().LocalRows()))
	if !ok {
		t.Fatalf("%s has no geometry", spec)
	}
	return system{op: op, coords: coords, first: first}
}

// newB is Jacobi with the coarse space of the given boxes.
func (s system) newB(t *testing.T, boxes int) *twolevel.Preconditioner {
	t.Helper()
	M, err := precond.NewJacobi(s.op.Matrix(), s.op.Backend())
	if err != nil {
		t.Fatal(err)
	}
	B, err := twolevel.New(s.op, M, twolevel.Geometry{Coords: s.coords, BlockSize: 3}, twolevel.Params{Boxes: boxes})
	if err != nil {
		M.Free()
		t.Fatal(err)
	}
	return B
}

// rigid returns the rank's rows of the six rigid-body modes of the whole
// body, as an n x 6 block: translations along x, y, z and rotations about
// them, through a point that is no box's centre.
func (s system) rigid() []float64 {
	n := len(s.coords) / 3
	out := make([]float64, 6*n)
	for i := 0; i < n; i++ {
		x, y, z := s.coords[3*i]-1.3, s.coords[3*i+1]-0.7, s.coords[3*i+2]-2.1
		var m [6]float64
		switch (s.first + int64(i)) % 3 {
		case 0:
			m = [6]float64{1, 0, 0, 0, z, -y}
		case 1:
			m = [6]float64{0, 1, 0, -z, 0, x}
		default:
			m = [6]float64{0, 0, 1, y, -x, 0}
		}
		copy(out[6*i:], m[:])
	}
	return out
}

// apply returns B x for the host block x of k columns.
func apply(t *testing.T, c *comm.Comm, be backend.Backend, B *twolevel.Preconditioner, x []float64, k int) []float64 {
	t.Helper()
	n := len(x) / k
	r, err := ddmat.New(c, be, n, k)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Free()
	z, err := ddmat.New(c, be, n, k)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Free()
	if err := r.Set(x); err != nil {
		t.Fatal(err)
	}
	if err := B.Apply(z, r); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n*k)
	if err := z.Get(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// times returns A x for the host block x of k columns.
func (s system) times(t *testing.T, c *comm.Comm, x []float64, k int) []float64 {
	t.Helper()
	be := s.op.Backend()
	n := len(x) / k
	in, err := ddmat.New(c, be, n, k)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Free()
	y, err := ddmat.New(c, be, n, k)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Free()
	if err := in.Set(x); err != nil {
		t.Fatal(err)
	}
	if err := s.op.ApplyBlock(y.V, in.V, k); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, n*k)
	if err := y.Get(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// sum adds x up over the ranks.
func sum(t *testing.T, c *comm.Comm, x ...float64) []float64 {
	t.Helper()
	s, err := ddmat.Sum(c, x...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRigidModesSolved: B solves A v = b exactly for every v in the coarse
// space, here the six rigid-body modes of the whole body, all six as one
// block (B A v = v, whatever the one-level M); B is symmetric and positive
// definite, also after Refresh. On 1 and 3 ranks, and with boxes so small
// that some hold one node, whose rotations are dropped as dependent on its
// translations.
func TestRigidModesSolved(t *testing.T) {
	for _, np := range []int{1, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			be := cpu.New(1)
			defer be.Close()
			s := newSystem(t, c, be, "elasticity:4:1e3:0.3")
			for _, boxes := range []int{2, 5} {
				B := s.newB(t, boxes)
				if info := B.Info(); boxes == 5 && info.Dropped == 0 {
					t.Errorf("%d boxes: no mode dropped, want the rotations of the one-node boxes", boxes)
				}
				s.check(t, c, B)
				if err := B.Refresh(s.op); err != nil {
					t.Fatal(err)
				}
				s.check(t, c, B)
				B.Free()
			}
		})
	}
}

// check verifies that B A v = v for the rigid-body modes v and that B is
// symmetric positive definite.
func (s system) check(t *testing.T, c *comm.Comm, B *twolevel.Preconditioner) {
	t.Helper()
	be := s.op.Backend()
	boxes := B.Info().Boxes
	v := s.rigid()
	got := apply(t, c, be, B, s.times(t, c, v, 6), 6)
	var errs, norms [6]float64
	for i, x := range v {
		errs[i%6] += (got[i] - x) * (got[i] - x)
		norms[i%6] += x * x
	}
	all := sum(t, c, append(errs[:], norms[:]...)...)
	for m := 0; m < 6; m++ {
		if e := math.Sqrt(all[m] / all[6+m]); !(e < 1e-9) {
			t.Errorf("%d boxes: rigid mode %d: ||B A v - v||/||v|| = %.3g", boxes, m, e)
		}
	}
	x := random(c, 2*len(s.coords)/3)
	bx := apply(t, c, be, B, x, 2)
	var xby, ybx, xbx float64
	for i := 0; i < len(x); i += 2 {
		xby += x[i] * bx[i+1]
		ybx += x[i+1] * bx[i]
		xbx += x[i] * bx[i]
	}
	d := sum(t, c, xby, ybx, xbx)
	if math.Abs(d[0]-d[1]) > 1e-12*math.Abs(d[2]) || !(d[2] > 0) {
		t.Errorf("%d boxes: x'By %.17g, y'Bx %.17g, x'Bx %g: want symmetric positive definite", boxes, d[0], d[1], d[2])
	}
}

// random returns n values in [-0.5, 0.5), drawn per rank.
func random(c *comm.Comm, n int) []float64 {
	rng := rand.New(rand.NewPCG(uint64(c.Rank()), 7))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.Float64() - 0.5
	}
	return x
}

// TestBadGeometry: a geometry of the wrong length or block size is refused
// on every rank with an error that names it.
func TestBadGeometry(t *testing.T) {
	mpitest.Run(t, 2, func(t *testing.T, c *comm.Comm) {
		be := cpu.New(1)
		defer be.Close()
		s := newSystem(t, c, be, "elasticity:2")
		for _, tc := range []struct {
			g    twolevel.Geometry
			want string
		}{
			{twolevel.Geometry{Coords: s.coords[:3], BlockSize: 3}, "coordinates for"},
			{twolevel.Geometry{Coords: s.coords, BlockSize: 2}, "block size 2"},
		} {
			_, err := twolevel.New(s.op, precond.None{}, tc.g, twolevel.Params{})
			if err == nil {
				t.Fatalf("%+v: no error", tc.g.BlockSize)
			}
			if c.Rank() == 0 && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		}
	})
}
