// Command fsai-dist solves a sparse symmetric positive definite system
// A x = b with preconditioned conjugate gradients on one or many MPI ranks,
// each rank on its own GPU or on CPU cores:
//
//	mpirun -np 4 fsai-dist -matrix A.mtx -prec jacobi -report r.json -out x.mtx
//	mpirun -np 2 fsai-dist -problem poisson7:128 -backend cpu
//
// Exit status: 0 converged; 2 bad usage or bad input; 3 the matrix is not
// SPD or the solve did not converge (when the solve ran, the report is still
// written, with the reason); 1 any other failure. Every rank exits with the
// same status, and only the rank that saw a problem prints it. SIGTERM or
// SIGINT stops the solve after the current iteration: the iterate and the
// report are written, with reason interrupted, and the status is 3.
// docs/errors.md lists every message.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"time"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"github.com/fsai-dist/fsai-dist/solver"
)

// stderrWait bounds the wait at exit for the queued messages to reach
// standard error: when nothing reads it, the rank still exits, well before
// the SIGKILL that follows a SIGTERM.
const stderrWait = 2 * time.Second

// Exit statuses of the command-line contract.
const (
	exitConverged    = 0
	exitFailure      = 1
	exitBadInput     = 2
	exitNotConverged = 3
)

// options are the command-line flags: the solver's options (from the
// options file, FSAI_OPTIONS and the flags of solver.OptionTable) and the
// command's own.
type options struct {
	solver          solver.Options
	optionsFile     string
	matrix, problem string
	rhs, x0         string
	nrhs            int
	partition       string
	out, report     string
	verbose         bool
	cpuProfile      string
	trace           string
	progressEvery   int
	monitor         int
	benchSpMV       int
	writeMatrix     string
	coordinates     string
	randomRHS       bool
	blockSize       int
	checkSymmetry   bool
	view            bool
	version         bool
}

func parseFlags(args []string, usage io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("fsai-dist", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by the caller
	fs.Usage = func() {}
	fs.StringVar(&o.matrix, "matrix", "", "matrix file: Matrix Market coordinate or PETSc binary (detected by content)")
	fs.StringVar(&o.problem, "problem", "poisson7:64", "built-in problem when no -matrix: poisson7:N, poisson27:N, diffusion:N[:seed], aniso:N, convdiff:N[:peclet] (nonsymmetric), elasticity:N[:contrast[:nu]] (3 N (N+1)^2 rows)")
	fs.StringVar(&o.rhs, "rhs", "", "right-hand side, Matrix Market array; several columns are several right-hand sides, solved together (default b = A*1)")
	fs.BoolVar(&o.randomRHS, "random-rhs", false, "without -rhs: make every right-hand side A*u with u random in (0,1], none A*1 (on elasticity A*1 is a rigid translation, which the coarse space solves in one iteration); one is -nrhs 2's second")
	fs.IntVar(&o.nrhs, "nrhs", 1, "without -rhs: solve this many right-hand sides together, A*1 and A*u with random u in (0,1]")
	fs.StringVar(&o.coordinates, "coordinates", "", "the coordinates of each row's node, Matrix Market array of n rows and 3 columns (x, y, z), for the coarse space (-coarse); a -problem carries its own")
	fs.IntVar(&o.blockSize, "block-size", 1, "with -coordinates: unknowns per node, numbered node by node: 3 for displacements (rigid-body coarse space), 1 for a scalar field (constant)")
	fs.StringVar(&o.x0, "x0", "", "initial guess, Matrix Market array with a column per right-hand side (default 0)")
	fs.StringVar(&o.partition, "partition", "rows", "row partition: rows (equal rows per rank) or nnz (equal nonzeros)")
	fs.StringVar(&o.out, "out", "", "write the solution here, Matrix Market array (atomically)")
	fs.StringVar(&o.report, "report", "", "write a JSON report here (atomically)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write each rank's CPU profile (Go pprof) to PATH.rankN, for finding where the host's time goes")
	fs.StringVar(&o.trace, "trace", "", "write each rank's execution trace (Go runtime/trace) to PATH.rankN: where the host waits, in MPI and CUDA calls (go tool trace -pprof=syscall) and for its worker goroutines (-pprof=sync)")
	fs.StringVar(&o.writeMatrix, "write-matrix", "", "also write the matrix as PETSc binary here (faster to read than Matrix Market; for peers and later runs)")
	fs.IntVar(&o.benchSpMV, "bench-spmv", 0, "time this many SpMVs with A before solving; report spmv_s and spmv_gbs")
	fs.BoolVar(&o.verbose, "v", false, "log from every rank, not only rank 0")
	fs.IntVar(&o.progressEvery, "progress", 50, "log the residual every this many iterations (0: never)")
	fs.IntVar(&o.monitor, "monitor", 0, "write a line every this many iterations (0: never) with the recurrence's relative residual and, for cg, the true one ||b - A x||/||b||, at the cost of a product with A each time")
	fs.BoolVar(&o.checkSymmetry, "check-symmetry", true, "when -solver or -prec needs an SPD matrix (cg, afsai, fsai), check that a -matrix is symmetric before solving (one exchange of the halo entries); false skips it")
	fs.BoolVar(&o.view, "view", false, "after the set-up, print the resolved configuration (ranks, backend, matrix storage, method, preconditioner with its parameters and density, halos) on standard output")
	fs.BoolVar(&o.version, "version", false, "print the version (and the commit it was built from) and exit")
	fs.StringVar(&o.optionsFile, "options", "", "read the solver's options from this file, one a line: name value (# comments); FSAI_OPTIONS holds more, flags override both")
	if err := defineOptions(fs); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(usage, "usage: mpirun -np N fsai-dist [flags]\n")
			fs.SetOutput(usage)
			fs.PrintDefaults()
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags start with -)", fs.Arg(0))
	}
	switch {
	case o.benchSpMV < 0:
		return nil, fmt.Errorf("flag -bench-spmv: %d is negative", o.benchSpMV)
	case o.monitor < 0:
		return nil, fmt.Errorf("flag -monitor: %d is negative", o.monitor)
	case o.nrhs < 1:
		return nil, fmt.Errorf("flag -nrhs: %d is not positive", o.nrhs)
	case o.nrhs > 1 && o.rhs != "":
		return nil, fmt.Errorf("flag -nrhs: %d with -rhs: the file's columns are the right-hand sides", o.nrhs)
	case o.randomRHS && o.rhs != "":
		return nil, errors.New("flag -random-rhs with -rhs: the file's columns are the right-hand sides")
	case o.partition != "rows" && o.partition != "nnz":
		return nil, fmt.Errorf("flag -partition: %q is not rows or nnz", o.partition)
	}
	var err error
	if o.solver, err = solverOptions(fs, o.optionsFile); err != nil {
		return nil, err
	}
	method, prec := o.solver.Method, o.solver.Prec
	switch {
	case o.nrhs > 1 && !solver.MethodSolvesBlocks(method):
		return nil, fmt.Errorf("flag -nrhs: %d with -solver %s, which solves one right-hand side at a time", o.nrhs, method)
	case !solver.PrecSymmetric(prec) && solver.MethodNeedsSPD(method):
		return nil, fmt.Errorf("flag -prec: %s is not symmetric, which -solver %s needs: use -solver bicgstab or gmres", prec, method)
	}
	return o, nil
}

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	start := time.Now()
	parallel.Pin() // the set-up's consecutive parallel passes must split their ranges alike
	if err := comm.Init(); err != nil {
		fmt.Fprintf(os.Stderr, "fsai-dist: %v\n", err)
		return exitFailure
	}
	defer comm.Finalize()
	c := comm.World()
	q := newQueue(os.Stderr)
	stderr = q
	defer q.close(stderrWait)
	// A bug must not leave the other ranks waiting, nor exit with status 2,
	// which means bad input: end the job with status 1 and the stack.
	defer func() {
		if r := recover(); r != nil {
			c.Abort(exitFailure, fmt.Sprintf("fsai-dist: rank %d: internal error: %v\n%s", c.Rank(), r, debug.Stack()))
		}
	}()
	stop := catchSignals()

	usage := io.Discard
	if c.Rank() == 0 {
		usage = os.Stdout
	}
	o, err := parseFlags(args, usage)
	if errors.Is(err, flag.ErrHelp) {
		return exitConverged
	}
	if err := c.Agree(err); err != nil {
		return usageError(c, err)
	}
	if o.version {
		if c.Rank() == 0 {
			fmt.Println("fsai-dist", version())
		}
		return exitConverged
	}
	log := newLogger(c, o.verbose)
	defer log.Sync()
	if err := checkPaths(c, o); err != nil {
		return finish(c, exitBadInput, err)
	}
	for _, p := range []struct {
		flag, path string
		start      func(io.Writer) error
		stop       func()
	}{
		{"cpuprofile", o.cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile},
		{"trace", o.trace, trace.Start, trace.Stop},
	} {
		if p.path == "" {
			continue
		}
		stopProfile, err := startProfile(p.flag, profileName(p.path, c.Rank()), p.start, p.stop)
		if err := c.Agree(err); err != nil {
			return finish(c, exitBadInput, badInput(err))
		}
		defer stopProfile()
	}

	code, err := solve(c, o, log, stop, start)
	return finish(c, code, err)
}

// usageError ends a run whose flags or options some ranks refused: the
// lowest of those ranks prints its error, without its rank (every rank
// reads the same flags, and almost always the same options file), and all
// exit with status 2.
func usageError(c *comm.Comm, err error) int {
	speaker := int32(c.Size())
	if !errors.Is(err, comm.ErrPeer) {
		speaker = int32(c.Rank())
	}
	first, rerr := comm.AllreduceScalar(c, comm.Min, speaker)
	if rerr != nil {
		fmt.Fprintf(stderr, "fsai-dist: rank %d: %v\n", c.Rank(), rerr)
		return exitBadInput
	}
	if int(first) == c.Rank() {
		fmt.Fprintf(stderr, "fsai-dist: %v\n", err)
	}
	return exitBadInput
}

// profileName is the file of rank's profile of a profile flag's path.
func profileName(path string, rank int) string { return fmt.Sprintf("%s.rank%d", path, rank) }

// startProfile starts a profile (of flag -flag) into path; the returned
// function stops it and closes the file.
func startProfile(flag, path string, start func(io.Writer) error, stop func()) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("flag -%s: %w", flag, err)
	}
	if err := start(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("flag -%s: %w", flag, err)
	}
	return func() {
		stop()
		f.Close()
	}, nil
}

// stageError tags an error with the exit status it leads to.
type stageError struct {
	code int
	err  error
}

func (e *stageError) Error() string { return e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

func badInput(err error) error  { return tag(exitBadInput, err) }
func numerical(err error) error { return tag(exitNotConverged, err) }

func tag(code int, err error) error {
	if err == nil {
		return nil
	}
	return &stageError{code: code, err: err}
}

// finish makes every rank leave with the same status: the highest of the
// ranks that saw an error themselves (a rank that only heard of one,
// comm.ErrPeer, does not know its kind and does not vote). Of those ranks
// the lowest prints its error, in one line: when every rank finds the same
// bad input, the user reads it once.
func finish(c *comm.Comm, code int, err error) int {
	speaker := int32(c.Size())
	if err != nil {
		code = exitFailure
		var se *stageError
		if errors.As(err, &se) {
			code = se.code
		}
		if errors.Is(err, comm.ErrPeer) {
			code = exitConverged
		} else {
			speaker = int32(c.Rank())
		}
	}
	all, rerr := comm.AllreduceScalar(c, comm.Max, int32(code))
	if rerr == nil {
		speaker, rerr = comm.AllreduceScalar(c, comm.Min, speaker)
	}
	if rerr != nil {
		fmt.Fprintf(stderr, "fsai-dist: rank %d: %v\n", c.Rank(), rerr)
		return exitFailure
	}
	if err != nil && int(speaker) == c.Rank() {
		fmt.Fprintf(stderr, "fsai-dist: rank %d: %v\n", c.Rank(), err)
	}
	return int(all)
}
