// Package twolevel adds a coarse space to a symmetric positive definite
// preconditioner M: the balancing (Neumann-Neumann) two-level preconditioner
//
//	B = P' M P + Q,  Q = Z E^-1 Z',  E = Z' A Z,  P = I - A Q,
//
// of Mandel's balancing domain decomposition, BNN in the comparison of
// deflation and two-level methods by Tang, Nabben, Vuik and Erlangga. Its
// coarse space Z holds, in each box of a grid laid over the nodes'
// coordinates, the rigid-body modes of linear elasticity (three
// translations and three rotations) for three unknowns per node, or the
// constant for one (Geometry). A local preconditioner (FSAI, Jacobi) leaves
// the smooth, global part of an elasticity problem's error (bending, layers
// sliding on each other) to the Krylov method, which pays for it with
// iterations that grow with the problem's diameter; B solves that part
// exactly on the span of Z. B is symmetric positive definite when M is, so
// CG takes it as it is.
//
// The coarse matrix E has six rows per box and is small (Params.Boxes): it
// is summed on every rank, inverted there once, and each rank keeps the
// rows of E^-1 its own rows touch. An application is M's plus products with
// the thin blocks Z and A Z, their transposes (transposed) and those rows of
// E^-1, all on the backend, and two Allreduces of the coarse vector.
package twolevel

import (
	"fmt"
	"time"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/krylov"
)

// Geometry places the rank's rows in space, for the coarse space: Coords
// holds x, y and z of the node of each local row (three values a row, the
// same for the rows of one node), and BlockSize is the unknowns per node,
// numbered node by node: 3 for displacements (row i is component i mod 3),
// whose coarse space is the rigid-body modes, or 1 for a scalar field,
// whose coarse space is the constant.
type Geometry struct {
	Coords    []float64
	BlockSize int
}

// Check verifies a geometry for rows local rows.
func (g Geometry) Check(rows int) error {
	if g.BlockSize != 1 && g.BlockSize != 3 {
		return fmt.Errorf("twolevel: block size %d: the coarse space knows 1 (a scalar field) and 3 (displacements)", g.BlockSize)
	}
	if len(g.Coords) != 3*rows {
		return fmt.Errorf("twolevel: %d coordinates for %d rows: need 3 a row", len(g.Coords), rows)
	}
	return nil
}

// Params are the coarse grid.
type Params struct {
	// Boxes is the number of boxes along each axis of the nodes' bounding
	// box; 0 chooses it from the problem's size (AutoBoxes).
	Boxes int
}

// MaxBoxes is the most boxes along an axis AutoBoxes takes: 216 boxes,
// 1296 coarse unknowns for elasticity, whose inverse every rank computes
// once (0.3 s) and applies twice an iteration.
const MaxBoxes = 6

// NodesPerBox is the fewest nodes a box holds under AutoBoxes, about six
// along each axis.
const NodesPerBox = 216

// AutoBoxes is the boxes along each axis for a problem of nodes nodes:
// as many as hold NodesPerBox nodes each, at least 1 and at most MaxBoxes.
func AutoBoxes(nodes int64) int {
	b := 1
	for b < MaxBoxes && int64(b+1)*int64(b+1)*int64(b+1)*NodesPerBox <= nodes {
		b++
	}
	return b
}

// Info describes a coarse space once set up.
type Info struct {
	Boxes   int     `json:"boxes"`   // along each axis
	Size    int     `json:"size"`    // coarse unknowns: columns of Z kept
	Dropped int     `json:"dropped"` // modes dropped as dependent within their box
	SetupS  float64 `json:"setup_s"` // seconds to build Z, A Z and E^-1, M's set-up excluded
}

// Preconditioner is M with the coarse correction (the package doc).
type Preconditioner struct {
	inner krylov.Preconditioner
	be    backend.Backend
	c     *comm.Comm
	n     int // local rows
	space *space

	z, negAZ   backend.Matrix // n x len(near): Z and -A Z on the coarse unknowns near the rank
	zt, negAZt transposed     // Z' and -(A Z)', rows mapped to the coarse numbering
	einv       backend.Matrix // the rows of E^-1 of the coarse unknowns near the rank

	work map[int]*work // per column count
	info Info
}

// work is an application's scratch for k columns.
type work struct {
	t      *ddmat.Dense   // r - A Q r
	w, c   backend.Vector // coarse vectors: size x k and len(near) x k
	part   backend.Vector // the slab rows of a transposed product
	wh, wr []float64      // host copies: the sum in flight, Z'r summed
}

// New sets up B around the set-up preconditioner inner for the operator op
// (A, which must hold its diagonal block on the host) and the rows'
// geometry. B owns inner once made (Free frees both); on an error the
// caller keeps it. Collective.
func New(op *dsmat.Operator, inner krylov.Preconditioner, g Geometry, p Params) (*Preconditioner, error) {
	start := time.Now()
	A := op.Matrix()
	var err error
	switch {
	case A.Diag == nil:
		err = fmt.Errorf("twolevel: A's diagonal block is not on the host")
	case p.Boxes < 0:
		err = fmt.Errorf("twolevel: %d boxes", p.Boxes)
	default:
		err = g.Check(A.LocalRows())
	}
	if err := A.Comm.Agree(err); err != nil {
		return nil, err
	}
	if p.Boxes == 0 {
		p.Boxes = AutoBoxes(A.N() / int64(g.BlockSize))
	}
	s, err := newSpace(A, g, p.Boxes)
	if err != nil {
		return nil, err
	}
	b := &Preconditioner{inner: inner, be: op.Backend(), c: A.Comm, n: A.LocalRows(), space: s, work: map[int]*work{},
		info: Info{Boxes: p.Boxes, Size: s.size, Dropped: s.dropped}}
	if err := b.assemble(A); err != nil {
		return nil, err
	}
	b.info.SetupS = time.Since(start).Seconds()
	return b, nil
}

// Refresh recomputes A Z and E^-1 for A's current values (the pattern and
// the geometry unchanged), after M has been updated for them. Collective.
func (b *Preconditioner) Refresh(op *dsmat.Operator) error {
	start := time.Now()
	b.freeBlocks()
	b.freeWork() // sized for the blocks just freed
	if err := b.assemble(op.Matrix()); err != nil {
		return err
	}
	b.info.SetupS = time.Since(start).Seconds()
	return nil
}

// assemble computes A Z and E^-1 and puts the blocks on the backend.
// Collective.
func (b *Preconditioner) assemble(A *dsmat.Matrix) error {
	az := b.space.timesA(A)
	near, e, err := b.space.coarseMatrix(A.Comm, az)
	var inv []float64
	if err == nil {
		err = b.upload(az, near)
	}
	if err == nil {
		inv, err = inverse(e, b.space.size, near)
	}
	if err == nil {
		err = b.uploadInverse(near, inv)
	}
	if err := A.Comm.Agree(err); err != nil {
		b.freeBlocks()
		return err
	}
	return nil
}

// Name is M's name with the coarse space.
func (b *Preconditioner) Name() string { return b.inner.Name() + "+coarse" }

// Inner is M.
func (b *Preconditioner) Inner() krylov.Preconditioner { return b.inner }

// Info describes the coarse space.
func (b *Preconditioner) Info() Info { return b.info }

// Apply sets z = B r for blocks of any number of columns. Collective.
func (b *Preconditioner) Apply(z, r *ddmat.Dense) error {
	k := r.Cols
	w, err := b.scratch(k)
	if err != nil {
		return err
	}
	be := b.be
	// w = Z'r over all ranks; t = r - A E^-1 w.
	be.Fill(w.w, 0)
	b.zt.apply(be, w.w, w.part, r.V, k)
	if err := b.sum(w, w.wr); err != nil {
		return err
	}
	be.Upload(w.w, w.wr)
	be.SpMM(w.c, b.einv, w.w, k, 0)
	be.Copy(w.t.V, r.V)
	be.SpMM(w.t.V, b.negAZ, w.c, k, 1)
	// u = M t, in z.
	if err := b.inner.Apply(z, w.t); err != nil {
		return err
	}
	// z = u + Z E^-1 (Z'r - (A Z)'u).
	be.Fill(w.w, 0)
	b.negAZt.apply(be, w.w, w.part, z.V, k)
	if err := b.sum(w, w.wh); err != nil {
		return err
	}
	for i, v := range w.wr {
		w.wh[i] += v
	}
	be.Upload(w.w, w.wh)
	be.SpMM(w.c, b.einv, w.w, k, 0)
	be.SpMM(z.V, b.z, w.c, k, 1)
	return be.Err()
}

// sum downloads the coarse vector w.w into out and adds it up over the
// ranks.
func (b *Preconditioner) sum(w *work, out []float64) error {
	if err := b.be.Download(out, w.w); err != nil {
		return err
	}
	if err := comm.Allreduce(b.c, comm.Sum, out); err != nil {
		return fmt.Errorf("twolevel: allreduce: %w", err)
	}
	return nil
}

// scratch returns the work space for k columns, made on first use.
func (b *Preconditioner) scratch(k int) (*work, error) {
	if w, ok := b.work[k]; ok {
		return w, nil
	}
	t, err := ddmat.New(b.c, b.be, b.n, k)
	if err != nil {
		return nil, err
	}
	w := &work{t: t, wh: make([]float64, b.space.size*k), wr: make([]float64, b.space.size*k)}
	if w.w, err = b.be.NewVector(b.space.size * k); err == nil {
		w.c, err = b.be.NewVector(b.z.Cols() * k)
	}
	if err == nil {
		w.part, err = b.be.NewVector(max(b.zt.rows(), b.negAZt.rows()) * k)
	}
	if err != nil {
		w.free()
		return nil, fmt.Errorf("twolevel: coarse vectors: %w", err)
	}
	b.work[k] = w
	return w, nil
}

func (w *work) free() {
	w.t.Free()
	for _, v := range []backend.Vector{w.w, w.c, w.part} {
		if v != nil {
			v.Free()
		}
	}
}

// Free releases B's memory and M's.
func (b *Preconditioner) Free() {
	b.freeBlocks()
	b.freeWork()
	b.inner.Free()
}

// freeWork releases the applications' scratch.
func (b *Preconditioner) freeWork() {
	for k, w := range b.work {
		w.free()
		delete(b.work, k)
	}
}

// freeBlocks releases the blocks on the backend.
func (b *Preconditioner) freeBlocks() {
	for _, m := range []*backend.Matrix{&b.z, &b.negAZ, &b.einv} {
		if *m != nil {
			(*m).Free()
			*m = nil
		}
	}
	for _, t := range []*transposed{&b.zt, &b.negAZt} {
		t.free()
		*t = transposed{}
	}
}
