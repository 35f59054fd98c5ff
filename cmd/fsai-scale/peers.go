package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// peersCmd solves one problem with fsai-dist and with established CG
// solvers on the same rank counts and compares their time per iteration:
// PETSc's KSPCG + Jacobi (scripts/peers/petsc_cg, CPU, MPI) and CuPy's cg +
// Jacobi (scripts/peers/cupy_cg.py, one GPU). The peers generate poisson7
// themselves; any other problem or matrix file reaches them as the PETSc
// binary file that the first fsai-dist run writes (-write-matrix).
type peersCmd struct {
	common
	problem, matrix string
	tol             float64
	maxit           int
	peers           string
	petsc, cupy     string
	python          string
}

var peerNames = []string{"petsc", "cupy"}

func (c *peersCmd) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("fsai-scale peers", flag.ContinueOnError)
	c.common.register(fs, filepath.Join("out", "scale", "peers"))
	fs.StringVar(&c.problem, "problem", "poisson7:64", "the problem, a built-in fsai-dist -problem spec")
	fs.StringVar(&c.matrix, "matrix", "", "the problem from a matrix file (fsai-dist -matrix) instead of -problem")
	fs.Float64Var(&c.tol, "tol", 1e-8, "relative residual to stop at, for every solver")
	fs.IntVar(&c.maxit, "maxit", 10000, "iteration limit, for every solver")
	fs.StringVar(&c.peers, "peers", "petsc", "comma-separated peers: petsc (CPU, MPI), cupy (one GPU)")
	fs.StringVar(&c.petsc, "petsc", "", "the petsc_cg binary (default: peers/petsc_cg beside fsai-scale, else in PATH)")
	fs.StringVar(&c.cupy, "cupy", filepath.Join("scripts", "peers", "cupy_cg.py"), "the CuPy driver script")
	fs.StringVar(&c.python, "python", "python3", "the Python interpreter that has CuPy")
	return fs
}

// peerReport is the JSON the peer drivers write (scripts/peers/README.md).
type peerReport struct {
	Iterations   int     `json:"iterations"`
	Converged    bool    `json:"converged"`
	Reason       string  `json:"reason"`
	RelRes       float64 `json:"relres"`
	N            int64   `json:"n"`
	NNZ          int64   `json:"nnz"`
	TimePerIterS float64 `json:"time_per_iter_s"`
}

// peerRow is one line of peers.csv: a peer's run next to fsai-dist's run.
type peerRow struct {
	peer      string
	peerRanks int
	fsai      *record
	res       *peerReport // nil when the peer failed
	reason    string      // why the peer failed
}

var peerColumns = []column[peerRow]{
	{"peer", func(r *peerRow) string { return r.peer }},
	{"peer_ranks", func(r *peerRow) string { return strconv.Itoa(r.peerRanks) }},
	{"fsai_ranks", func(r *peerRow) string { return strconv.Itoa(r.fsai.ranks) }},
	{"problem", func(r *peerRow) string { return r.fsai.problem }},
	{"n", peerCell(func(p *peerReport) string { return strconv.FormatInt(p.N, 10) })},
	{"nnz", peerCell(func(p *peerReport) string { return strconv.FormatInt(p.NNZ, 10) })},
	{"peer_iterations", peerCell(func(p *peerReport) string { return strconv.Itoa(p.Iterations) })},
	{"fsai_iterations", fsaiCell(func(p *report) string { return strconv.Itoa(p.Iterations) })},
	{"peer_iter_s", peerCell(func(p *peerReport) string { return num(p.TimePerIterS) })},
	{"fsai_iter_s", fsaiCell(func(p *report) string { return num(p.IterS) })},
	{"ratio", func(r *peerRow) string { return num(r.ratio()) }},
	{"peer_converged", peerCell(func(p *peerReport) string { return strconv.FormatBool(p.Converged) })},
	{"fsai_converged", fsaiCell(func(p *report) string { return strconv.FormatBool(p.Converged) })},
	{"peer_relres", peerCell(func(p *peerReport) string { return num(p.RelRes) })},
	{"fsai_relres", fsaiCell(func(p *report) string { return num(p.RelRes) })},
	{"reason", func(r *peerRow) string { return r.why() }},
}

func peerCell(f func(*peerReport) string) func(*peerRow) string {
	return func(r *peerRow) string {
		if r.res == nil {
			return ""
		}
		return f(r.res)
	}
}

func fsaiCell(f func(*report) string) func(*peerRow) string {
	return func(r *peerRow) string {
		if r.fsai.rep == nil {
			return ""
		}
		return f(r.fsai.rep)
	}
}

// ratio is the peer's time per iteration over fsai-dist's: above 1,
// fsai-dist's iterations are faster.
func (r *peerRow) ratio() float64 {
	if r.res == nil || r.fsai.rep == nil || r.res.TimePerIterS <= 0 || r.fsai.rep.IterS <= 0 {
		return math.NaN()
	}
	return r.res.TimePerIterS / r.fsai.rep.IterS
}

func (r *peerRow) ok() bool { return r.res != nil && r.res.Converged && r.fsai.ok() }

// why says what went wrong in the row, if anything.
func (r *peerRow) why() string {
	var s []string
	if r.res == nil {
		s = append(s, r.peer+": "+r.reason)
	} else if !r.res.Converged {
		s = append(s, r.peer+": did not converge: "+r.res.Reason)
	}
	if !r.fsai.ok() {
		s = append(s, "fsai-dist: "+r.fsai.reason)
	}
	return strings.Join(s, "; ")
}

// check validates the flags and returns the peers to run.
func (c *peersCmd) check(passthrough []string) (peers []string, err error) {
	for p := range strings.SplitSeq(c.peers, ",") {
		if !slices.Contains(peerNames, p) {
			return nil, usagef("flag -peers: %q is not one of %s", p, strings.Join(peerNames, ", "))
		}
		peers = append(peers, p)
	}
	if !(c.tol > 0 && c.tol < 1) || c.maxit < 1 {
		return nil, usagef("flags -tol %g, -maxit %d: need 0 < tol < 1 and maxit >= 1", c.tol, c.maxit)
	}
	return peers, checkPassthrough(passthrough)
}

// sources returns the matrix arguments of fsai-dist and of the peers, and
// the extra arguments of the first fsai-dist run: -write-matrix file when
// the peers cannot generate the problem themselves.
func (c *peersCmd) sources(file string) (fsai, peer, first []string) {
	switch {
	case c.matrix != "":
		fsai = []string{"-matrix", c.matrix}
	case strings.HasPrefix(c.problem, "poisson7:"):
		fsai = []string{"-problem", c.problem}
		return fsai, fsai, nil
	default:
		fsai = []string{"-problem", c.problem}
	}
	return fsai, []string{"-matrix", file}, []string{"-write-matrix", file}
}

func (c *peersCmd) run(passthrough []string, log io.Writer) (int, error) {
	peers, err := c.check(passthrough)
	if err != nil {
		return 0, err
	}
	r, err := c.newRunner()
	if err != nil {
		return 0, err
	}
	var petsc string
	if slices.Contains(peers, "petsc") {
		if petsc, err = findProgram("petsc", c.petsc, filepath.Join("peers", "petsc_cg"), "build it with scripts/peers/build.sh"); err != nil {
			return 0, err
		}
	}
	if slices.Contains(peers, "cupy") {
		if _, err := os.Stat(c.cupy); err != nil {
			return 0, usagef("flag -cupy: %v", err)
		}
		if _, err := exec.LookPath(c.python); err != nil {
			return 0, usagef("flag -python: %v", err)
		}
	}
	matrixFile, err := r.path("peers-matrix", ".petsc")
	if err != nil {
		return 0, err
	}
	source, peerSource, first := c.sources(matrixFile)
	stop := []string{"-tol", strconv.FormatFloat(c.tol, 'g', -1, 64), "-maxit", strconv.Itoa(c.maxit)}
	peerArgs := append(slices.Clone(peerSource), stop...)
	// Jacobi, as the peers; flags after -- still override it
	fsaiArgs := append(append([]string{"-prec", "jacobi"}, stop...), passthrough...)

	var rows []peerRow
	fsai := make([]*record, len(c.ranks))
	for i, n := range c.ranks {
		args := fsaiArgs
		if i == 0 {
			args = append(slices.Clone(fsaiArgs), first...)
		}
		rec := r.fsaiDist(n, source[1], fmt.Sprintf("peers-fsai-np%d", n), source, args)
		fmt.Fprintf(log, "peers: fsai-dist %s\n", rec.summary())
		fsai[i] = &rec
		if petsc != "" {
			row := r.peer(fmt.Sprintf("peers-petsc-np%d", n), func(out string) []string {
				return r.launch.command(n, petsc, append(slices.Clone(peerArgs), "-json", out)...)
			})
			row.peer, row.peerRanks, row.fsai = "petsc", n, fsai[i]
			fmt.Fprintf(log, "peers: petsc %s\n", row.summary())
			rows = append(rows, row)
		}
	}
	if slices.Contains(peers, "cupy") {
		// one GPU: compared with fsai-dist on the fewest ranks
		row := r.peer("peers-cupy", func(out string) []string {
			return append(append([]string{c.python, c.cupy}, peerArgs...), "-json", out)
		})
		row.peer, row.peerRanks, row.fsai = "cupy", 1, fsai[0]
		fmt.Fprintf(log, "peers: cupy %s\n", row.summary())
		rows = append(rows, row)
	}

	csvPath := filepath.Join(c.out, "peers.csv")
	if err := writeCSV(csvPath, peerColumns, rows); err != nil {
		return 0, err
	}
	fmt.Fprintf(log, "peers: wrote %s\n", csvPath)
	return exitStatus(log, "peers", rows, (*peerRow).ok), nil
}

// peer runs the command argv(out) that writes a peer's JSON to the file
// out (runs/<name>.json), and reads it.
func (r *runner) peer(name string, argv func(out string) []string) peerRow {
	var row peerRow
	jsonPath, err := r.path(name, ".json")
	if err != nil {
		row.reason = err.Error()
		return row
	}
	status, logPath, err := r.run(name, argv(jsonPath))
	switch {
	case err != nil:
		row.reason = err.Error()
	case status != 0:
		row.reason = fmt.Sprintf("exit status %d: %s", status, lastLine(logPath))
	default:
		data, err := os.ReadFile(jsonPath)
		if err == nil {
			row.res = new(peerReport)
			if err = json.Unmarshal(data, row.res); err != nil {
				row.res = nil
			}
		}
		if err != nil {
			row.reason = err.Error()
		}
	}
	return row
}

func (r *peerRow) summary() string {
	if r.res == nil {
		return fmt.Sprintf("%d ranks: FAILED (%s)", r.peerRanks, r.reason)
	}
	return fmt.Sprintf("%d ranks: %d iterations, %.3g ms/iteration, %.3g times fsai-dist's on %d ranks",
		r.peerRanks, r.res.Iterations, 1e3*r.res.TimePerIterS, r.ratio(), r.fsai.ranks)
}
