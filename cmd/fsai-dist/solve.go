package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/ddmat"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"github.com/fsai-dist/fsai-dist/krylov"
	"github.com/fsai-dist/fsai-dist/matfile"
	"github.com/fsai-dist/fsai-dist/problem"
	"github.com/fsai-dist/fsai-dist/solver"
)

// solve runs the job: load, distribute, set up, solve, write. Each stage
// ends with every rank agreeing on success, so a failure anywhere before the
// solve ends all ranks cleanly with one message; a failure inside the solve,
// where ranks wait on each other's messages, aborts the job.
func solve(c *comm.Comm, o *options, log *zap.Logger, stop *interrupt, start time.Time) (int, error) {
	rep := newReport(c, o)
	mem, err := rankMemory(c)
	if err != nil {
		return 0, err
	}
	if err := checkProblem(o); err != nil {
		return 0, err
	}
	loaded := time.Now()
	rows, part, err := load(c, o, rep, log, mem)
	if err != nil {
		return 0, badInput(err)
	}
	if rep.InputS, err = comm.AllreduceScalar(c, comm.Max, time.Since(loaded).Seconds()); err != nil {
		return 0, err
	}
	if o.matrix != "" {
		if err := checkMatrix(c, o, part, rows); err != nil {
			return 0, err
		}
	}
	if o.partition == "nnz" {
		if rows, part, err = dsmat.BalanceNNZ(c, rows); err != nil {
			return 0, err
		}
	}
	if err := checkColumns(c, o, rows.Count(), mem); err != nil {
		return 0, badInput(err)
	}
	if o.writeMatrix != "" {
		if err := matfile.WritePETSc(c, o.writeMatrix, rows); err != nil {
			return 0, err
		}
	}
	A, err := solver.NewMatrixRows(c, part, rows)
	if err != nil {
		return 0, badInput(err)
	}
	if err := setGeometry(c, o, A, part); err != nil {
		return 0, badInput(err)
	}
	rep.N, rep.NNZ = A.N(), A.NNZ()
	rep.ReadS = time.Since(start).Seconds()
	log.Info("matrix", zap.Int64("n", rep.N), zap.Int64("nnz", rep.NNZ), zap.Float64("read_s", rep.ReadS))

	opt := runOptions(o, log, stop, c.Rank())
	be, err := openBackend(c, opt, log)
	if err := c.Agree(err); err != nil {
		return 0, tag(exitBadInput, err)
	}
	defer be.Close()
	rep.Backend, rep.Device = be.Name(), be.Device()

	// The method's vectors come before the preconditioner (Bind, then
	// SetUp): a GPU set-up leaves tens of GB of spare memory, which an
	// allocation after it may have to free first.
	setup := time.Now()
	s, err := solver.Bind(A, be, opt)
	if err != nil {
		return 0, err
	}
	defer s.Free()
	op := s.Operator()
	stored, err := op.StoredPrecision()
	if err != nil {
		return 0, err
	}
	rep.MatrixValues = stored.String()
	if err := countLinks(c, op, rep); err != nil {
		return 0, err
	}
	b, x, err := vectors(c, o, s, part)
	if err != nil {
		return 0, err
	}
	rep.BindS = time.Since(setup).Seconds()
	precStart := time.Now()
	if err := c.Agree(s.SetUp()); err != nil {
		return 0, setupError(err)
	}
	if info := s.FSAIInfo(); info != nil {
		rep.PrecNNZ, rep.PrecDensity, rep.PrecInfo = info.NNZ, info.Density, info
		if info.FallbackRows > 0 {
			log.Warn("FSAI: rows whose dense factorization broke down keep a shorter pattern (prec_info.fallback_rows)",
				zap.Int64("rows", info.FallbackRows))
		}
	}
	if info := s.SPAIInfo(); info != nil {
		rep.PrecNNZ, rep.PrecDensity, rep.PrecInfo = info.NNZ, info.Density, info
	}
	rep.Coarse = s.CoarseInfo()
	rep.PrecSetupS = time.Since(precStart).Seconds()
	rep.SetupS = time.Since(setup).Seconds()
	log.Info("setup", zap.String("prec", s.Preconditioner().Name()), zap.Float64("setup_s", rep.SetupS),
		zap.Float64("bind_s", rep.BindS), zap.Float64("prec_setup_s", rep.PrecSetupS))
	if o.view && c.Rank() == 0 {
		if err := writeView(os.Stdout, rep); err != nil {
			log.Warn("-view", zap.Error(err))
		}
	}

	if o.benchSpMV > 0 {
		if err := benchSpMV(c, op, b, o.benchSpMV, rep); err != nil {
			c.Abort(exitFailure, fmt.Sprintf("fsai-dist: rank %d: spmv benchmark: %v", c.Rank(), err))
		}
		log.Info("spmv", zap.Float64("spmv_s", rep.SpMVS), zap.Float64("spmv_gbs", rep.SpMVGBs))
	}

	solveStart := time.Now()
	res, err := s.SolveVectors(b.Cols)
	if err != nil {
		c.Abort(exitFailure, fmt.Sprintf("fsai-dist: rank %d: solve: %v", c.Rank(), err))
	}
	rep.SolveS = time.Since(solveStart).Seconds()
	for k := range res {
		if res[k].Reason == krylov.Interrupted {
			res[k].Detail = "a rank received SIGTERM or SIGINT"
		}
	}
	rep.fill(res)
	peak, err := peaks(c, s.Backend())
	if err != nil {
		return 0, err
	}
	rep.setPeaks(peak)
	if opt.Log != nil {
		rep.LogMemory = peak
		if rep.Log, err = opTimes(c, opt.Log); err != nil {
			return 0, err
		}
		if c.Rank() == 0 {
			if err := writeLog(os.Stdout, rep.Log, peak); err != nil {
				log.Warn("-log", zap.Error(err))
			}
		}
	}
	log.Info("solved", zap.Int("rhs", len(res)), zap.Bool("converged", rep.Converged), zap.String("reason", rep.Reason),
		zap.Int("iterations", rep.Iterations), relres(float64(rep.RelRes)), zap.Float64("solve_s", rep.SolveS))

	if o.out != "" && allUsable(res) {
		host := make([]float64, x.Rows*x.Cols)
		err := x.Get(host)
		if err == nil {
			err = matfile.WriteVectors(c, o.out, part, host, x.Cols)
		}
		if err := c.Agree(err); err != nil {
			return 0, err
		}
	}
	rep.TotalS = time.Since(start).Seconds()
	if o.report != "" {
		var err error
		if c.Rank() == 0 {
			err = rep.write(o.report)
		}
		if err := c.Agree(err); err != nil {
			return 0, err
		}
	}
	if !rep.Converged {
		if c.Rank() == 0 {
			fmt.Fprintf(stderr, "fsai-dist: %s\n", outcomes(res, o.out))
		}
		return exitNotConverged, nil
	}
	return exitConverged, nil
}

// setupError gives a failed preconditioner set-up its exit status: 1 for a
// device failure (out of memory, say), else 3, a matrix that is not SPD.
func setupError(err error) error {
	if solver.IsDeviceError(err) {
		return err
	}
	return numerical(err)
}

// runOptions are the solver's options of the flags, with the signal flag
// as the stop hook, the log as the progress callback and -monitor's lines
// (rank 0 writes them).
func runOptions(o *options, log *zap.Logger, stop *interrupt, rank int) solver.Options {
	opt := o.solver
	opt.Stop, opt.Progress = stop.requested, progress(log, o.progressEvery)
	if o.monitor > 0 {
		w := io.Discard
		if rank == 0 {
			w = stderr
		}
		monitor(&opt, w, o.monitor)
	}
	return opt
}

// monitor has the solve write a line to w every this many iterations:
// the recurrence's relative residual and, for CG, the true one, which
// costs a product with A each time (every rank computes it).
func monitor(opt *solver.Options, w io.Writer, every int) {
	line := func(it int, rec float64, truth string) {
		fmt.Fprintf(w, "monitor %6d  recurrence %.6e  true %s\n", it, rec, truth)
	}
	if opt.Method == "cg" {
		opt.TrueEvery = every
		opt.TrueProgress = func(it int, rec, truth float64) { line(it, rec, fmt.Sprintf("%.6e", truth)) }
		return
	}
	logged := opt.Progress
	opt.Progress = func(it int, rec float64) {
		if logged != nil {
			logged(it, rec)
		}
		if it%every == 0 {
			line(it, rec, "-")
		}
	}
}

// The memory that the checks before allocating count: a stripe, generated
// or read (8-byte row pointers, 8-byte columns and values), and its
// CSR copy (4-byte columns, 8-byte values and row pointers), the entries
// of a Matrix Market file while they are collected (dsmat.Triplet: 8-byte
// row, column and value), and the blocks of right-hand sides that b, x,
// PCG's workspace and the host copies take, 8 bytes an entry.
const (
	bytesPerRow   = 16
	bytesPerEntry = 28
	tripletBytes  = 24
	blocksPerRHS  = 8
)

// load reads the matrix file or generates the built-in problem; each rank
// holds only its own stripe. Both need at least one row per rank.
func load(c *comm.Comm, o *options, rep *report, log *zap.Logger, mem memory) (*dsmat.Rows, dsmat.Partition, error) {
	if o.matrix != "" {
		rep.Matrix = o.matrix
		if err := checkMatrixFile(c, o.matrix, mem); err != nil {
			return nil, dsmat.Partition{}, err
		}
		rows, part, stats, err := matfile.ReadMatrixStats(c, o.matrix)
		if err != nil {
			return nil, part, err
		}
		if stats.Duplicates > 0 {
			log.Warn("repeated entries were summed, as the format says", zap.String("matrix", o.matrix),
				zap.Int64("entries", stats.Duplicates))
		}
		return rows, part, checkRanks(c.Size(), part.N(), "matrix "+o.matrix)
	}
	rep.Problem = o.problem
	spec, err := problem.Parse(o.problem)
	if err != nil {
		return nil, dsmat.Partition{}, c.Agree(fmt.Errorf("flag -problem: %w", err))
	}
	part := dsmat.NewPartition(spec.Rows(), c.Size())
	if err := checkRanks(c.Size(), spec.Rows(), "problem "+o.problem); err != nil {
		return nil, part, err
	}
	lo, hi := part.Range(c.Rank())
	share := float64(hi-lo) / float64(spec.Rows())
	what := fmt.Sprintf("%s has %d rows and up to %d entries", o.problem, spec.Rows(), spec.MaxNNZ())
	if err := c.Agree(mem.check("problem", what, bytesPerRow*float64(hi-lo)+bytesPerEntry*share*float64(spec.MaxNNZ()))); err != nil {
		return nil, part, err
	}
	rows, err := spec.Generate(lo, hi)
	return rows, part, c.Agree(err)
}

// setGeometry places A's rows in space for the coarse space: the
// -coordinates file's points, or a generated problem's grid points. A
// matrix file without -coordinates has none, which -coarse on refuses.
// Collective.
func setGeometry(c *comm.Comm, o *options, A *solver.Matrix, part dsmat.Partition) error {
	if o.solver.Coarse == "on" && !solver.NeedsSPD(o.solver.Method, o.solver.Prec) {
		return c.Agree(fmt.Errorf("flag -coarse on: the coarse space needs an SPD matrix, which -solver %s with -prec %s does not assume", o.solver.Method, o.solver.Prec))
	}
	if o.coordinates != "" {
		coords, k, err := matfile.ReadVectors(c, o.coordinates, part)
		if err != nil {
			return err
		}
		if k != 3 {
			return c.Agree(fmt.Errorf("flag -coordinates: %s has %d columns: need 3, the x, y and z of each row's node", o.coordinates, k))
		}
		if err := A.SetGeometry(coords, o.blockSize); err != nil {
			return fmt.Errorf("flag -coordinates: %w", err)
		}
		return nil
	}
	var coords []float64
	bs, ok := 0, false
	if o.matrix == "" {
		spec, err := problem.Parse(o.problem)
		if err != nil {
			return c.Agree(err)
		}
		lo := A.First()
		coords, bs, ok = spec.Geometry(lo, lo+int64(A.LocalRows()))
	}
	switch {
	case ok:
		return A.SetGeometry(coords, bs)
	case o.solver.Coarse == "on":
		return c.Agree(errors.New("flag -coarse on: the matrix has no geometry: give -coordinates (a -problem carries its own)"))
	}
	return nil
}

// vectors sets up the solver's right-hand sides b (read, or A*1 and A*u
// with random u, so that the exact solutions are known) and initial
// guesses x (read, or zero), a column each.
func vectors(c *comm.Comm, o *options, s *solver.Solver, part dsmat.Partition) (b, x *ddmat.Dense, err error) {
	var rhs []float64
	k := o.nrhs

	if o.rhs != "" {
		rhs, k, err = matfile.ReadVectors(c, o.rhs, part)
		if err != nil {
			return nil, nil, badInput(err)
		}
		if k > 1 && !solver.MethodSolvesBlocks(o.solver.Method) {
			return nil, nil, badInput(fmt.Errorf("-rhs %s: %d right-hand sides with -solver %s, which solves one at a time", o.rhs, k, o.solver.Method))
		}
	}
	if b, x, err = s.Vectors(k); err != nil {
		return nil, nil, err
	}
	op := s.Operator()
	if rhs != nil {
		err = b.Set(rhs)
	} else {
		err = knownSolutions(op, b, x, o.randomRHS)
	}
	if err := c.Agree(err); err != nil {
		return nil, nil, badInput(err)
	}
	if o.x0 != "" {
		err = setFromFile(c, o.x0, part, x)
	} else {
		op.Backend().Fill(x.V, 0)
	}
	if err := c.Agree(err); err != nil {
		return nil, nil, badInput(err)
	}
	return b, x, nil
}

// setFromFile reads v's columns from path, which must have as many.
func setFromFile(c *comm.Comm, path string, part dsmat.Partition, v *ddmat.Dense) error {
	host, k, err := matfile.ReadVectors(c, path, part)
	if err != nil {
		return err
	}
	if k != v.Cols {
		return fmt.Errorf("%s has %d columns for %d right-hand sides", path, k, v.Cols)
	}
	return v.Set(host)
}

// knownSolutions sets b = A*u, column 0 of u all ones and column c > 0
// random in (0,1] (problem.Uniform stream c, the same on any number of
// ranks), using x as scratch; with random, column c is stream c+1, so that
// no column is A*1 (a rigid translation of elasticity, which a coarse space
// solves in one iteration) and a lone column is -nrhs 2's second. One
// right-hand side of ones is filled on the device: made on the host, 16M
// rows took 98 ms of bind_s on each of four H200 GPUs of one node.
func knownSolutions(op *dsmat.Operator, b, x *ddmat.Dense, random bool) error {
	k := b.Cols
	if k == 1 && !random {
		op.Backend().Fill(x.V, 1)
		return op.ApplyBlock(b.V, x.V, k)
	}
	stream := uint64(0)
	if random {
		stream = 1
	}
	u := make([]float64, b.Rows*k)
	first := uint64(op.Matrix().First())
	parallel.For(b.Rows, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			for col := 0; col < k; col++ {
				u[i*k+col] = 1
				if s := uint64(col) + stream; s > 0 {
					u[i*k+col] = problem.Uniform(s, first+uint64(i))
				}
			}
		}
	})
	if err := x.Set(u); err != nil {
		return err
	}
	return op.ApplyBlock(b.V, x.V, k)
}

func progress(log *zap.Logger, every int) func(int, float64) {
	if every <= 0 {
		return nil
	}
	return func(it int, r float64) {
		if it%every == 0 {
			log.Info("pcg", zap.Int("iteration", it), relres(r))
		}
	}
}

// countLinks records how A's halos travel, summed over ranks.
func countLinks(c *comm.Comm, op *dsmat.Operator, rep *report) error {
	device, host := op.PeerLinks()
	links := []int64{int64(device), int64(host)}
	if err := comm.Allreduce(c, comm.Sum, links); err != nil {
		return err
	}
	rep.HaloDeviceLinks, rep.HaloHostLinks = links[0], links[1]
	return nil
}

// benchSpMV times k products y = A x (after one untimed product), the
// slowest rank's time counting, and reports the bandwidth of the bytes a CSR
// SpMV must move: 12 bytes per nonzero (value and column index), the row
// pointers, x read and y written once. With more than one rank it also
// times the SpMV without overlap and without communication, which gives the
// share of the halo exchange that the overlap hides.
func benchSpMV(c *comm.Comm, op *dsmat.Operator, b *ddmat.Dense, k int, rep *report) error {
	y, err := ddmat.NewVector(c, b.BE, b.Rows)
	if err != nil {
		return err
	}
	defer y.Free()
	x := &ddmat.Dense{Comm: c, BE: b.BE, Rows: b.Rows, Cols: 1, V: b.V.Slice(0, b.Rows)}
	defer op.SetSchedule(dsmat.Overlap)
	var host float64 // the last schedule's time per product on the host, before the sync
	timeSchedule := func(s dsmat.Schedule) (float64, error) {
		op.SetSchedule(s)
		if err := op.Apply(y.V, x.V); err != nil {
			return 0, err
		}
		if err := c.Barrier(); err != nil {
			return 0, err
		}
		t := time.Now()
		for i := 0; i < k; i++ {
			if err := op.Apply(y.V, x.V); err != nil {
				return 0, err
			}
		}
		host = time.Since(t).Seconds() / float64(k)
		if err := op.Backend().Sync(); err != nil {
			return 0, err
		}
		return comm.AllreduceScalar(c, comm.Max, time.Since(t).Seconds()/float64(k))
	}
	if rep.SpMVS, err = timeSchedule(dsmat.Overlap); err != nil {
		return err
	}
	if rep.SpMVHostS, err = comm.AllreduceScalar(c, comm.Max, host); err != nil {
		return err
	}
	bytes, err := comm.AllreduceScalar(c, comm.Sum, float64(op.ProductBytes(1)))
	if err != nil {
		return err
	}
	rep.SpMVGBs = bytes / rep.SpMVS / 1e9
	if c.Size() == 1 {
		return nil
	}
	if rep.SpMVSequentialS, err = timeSchedule(dsmat.Sequential); err != nil {
		return err
	}
	if rep.SpMVLocalS, err = timeSchedule(dsmat.LocalOnly); err != nil {
		return err
	}
	if exchange := rep.SpMVSequentialS - rep.SpMVLocalS; exchange > 0 {
		rep.HaloHidden = (rep.SpMVSequentialS - rep.SpMVS) / exchange
	}
	return nil
}
