// Package spai is the static sparse approximate inverse preconditioner of
// paper 002 (HybridSPAI): M ~ A^-1 on a sparsity pattern fixed a priori,
// every row of M the solution of a small dense least-squares problem,
// distributed by rows as A is, and applied as one SpMV.
//
// # The pattern
//
// Entry (i,j) of A is kept in A~ when |a_ij| > (1 - Tau) max_j |a_ij|, the
// largest magnitude of row i (the paper's eq. 3; the diagonal is always
// kept). M has the pattern of A~^K: row i of M holds the columns reachable
// from i in at most K steps of the graph of A~.
//
// # Rows of a left inverse
//
// The paper computes M column by column, min ||A M - I||_F, each column m_j
// from the columns of A it touches. Here M minimizes ||M A - I||_F row by
// row instead: row m_i of M, on its pattern J, solves
//
//	min || A(J,I)' m_i(J) - e_i(I) ||_2,
//
// I the columns where the rows J of A hold entries. That reads rows of A,
// which is how A is distributed (dsmat: each rank owns a stripe of rows):
// a rank computes exactly the rows of M it owns, from its own rows of A and
// those of its neighbours' rows that the patterns of its rows name (within
// K hops of its rows), and M stays in the stripe layout the SpMV needs,
// with no transposition and no second exchange. The columns of M, as the
// paper computes them, would need the columns of A (rows of A', which a
// rank holds none of) and produce columns of M, which another transpose
// would redistribute.
//
// BiCGSTAB and GMRES here are right preconditioned: they iterate on A M
// and form x = M u. M from the left problem serves there unchanged: A M =
// A (M A) A^-1 is similar to M A, so the preconditioned operator has the
// spectrum M A was fitted to bring near 1; where M A = I exactly, A M = I
// too. For a matrix with a symmetric pattern the two fits differ only in
// values; for a nonsymmetric one the row fit is the one the row layout
// computes without moving A's columns.
//
// M is not symmetric, so CG cannot use it (package solver refuses the
// pair).
//
// # The row computation
//
// For each own row i, the host builds J (the K-step search in A~), I
// (the union of the rows J's columns), gathers the dense block A(J,I)'
// (|I| x |J|, column-major), factors it by Householder QR, applies the
// reflections to e_i and back-substitutes, in float64, on all cores
// (internal/parallel). A Device may compute the same rows instead
// (Config.Device), declining with ErrDeviceUnsupported; a DiagonalDevice
// leaves M's diagonal block where it computed it, and New binds it there.
package spai

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

// Params are the a priori pattern of M.
type Params struct {
	// Tau keeps off-diagonal entry (i,j) of A in A~ when |a_ij| > (1 - Tau)
	// max_j |a_ij|; in [0,1]: 0 keeps the diagonal alone, 1 every nonzero.
	Tau float64
	// K is the power: M has the pattern of A~^K (K >= 1).
	K int
}

// DefaultParams are Tau 0.9 and K 1: the entries of at least a tenth of
// their row's largest magnitude, on the pattern of A~ itself. The paper
// leaves tau to the user and gives no value; a tenth is ParaSails' default
// threshold (0.1 of the scaled entries) in the row-relative form.
func DefaultParams() Params { return Params{Tau: 0.9, K: 1} }

// MaxK is the largest power K takes: each step of K multiplies the rows a
// rank collects and the size of the least-squares blocks.
const MaxK = 4

// Check refuses a Tau outside [0,1] and a K outside [1, MaxK].
func (p Params) Check() error {
	if !(p.Tau >= 0 && p.Tau <= 1) {
		return fmt.Errorf("spai: tau %g is not in [0,1]", p.Tau)
	}
	if p.K < 1 || p.K > MaxK {
		return fmt.Errorf("spai: power k %d is not in [1,%d]", p.K, MaxK)
	}
	return nil
}

// Config selects the pattern and where the rows of M are computed.
type Config struct {
	Params
	// Device computes the rows of M on the backend's device; nil computes
	// them on the host.
	Device Device
}

// Device computes the rows of M on an accelerator, as afsai.Device does
// the rows of an FSAI factor: from a rank's local system (its own rows of
// A and the rows it collected), the rank's stripe of M in global columns,
// the same rows as the host computes (Rows). A device that cannot compute
// them returns ErrDeviceUnsupported and the host computes.
type Device interface {
	Name() string
	Rows(l *Local, p Params) (*dsmat.Rows, Stats, error)
}

// DiagonalDevice is a Device that can leave the rows of M where it
// computed them: New then binds M's diagonal block, most of M, from the
// device's memory as it is, and downloads and uploads only the entries in
// other ranks' columns, instead of M's values coming back to the host
// and going to the backend again. The device must be the backend's.
type DiagonalDevice interface {
	Device
	// SplitRows computes the rows Rows computes, split at the rank's own
	// columns.
	SplitRows(l *Local, p Params) (*SplitRows, Stats, error)
}

// SplitRows are a rank's rows of M split as a DiagonalDevice leaves them:
// the diagonal block (the entries in the rank's own columns, numbered from
// its first row) on the backend, and the other entries on the host.
type SplitRows struct {
	Diag backend.Matrix
	// Off holds the entries in other ranks' columns of the own rows that
	// Rows lists (ascending; Off's row k is own row Rows[k]); its columns
	// index Held, the global indices of the rows the local system
	// collected (Local.HeldRows).
	Off  *csr.Matrix[float64]
	Rows []int32
	Held []int64
}

// ErrDeviceUnsupported is a Device's answer to a system it cannot compute.
var ErrDeviceUnsupported = errors.New("spai: not supported on this device")

// Info describes a computed SPAI preconditioner, summed or maximized over
// ranks. Its JSON names share those of afsai.Info where they mean the same.
type Info struct {
	NNZ     int64   `json:"nnz"`     // nonzeros of M
	Density float64 `json:"density"` // nnz(M)/nnz(A)
	// MaxBlockRows x MaxBlockCols is the largest least-squares block,
	// |I| x |J|, over ranks (the one with the most entries)
	MaxBlockRows int `json:"max_block_rows"`
	MaxBlockCols int `json:"max_block_cols"`
	// Batches is the most batches a rank's Device solved its rows in (the
	// batches are sized to the device's free memory); 0 on the host
	Batches int `json:"batches"`
	// CollectedRows is how many rows of other ranks the ranks collected,
	// summed.
	CollectedRows int64 `json:"collected_rows"`
	// GatherS, ComputeS, UploadS are the slowest rank's seconds collecting
	// the neighbours' rows, computing the rows of M and binding M.
	GatherS  float64 `json:"gather_s"`
	ComputeS float64 `json:"compute_s"`
	UploadS  float64 `json:"upload_s"`
	// the parts of those seconds, each the slowest rank's
	Stages
	// SetupDevice is where M was computed: "cpu", or a Device's name.
	SetupDevice string  `json:"setup_device"`
	Tau         float64 `json:"tau"`
	K           int     `json:"k"`
}

// Stages are the seconds of the parts of a rank's set-up: of gather_s,
// of compute_s on a Device (zero on the host, which computes each row in
// one pass) and of upload_s.
type Stages struct {
	// of gather_s: the rank's own rows of A copied into the local system
	// in global columns, and their checks and largest magnitudes; the rest
	// is the collection of other ranks' rows. Where a Device reads A's
	// diagonal block where it lies (Local.Bound), the checks read A's
	// blocks and the copy is made only where the host still needs it (the
	// patterns at k > 1, or the rows where the Device declines), within
	// compute_s
	OwnS   float64 `json:"own_s"`
	CheckS float64 `json:"check_s"`
	// of compute_s on a Device: the patterns of the rows of M, the local
	// system's translation for the device (of the border alone where the
	// device joins it with A's diagonal block), the copies to the device
	// (with that join), the
	// blocks' counting and the choice of their workspaces, the kernels
	// that solve them (timed to the device's end), the copies back and the
	// host's checks and assembly
	PatternS    float64 `json:"pattern_s"`
	SystemS     float64 `json:"system_s"`
	ToDeviceS   float64 `json:"to_device_s"`
	CountS      float64 `json:"count_s"`
	KernelS     float64 `json:"kernel_s"`
	FromDeviceS float64 `json:"from_device_s"`
	AssembleS   float64 `json:"assemble_s"`
	// of upload_s: M split into its diagonal and off-diagonal blocks with
	// its halo plan, and the blocks bound to the backend
	SplitS float64 `json:"split_s"`
	BindS  float64 `json:"bind_s"`
}

// fields lists the stages' seconds, for the reductions over ranks.
func (s *Stages) fields() []*float64 {
	return []*float64{&s.OwnS, &s.CheckS, &s.PatternS, &s.SystemS, &s.ToDeviceS, &s.CountS, &s.KernelS,
		&s.FromDeviceS, &s.AssembleS, &s.SplitS, &s.BindS}
}

// Stats are one rank's figures of its row computation.
type Stats struct {
	// the largest block |I| x |J| of the rank's rows
	MaxBlockRows, MaxBlockCols int
	// Batches is how many batches a Device solved the rows in (0 on the
	// host, which solves each row where it gathers it)
	Batches int
	// Stages are a Device's seconds of the parts of compute_s
	Stages Stages
}

// Max returns the stats of the larger block, s's or o's, and s's batches
// and stages.
func (s Stats) Max(o Stats) Stats {
	if o.MaxBlockRows*o.MaxBlockCols > s.MaxBlockRows*s.MaxBlockCols {
		s.MaxBlockRows, s.MaxBlockCols = o.MaxBlockRows, o.MaxBlockCols
	}
	return s
}

// Preconditioner is M ~ A^-1, distributed by rows as A; Apply is z = M r,
// one overlapped SpMV.
type Preconditioner struct {
	M    *dsmat.Operator
	Info Info
}

// New computes the SPAI of the distributed matrix A and binds M to be.
// Collective: each rank collects the rows of other ranks within K hops of
// its rows in the graph of A~, then computes its rows of M alone.
func New(A *dsmat.Matrix, be backend.Backend, cfg Config) (*Preconditioner, error) {
	return newOn(A, be, nil, cfg)
}

// NewFor is New for the matrix of op, on op's backend. Where op holds A's
// values exactly, a Device may read A's diagonal block where op holds it
// (Local.Bound) instead of the host copying the own rows into global
// columns and uploading them: the block is most of a rank's local system.
func NewFor(op *dsmat.Operator, cfg Config) (*Preconditioner, error) {
	return newOn(op.Matrix(), op.Backend(), op.ExactDiagonalBlock(), cfg)
}

// newOn is New, with bound A's diagonal block on be when the caller has it
// there (NewFor), or nil.
func newOn(A *dsmat.Matrix, be backend.Backend, bound backend.Matrix, cfg Config) (*Preconditioner, error) {
	c := A.Comm
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	info := Info{SetupDevice: "cpu", Tau: cfg.Tau, K: cfg.K}
	t := time.Now()
	var gather Stages
	blocksOnly := cfg.Device != nil && bound != nil
	l, err := collect(A, cfg.Params, &gather, blocksOnly)
	if err := c.Agree(err); err != nil {
		return nil, err
	}
	if blocksOnly {
		l.Bound = bound
	}
	info.GatherS = time.Since(t).Seconds()

	t = time.Now()
	out, st, err := computeOn(l, cfg, &info)
	if err := c.Agree(err); err != nil {
		out.free()
		return nil, err
	}
	info.ComputeS = time.Since(t).Seconds()
	info.Stages = st.Stages
	info.OwnS, info.CheckS = gather.OwnS+l.ownS, gather.CheckS

	t = time.Now()
	Mm, err := out.matrix(c, A.Part)
	if err != nil {
		out.free()
		return nil, err
	}
	info.SplitS = time.Since(t).Seconds()
	op, err := out.bind(Mm, be)
	if err != nil {
		return nil, fmt.Errorf("spai: M: %w", err)
	}
	info.UploadS = time.Since(t).Seconds()
	info.BindS = info.UploadS - info.SplitS
	p := &Preconditioner{M: op}
	if err := info.reduce(c, Mm, A, st, int64(len(l.HeldRows))); err != nil {
		p.Free()
		return nil, err
	}
	p.Info = info
	return p, nil
}

// computed are a rank's rows of M: on the host (rows), or split with the
// diagonal block on the device (split).
type computed struct {
	rows  *dsmat.Rows
	split *SplitRows
}

// computeOn computes the rank's rows of M on cfg.Device, or on the host
// where there is none or it declines.
func computeOn(l *Local, cfg Config, info *Info) (computed, Stats, error) {
	if dd, ok := cfg.Device.(DiagonalDevice); ok {
		split, st, err := dd.SplitRows(l, cfg.Params)
		if !errors.Is(err, ErrDeviceUnsupported) {
			info.SetupDevice = cfg.Device.Name()
			return computed{split: split}, st, err
		}
	} else if cfg.Device != nil {
		rows, st, err := cfg.Device.Rows(l, cfg.Params)
		if !errors.Is(err, ErrDeviceUnsupported) {
			info.SetupDevice = cfg.Device.Name()
			return computed{rows: rows}, st, err
		}
	}
	rows, st, err := Rows(l, cfg.Params)
	return computed{rows: rows}, st, err
}

// matrix makes the distributed matrix of the rows; a split one has no
// Diag (dsmat.NewLocalOffDiagonal). Collective: the ranks agree on the
// outcome whichever way each computed its rows.
func (m computed) matrix(c *comm.Comm, part dsmat.Partition) (*dsmat.Matrix, error) {
	if s := m.split; s != nil {
		return dsmat.NewLocalOffDiagonal(c, part, s.Off, s.Rows, s.Held, s.Diag.NNZ())
	}
	return dsmat.New(c, part, m.rows)
}

// bind binds M to be, a split M with its diagonal block as the device
// left it, which the operator takes. Collective.
func (m computed) bind(M *dsmat.Matrix, be backend.Backend) (*dsmat.Operator, error) {
	if s := m.split; s != nil {
		return M.BindDiagonal(be, s.Diag, backend.Double)
	}
	return M.Bind(be, backend.Double)
}

// free releases the device's diagonal block of rows that are not bound.
func (m computed) free() {
	if m.split != nil && m.split.Diag != nil {
		m.split.Diag.Free()
	}
}

// reduce completes the figures that need every rank.
func (info *Info) reduce(c *comm.Comm, M, A *dsmat.Matrix, st Stats, held int64) error {
	held, err := comm.AllreduceScalar(c, comm.Sum, held)
	if err != nil {
		return err
	}
	// the largest block: its entries first, so that the maximum picks it
	secs := append([]*float64{&info.GatherS, &info.ComputeS, &info.UploadS}, info.Stages.fields()...)
	size := []float64{float64(st.MaxBlockRows) * float64(st.MaxBlockCols)}
	for _, s := range secs {
		size = append(size, *s)
	}
	if err := comm.Allreduce(c, comm.Max, size); err != nil {
		return err
	}
	for k, s := range secs {
		*s = size[k+1]
	}
	block := []int64{0, 0, int64(st.Batches)}
	if float64(st.MaxBlockRows)*float64(st.MaxBlockCols) == size[0] {
		block[0], block[1] = int64(st.MaxBlockRows), int64(st.MaxBlockCols)
	}
	if err := comm.Allreduce(c, comm.Max, block); err != nil {
		return err
	}
	info.NNZ = M.NNZ()
	info.Density = float64(M.NNZ()) / math.Max(1, float64(A.NNZ()))
	info.MaxBlockRows, info.MaxBlockCols, info.Batches = int(block[0]), int(block[1]), int(block[2])
	info.CollectedRows = held
	return nil
}

// Name is "spai".
func (p *Preconditioner) Name() string { return "spai" }

// Apply computes z = M r for every column of r at once.
func (p *Preconditioner) Apply(z, r *ddmat.Dense) error {
	return p.M.ApplyBlock(z.V, r.V, r.Cols)
}

// ApplyBytes is what one application to k columns must move on this rank:
// one product with M (dsmat.Operator.ProductBytes).
func (p *Preconditioner) ApplyBytes(k int) int64 { return p.M.ProductBytes(k) }

// Free releases M's device memory.
func (p *Preconditioner) Free() {
	if p.M != nil {
		p.M.Free()
	}
}
