package afsai

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
)

// Config selects the FSAI preconditioner and how it is computed and applied.
type Config struct {
	// Static selects static FSAI (StaticParams) instead of the adaptive one
	// (Params).
	Static       bool
	Params       Params
	StaticParams StaticParams
	// Power is k in Low(Â^k), the block graph G may reach (1 to 3). The
	// static FSAI with power K needs K too; the larger of the two is used.
	Power int
	// Setup is the precision of the set-up: Single casts A to float32 (the
	// blueprint's default), Double keeps float64.
	Setup backend.Precision
	// Apply is the precision G and G' keep for PCG: Single rounds them to
	// float32 (half their memory traffic, float64 vectors); Double keeps
	// their values, stored in float32 when they are float32 numbers
	// already (a single-precision set-up's: exact, and as fast as Single;
	// see dsmat.Matrix.Bind) unless Wide.
	Apply backend.Precision
	// Wide stores G and G' in float64 under Apply Double even when float32
	// would hold them exactly: what the storage costs is measured so.
	Wide bool
	// Reach, when positive, limits the block collection to the neighbours'
	// rows within Reach hops of the rank's rows, below what the set-up can
	// look at (Steps+1 hops for the adaptive set-up, K for the static one:
	// the default, which gives the G of whole stripes). The collection moves
	// and assembles less, and it dominates the set-up on many GPUs; G
	// changes only in rows near the stripe's start, whose set-up sees less
	// of A past it (it stays an FSAI factor of a principal part of A).
	Reach int
	// Device is the row computation on the device of the backend that New
	// and the Updater run on; nil sets up on the CPU. Package solver
	// supplies it for the backends it opens.
	Device Device
}

// DefaultConfig is the adaptive FSAI with DefaultParams, power 2, single
// precision set-up and double precision application.
func DefaultConfig() Config {
	return Config{Params: DefaultParams(), StaticParams: StaticParams{Tau: 0.01, K: 2, Delta: 0.01},
		Power: 2, Setup: backend.Single, Apply: backend.Double}
}

// Info describes a computed preconditioner, summed or maximized over ranks.
type Info struct {
	NNZ          int64   `json:"nnz"`           // nonzeros of G
	Density      float64 `json:"density"`       // nnz(G)/nnz(A)
	FallbackRows int64   `json:"fallback_rows"` // rows whose dense solve broke down and were shortened
	MaxPattern   int     `json:"max_pattern"`   // largest dense system solved
	Dropped      int64   `json:"dropped"`       // entries static FSAI's post-filter removed
	// PeakRatio is the largest, over ranks, ratio of the memory the block
	// collection held at once to the assembled local matrix.
	PeakRatio float64 `json:"peak_memory_ratio"`
	// Reach is how many hops from its rows a rank collected A's rows
	// (the last collection's), Collections how many collections it took:
	// an exact adaptive set-up starts near and goes further only where a
	// row needs it (collectFactor).
	Reach       int `json:"reach"`
	Collections int `json:"collections"`
	// GatherS to UploadS are the slowest rank's seconds per stage, summed
	// over collections. On a device that computes most rows during the
	// first collection (EarlyRows), gather_s and compute_s overlap:
	// compute_s leaves out the time the set-up waited for the collection.
	GatherS    float64 `json:"gather_s"`
	ComputeS   float64 `json:"compute_s"`
	TransposeS float64 `json:"transpose_s"`
	UploadS    float64 `json:"upload_s"`
	// EarlyRows is how many rows of G the device computed from A's
	// diagonal blocks while the first collection ran (Device.StartRows).
	EarlyRows int64 `json:"early_rows"`
	// this rank's (rank 0's in the report) local system
	LocalRows int `json:"local_rows"`
	LocalNNZ  int `json:"local_nnz"`
	// SetupDevice is where G was computed: "cpu", or the name of a Device
	// backend ("cuda"); SetupKernels are then its stage times.
	SetupDevice  string       `json:"setup_device"`
	SetupKernels *KernelTimes `json:"setup_kernels,omitempty"`
	// the precisions of the set-up and of G and G' during PCG ("single"
	// application is mixed precision: float32 values, float64 vectors)
	SetupPrecision string `json:"setup_precision"`
	ApplyPrecision string `json:"apply_precision"`
	// ApplyStorage is how G's values are stored: "single" when every rank
	// stores them in float32, also for a double application of float32
	// numbers (exact; Config.Apply), else "double".
	ApplyStorage string `json:"apply_storage"`
	// Scaled: A's diagonal left [2^-40, 2^40], and G was set up on
	// D^-1/2 A D^-1/2, D = diag(A) (unit diagonal); the preconditioner
	// applies D^-1/2 G' G D^-1/2 (newScaled).
	Scaled bool `json:"scaled"`
}

// Preconditioner is M^{-1} = G'G with G the distributed FSAI factor; Apply
// computes z = G'(G r) with two distributed SpMVs.
type Preconditioner struct {
	name  string
	G, Gt *dsmat.Operator
	tmp   backend.Vector // G r
	// scale is diag(A)^-1/2 when G was set up on the scaled matrix
	// (newScaled), else nil
	scale backend.Vector
	Info  Info
}

// New computes the FSAI factor of the distributed SPD matrix A and binds G
// and G' to be. Collective: ranks gather the rows of A within their set-up's
// reach from their left neighbours, then compute their stripes of G
// independently.
func New(A *dsmat.Matrix, be backend.Backend, cfg Config) (*Preconditioner, error) {
	return newOn(A, be, nil, cfg)
}

// NewFor is New for the matrix of op, on op's backend. A set-up on the
// device (Device) reads A's diagonal block where op holds it instead of
// uploading it again: it is most of a rank's local system.
func NewFor(op *dsmat.Operator, cfg Config) (*Preconditioner, error) {
	return newOn(op.Matrix(), op.Backend(), op.DiagonalBlock(), cfg)
}

// newOn is New, with bound A's diagonal block on be when the caller has it
// there (NewFor), or nil.
func newOn(A *dsmat.Matrix, be backend.Backend, bound backend.Matrix, cfg Config) (*Preconditioner, error) {
	c := A.Comm
	s, err := diagonalScaling(A)
	if err != nil {
		return nil, err
	}
	if s != nil {
		return newScaled(A, be, s, cfg)
	}
	info := Info{SetupPrecision: cfg.Setup.String(), ApplyPrecision: cfg.Apply.String()}
	power := cfg.power()
	if power < 1 || power > 3 {
		return nil, fmt.Errorf("afsai: graph power %d: need 1, 2 or 3", power)
	}
	if cfg.Reach < 0 {
		return nil, fmt.Errorf("afsai: reach %d: need 0 (the set-up's own) or more", cfg.Reach)
	}

	p := &Preconditioner{name: "afsai"}
	if cfg.Static {
		p.name = "fsai"
	}
	// The work vector comes first: the set-up on a GPU leaves tens of GB
	// of spare memory, which an allocation after it may have to free first
	// (after a free, one took 1 to 4 ms against 0.1 to 0.3 before it,
	// measured on an H200).
	tmp, err := be.NewVector(A.LocalRows())
	if err := c.Agree(err); err != nil {
		if tmp != nil {
			tmp.Free()
		}
		return nil, fmt.Errorf("afsai: work vector: %w", err)
	}
	p.tmp = tmp

	ls, f, stats, err := collectFactor(A, be, bound, cfg, &info)
	if err != nil {
		p.Free()
		return nil, err
	}
	info.LocalRows, info.LocalNNZ = ls.size()

	t := time.Now()
	Gm, Gtm, err := factorMatrices(A, f, ls)
	if err != nil {
		f.free()
		p.Free()
		return nil, err
	}
	info.TransposeS = time.Since(t).Seconds()

	t = time.Now()
	p.G, err = bindFactor(Gm, f.diag, be, cfg)
	f.diag = nil // the operator took it
	if err == nil {
		p.Gt, err = bindFactor(Gtm, f.diagT, be, cfg)
		f.diagT = nil
	}
	f.free()
	if err := c.Agree(err); err != nil {
		p.Free()
		return nil, err
	}
	info.UploadS = time.Since(t).Seconds()

	stored, err := p.G.StoredPrecision()
	if err == nil {
		err = info.reduce(c, Gm, A, stats, ls)
	}
	if err != nil {
		p.Free()
		return nil, err
	}
	info.ApplyStorage = stored.String()
	p.Info = info
	return p, nil
}

// firstReach is the reach of the first collection of an exact adaptive
// set-up: a row's pattern of up to 40 entries (the default) on a 3D grid
// of 7-point stencils lies within 4 hops, so the rows of A it reads have
// their entries within 5.
const firstReach = 5

// collectFactor collects this rank's local system and computes its stripe of
// G. Collective. On a Device the first collection and the set-up
// overlap (earlySetup).
//
// An exact adaptive set-up (Reach 0) does not collect all it could look at
// (Steps+1 hops, 21 by default, where most rows look 2 to 4 hops away):
// it collects within firstReach hops, computes, and checks that every row
// drew only on whole rows of A (localSystem.complete). Ranks with a row
// that did not collect and compute again with twice the reach, the others
// keep their stripe and only serve; the rounds end when every stripe is
// exact, within Steps+1 hops at most. info records the reach, the
// collections and their summed stage times. bound, when not nil, is A's
// diagonal block on be, which the local systems' Split carry to a Device.
func collectFactor(A *dsmat.Matrix, be backend.Backend, bound backend.Matrix, cfg Config, info *Info) (*localSystem, stripe, Stats, error) {
	c, power, full := A.Comm, cfg.power(), cfg.reach()
	reach, final := full, true
	if cfg.Reach == 0 && !cfg.Static && full > firstReach {
		reach, final = firstReach, false
	}
	var (
		ls    *localSystem
		f     stripe
		stats Stats
		done  bool
	)
	dev := earlyDevice(cfg)
	for {
		info.Reach, info.Collections = reach, info.Collections+1
		var (
			got *localSystem
			err error
			e   early // the first collection's on a Device
		)
		t := time.Now()
		if dev != nil && info.Collections == 1 {
			e = earlySetup(A, dev, bound, cfg, reach)
			got, err = e.ls, e.gatherErr
			info.GatherS += e.gatherS
		} else {
			got, err = gatherLocal(A, power, reach, cfg.Setup, !done)
			info.GatherS += time.Since(t).Seconds()
		}
		if err := c.Agree(err); err != nil {
			e.f.free()
			f.free()
			return nil, f, stats, err
		}
		if got != nil && got.split != nil {
			got.split.Bound = bound
		}
		if !done {
			t = time.Now()
			f.free()
			ls = got
			if e.ls != nil && !errors.Is(e.err, ErrDeviceUnsupported) {
				f, stats, err = e.f, e.stats, e.err
				info.recordDevice(dev.Name(), e.kt)
				info.EarlyRows = int64(e.rows)
				info.ComputeS += e.computeS
			} else {
				f, stats, err = setupFactor(ls, cfg, info)
				info.ComputeS += time.Since(t).Seconds()
			}
			err = ls.named(err)
			done = err == nil && (final || ls.complete(f.rows))
		}
		if err := c.Agree(err); err != nil {
			f.free()
			return nil, f, stats, err
		}
		f.releaseScratch() // every rank's set-up is done
		var more int32     // 1 on a rank that computes again
		if !done {
			more = 1
		}
		if more, err = comm.AllreduceScalar(c, comm.Max, more); err != nil {
			f.free()
			return nil, f, stats, fmt.Errorf("afsai: collect rows: %w", err)
		}
		if more == 0 {
			return ls, f, stats, nil
		}
		reach = min(full, 2*reach)
		final = reach == full
	}
}

// factorMatrices makes the distributed matrices of G and G' from this rank's
// stripe f of G, in the numbering of the local system ls: G's blocks
// straight from the local numbering (f.rows' arrays become its diagonal
// block, unless a device holds that block: then f.rows holds entries in
// the received rows' columns only), then G' from them. Collective.
func factorMatrices(A *dsmat.Matrix, f stripe, ls *localSystem) (G, Gt *dsmat.Matrix, err error) {
	c := A.Comm
	if f.diag == nil {
		G, err = dsmat.NewLocal(c, A.Part, f.rows, ls.globals())
	} else {
		G, err = dsmat.NewLocalOffDiagonal(c, A.Part, f.rows, f.leftRows, ls.held, f.diag.NNZ())
	}
	if err != nil {
		return nil, nil, err
	}
	Gt, err = G.Transpose()
	if err := c.Agree(err); err != nil {
		return nil, nil, err
	}
	return G, Gt, nil
}

// power is k of the block graph Low(Â^k) that bounds G's blocks: the
// static FSAI with power K needs K too.
func (cfg Config) power() int {
	if cfg.Static {
		return max(cfg.Power, cfg.StaticParams.K)
	}
	return cfg.Power
}

// reach is how many hops from a row, in A's graph, the set-up looks: the
// static pattern is Low(Ã^K); the adaptive set-up adds, per step, columns
// adjacent to the row's pattern (the nonzeros of A times it), so after
// Steps steps it has looked at most Steps hops away, and one more is a
// margin. The block collection sends only the rows within reach.
func (cfg Config) reach() int {
	exact := cfg.Params.Steps + 1
	if cfg.Static {
		exact = cfg.StaticParams.K
	}
	if cfg.Reach > 0 {
		return min(cfg.Reach, exact)
	}
	return exact
}

// computeFactor runs the adaptive or static set-up on the local system in
// the configured precision and returns the own rows of G in float64.
func computeFactor(ls *localSystem, cfg Config) (*csr.Matrix[float64], Stats, error) {
	if cfg.Setup == backend.Single {
		g, st, err := factorRows(ls.matrix32(), ls.ownRows(), cfg)
		if err != nil {
			return nil, st, err
		}
		return csr.Convert[float64](g), st, nil
	}
	return factorRows(ls.A, ls.ownRows(), cfg)
}

func factorRows[T csr.Real](a *csr.Matrix[T], rows []int, cfg Config) (*csr.Matrix[T], Stats, error) {
	if cfg.Static {
		return Static(a, rows, cfg.StaticParams)
	}
	return Adaptive(a, rows, cfg.Params)
}

// reduce completes the figures that need every rank.
func (info *Info) reduce(c *comm.Comm, G, A *dsmat.Matrix, st Stats, ls *localSystem) error {
	sums := []int64{int64(st.FallbackRows), info.EarlyRows, st.Dropped}
	if err := comm.Allreduce(c, comm.Sum, sums); err != nil {
		return err
	}
	maxes := []float64{float64(st.MaxPattern), float64(ls.peakBytes) / math.Max(1, float64(ls.assembledBytes)),
		info.GatherS, info.ComputeS, info.TransposeS, info.UploadS}
	var kt KernelTimes // zeros where the set-up ran on the CPU
	if info.SetupKernels != nil {
		kt = *info.SetupKernels
	}
	maxes = append(maxes, kt.values()...)
	if err := comm.Allreduce(c, comm.Max, maxes); err != nil {
		return err
	}
	if info.SetupKernels != nil {
		info.SetupKernels.setValues(maxes[6:])
	}
	info.NNZ = G.NNZ()
	info.Density = float64(G.NNZ()) / float64(A.NNZ())
	info.FallbackRows, info.EarlyRows, info.Dropped = sums[0], sums[1], sums[2]
	info.MaxPattern = int(maxes[0])
	info.PeakRatio = maxes[1]
	info.GatherS, info.ComputeS, info.TransposeS, info.UploadS = maxes[2], maxes[3], maxes[4], maxes[5]
	return nil
}

// Name is "afsai" or "fsai".
func (p *Preconditioner) Name() string { return p.name }

// Apply computes z = G'(G r), for every column of r at once (z = S G'(G
// (S r)) for a G set up on S A S).
func (p *Preconditioner) Apply(z, r *ddmat.Dense) error {
	tmp, err := p.work(r.Cols)
	if err != nil {
		return err
	}
	if err := p.G.ApplyBlock(tmp, p.scaleRows(z, r).V, r.Cols); err != nil {
		return err
	}
	if err := p.Gt.ApplyBlock(z.V, tmp, r.Cols); err != nil {
		return err
	}
	p.scaleRows(z, z)
	return nil
}

// ApplyBytes is what one application to k columns must move on this rank:
// the products with G and G' (dsmat.Operator.ProductBytes), and for a G set
// up on the scaled matrix the two scalings, each reading the scaling and r
// and writing z.
func (p *Preconditioner) ApplyBytes(k int) int64 {
	n := p.G.ProductBytes(k) + p.Gt.ProductBytes(k)
	if p.scale != nil {
		n += 2 * (8*int64(p.scale.Len()) + 16*int64(p.scale.Len())*int64(k))
	}
	return n
}

// work returns the vector that holds G r for blocks of k columns,
// reallocated when k grows.
func (p *Preconditioner) work(k int) (backend.Vector, error) {
	n := p.G.Matrix().LocalRows() * k
	if p.tmp.Len() == n {
		return p.tmp, nil // no view to make on the common path
	}
	if p.tmp.Len() < n {
		v, err := p.G.Backend().NewVector(n)
		if err != nil {
			return nil, fmt.Errorf("afsai: work vector for %d columns: %w", k, err)
		}
		p.tmp.Free()
		p.tmp = v
	}
	return p.tmp.Slice(0, n), nil
}

// Free releases the device memory of G, G' and the work vector.
func (p *Preconditioner) Free() {
	if p.G != nil {
		p.G.Free()
	}
	if p.Gt != nil {
		p.Gt.Free()
	}
	if p.tmp != nil {
		p.tmp.Free()
	}
	if p.scale != nil {
		p.scale.Free()
	}
}

// bindFactor uploads a factor as cfg asks: in precision cfg.Apply, and for
// Double in float64 storage when cfg.Wide. With diag, the diagonal block
// that a Device made, it binds that block (which it takes) and uploads the
// others.
func bindFactor(g *dsmat.Matrix, diag backend.Matrix, be backend.Backend, cfg Config) (*dsmat.Operator, error) {
	switch {
	case diag != nil:
		return g.BindDiagonal(be, diag, cfg.Apply)
	case cfg.Apply == backend.Double && cfg.Wide:
		return g.BindWide(be)
	}
	return g.Bind(be, cfg.Apply)
}

// hostDiagonals reads the diagonal blocks of G and G' back from the device
// dev where the set-up left them only there (Device.AdaptiveFactor): the
// Updater moves new values through host copies of the blocks.
func (p *Preconditioner) hostDiagonals(dev Device) error {
	for _, op := range []*dsmat.Operator{p.G, p.Gt} {
		m := op.Matrix()
		if m.Diag != nil {
			continue
		}
		if dev == nil {
			return fmt.Errorf("afsai: G's diagonal block is on %s, which cannot read it back", op.Backend().Name())
		}
		d, _, err := dev.ReadMatrix(op.DiagonalBlock())
		if err == nil {
			err = m.SetDiagonal(d)
		}
		if err != nil {
			return fmt.Errorf("afsai: read G's diagonal block back: %w", err)
		}
	}
	return nil
}
