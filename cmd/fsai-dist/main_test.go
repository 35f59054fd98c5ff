package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"time"

	"github.com/fsai-dist/fsai-dist/internal/testbin"
	"github.com/fsai-dist/fsai-dist/problem"
	"github.com/fsai-dist/fsai-dist/solver"
)

// The tests run the real binary under mpirun, as users do.
var binary string

func TestMain(m *testing.M) {
	testbin.Main(m, ".", func(path string) { binary = path })
}

// result is what one run of the binary left behind.
type result struct {
	code   int
	stderr string
}

// mpirun runs fsai-dist on np ranks with args and returns its exit status and
// standard error. A run that does not end within a minute fails the test: no
// failure may leave ranks hanging.
func mpirun(t *testing.T, np int, args ...string) result {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found")
	}
	full := append([]string{"-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none", binary}, args...)
	cmd := exec.Command("mpirun", full...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_vader_single_copy_mechanism=none")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code: code, stderr: stderr.String()}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("fsai-dist %v on %d ranks did not end within a minute\n%s", args, np, stderr.String())
		return result{}
	}
}

func readReport(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// readArray reads a Matrix Market array file's values.
func readArray(t *testing.T, path string) []float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vals []float64
	sc := bufio.NewScanner(f)
	header := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "%") {
			continue
		}
		if !header {
			header = true
			continue
		}
		v, err := strconv.ParseFloat(line, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		vals = append(vals, v)
	}
	return vals
}

// contractFields are the report fields that scripts and users rely on.
var contractFields = []string{"converged", "reason", "iterations", "relres", "n", "nnz", "ranks",
	"backend", "prec", "setup_s", "solve_s", "total_s", "history"}

func TestSolveProblemAndResume(t *testing.T) {
	dir := t.TempDir()
	rep, out := filepath.Join(dir, "r.json"), filepath.Join(dir, "x.mtx")
	res := mpirun(t, 3, "-problem", "poisson7:12", "-prec", "jacobi", "-report", rep, "-out", out)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	r := readReport(t, rep)
	for _, f := range contractFields {
		if _, ok := r[f]; !ok {
			t.Errorf("report lacks %q", f)
		}
	}
	if r["converged"] != true || r["relres"].(float64) > 1e-8 || r["n"].(float64) != 1728 ||
		r["nnz"].(float64) != 7*1728-6*144 || r["ranks"].(float64) != 3 || r["backend"] != "cpu" {
		t.Fatalf("report %v", r)
	}
	setup, bind, prec := r["setup_s"].(float64), r["bind_s"].(float64), r["prec_setup_s"].(float64)
	if !(bind > 0 && prec > 0 && bind+prec <= setup) {
		t.Errorf("set-up %g s in parts bind %g s and preconditioner %g s", setup, bind, prec)
	}
	if its := r["iterations"].(float64); len(r["history"].([]any)) != int(its)+1 {
		t.Fatalf("%v iterations but %d history entries", its, len(r["history"].([]any)))
	}
	x := readArray(t, out)
	if len(x) != 1728 {
		t.Fatalf("solution has %d entries", len(x))
	}
	for i, v := range x {
		if v < 1-1e-6 || v > 1+1e-6 {
			t.Fatalf("x[%d] = %g, want 1", i, v)
		}
	}

	// the written solution, read back as the initial guess on another rank
	// count, is already converged
	res = mpirun(t, 2, "-problem", "poisson7:12", "-x0", out, "-report", rep)
	if r := readReport(t, rep); res.code != 0 || r["iterations"].(float64) != 0 {
		t.Fatalf("resume: exit %d, %v iterations\n%s", res.code, r["iterations"], res.stderr)
	}
}

// TestSeveralRightHandSides solves three generated right-hand sides
// together with aFSAI, checks the report's columns and the solution file
// (column 1 is all ones), resumes from it, and refuses an -x0 with another
// number of columns.
func TestSeveralRightHandSides(t *testing.T) {
	dir := t.TempDir()
	rep, out := filepath.Join(dir, "r.json"), filepath.Join(dir, "x.mtx")
	res := mpirun(t, 2, "-problem", "poisson7:10", "-nrhs", "3", "-report", rep, "-out", out)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	r := readReport(t, rep)
	cols, _ := r["columns"].([]any)
	if r["nrhs"] != 3.0 || len(cols) != 3 || r["converged"] != true {
		t.Fatalf("report: nrhs %v, columns %v, converged %v", r["nrhs"], r["columns"], r["converged"])
	}
	most := 0.0
	for k, c := range cols {
		c := c.(map[string]any)
		if c["converged"] != true || c["relres"].(float64) > 1e-8 || c["iterations"].(float64) < 1 {
			t.Errorf("column %d: %v", k+1, c)
		}
		most = max(most, c["iterations"].(float64))
	}
	if r["iterations"] != most {
		t.Errorf("report iterations %v, the columns' largest %v", r["iterations"], most)
	}
	x := readArray(t, out)
	if len(x) != 3*1000 {
		t.Fatalf("solution has %d entries, want 3 columns of 1000", len(x))
	}
	for i, v := range x[:1000] {
		if math.Abs(v-1) > 1e-6 {
			t.Fatalf("column 1 row %d = %g, want 1", i, v)
		}
	}
	if res := mpirun(t, 3, "-problem", "poisson7:10", "-rhs", out, "-x0", out, "-report", rep); res.code != 0 {
		t.Fatalf("solve with the 3 solutions as right-hand sides: exit %d\n%s", res.code, res.stderr)
	}
	if r := readReport(t, rep); r["nrhs"] != 3.0 || r["converged"] != true {
		t.Fatalf("3-column -rhs: %v", r)
	}
	res = mpirun(t, 2, "-problem", "poisson7:10", "-x0", out)
	if res.code != 2 || !strings.Contains(res.stderr, "3 columns for 1 right-hand sides") {
		t.Fatalf("3-column -x0 for one right-hand side: exit %d\n%s", res.code, res.stderr)
	}
}

func TestSharedMatrix(t *testing.T) {
	path := "../../../shared/matrices/s1rmq4m1.mtx"
	if _, err := os.Stat(path); err != nil {
		t.Skip("no ../shared/matrices beside the checkout")
	}
	dir := t.TempDir()
	rep, out := filepath.Join(dir, "r.json"), filepath.Join(dir, "x.mtx")
	res := mpirun(t, 4, "-matrix", path, "-prec", "jacobi", "-report", rep, "-out", out, "-progress", "0")
	r := readReport(t, rep)
	if res.code != 0 || r["converged"] != true || r["relres"].(float64) >= 1e-8 || r["n"].(float64) != 5489 || r["nnz"].(float64) != 262411 {
		t.Fatalf("exit %d, report %v\n%s", res.code, r, res.stderr)
	}
	if x := readArray(t, out); len(x) != 5489 {
		t.Fatalf("solution has %d entries", len(x))
	}
}

func TestNotConverged(t *testing.T) {
	rep := filepath.Join(t.TempDir(), "r.json")
	res := mpirun(t, 2, "-problem", "poisson7:10", "-maxit", "5", "-report", rep)
	r := readReport(t, rep)
	if res.code != 3 || r["converged"] != false || r["reason"] != "max_iterations" || r["iterations"].(float64) != 5 {
		t.Fatalf("exit %d, report %v", res.code, r)
	}
}

// haveGPU reports whether a CUDA driver is installed here.
func haveGPU() bool {
	_, err := os.Stat("/dev/nvidia0")
	return err == nil
}

// TestProfiles: -cpuprofile and -trace write every rank's profile, which
// the Go tools read; a path that cannot be written is bad input.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	prof, tr := filepath.Join(dir, "cpu"), filepath.Join(dir, "trace")
	res := mpirun(t, 2, "-problem", "poisson7:10", "-progress", "0", "-cpuprofile", prof, "-trace", tr)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	for _, rank := range []string{".rank0", ".rank1"} {
		for _, tool := range [][]string{{"pprof", "-top", prof + rank}, {"trace", "-pprof=sync", tr + rank}} {
			out, err := exec.Command("go", append([]string{"tool"}, tool...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("go tool %v: %v\n%s", tool, err, out)
			}
		}
	}
	res = mpirun(t, 2, "-problem", "poisson7:10", "-progress", "0", "-trace", filepath.Join(dir, "none", "trace"))
	if res.code != 2 || !strings.Contains(res.stderr, "flag -trace:") {
		t.Fatalf("exit %d for a trace path that cannot be written\n%s", res.code, res.stderr)
	}
}

// TestNonsymmetricMethods: every method that takes a nonsymmetric matrix
// (solver.NeedsSPD false with jacobi and none) solves the shared
// nonsymmetric matrix cdde1 and convdiff at 1 and 3 ranks with jacobi and
// none, no symmetry check stopping it, while afsai with it still refuses
// the matrix (exit 3); the report names the method and GMRES's restart.
// -nrhs 2, or a -rhs of two columns, with a one-column method is a usage
// error (exit 2), as is a GMRES basis larger than the rank's memory.
func TestNonsymmetricMethods(t *testing.T) {
	path := "../../../shared/matrices/nonsym/cdde1.mtx"
	if _, err := os.Stat(path); err != nil {
		t.Skip("no ../shared/matrices/nonsym beside the checkout")
	}
	var general []string
	for _, m := range solver.Methods {
		if !solver.NeedsSPD(m, "jacobi") && !solver.NeedsSPD(m, "none") {
			general = append(general, m)
		}
	}
	if len(general) == 0 {
		t.Skip("no method for nonsymmetric matrices is registered")
	}
	rep := filepath.Join(t.TempDir(), "r.json")
	for _, m := range general {
		for _, np := range []int{1, 3} {
			for _, run := range [][]string{{"-matrix", path, "-prec", "jacobi"}, {"-problem", "convdiff:8:100", "-prec", "none"}} {
				res := mpirun(t, np, append([]string{"-solver", m, "-report", rep, "-progress", "0"}, run...)...)
				r := readReport(t, rep)
				if res.code != 0 || r["converged"] != true || r["relres"].(float64) >= 1e-8 {
					t.Errorf("-solver %s %v on %d ranks: exit %d, report %v\n%s", m, run, np, res.code, r, res.stderr)
				}
			}
			res := mpirun(t, np, "-solver", m, "-matrix", path, "-prec", "afsai", "-progress", "0")
			if want := "-prec afsai needs an SPD matrix"; res.code != 3 || !strings.Contains(res.stderr, want) {
				t.Errorf("-solver %s -prec afsai on cdde1, %d ranks: exit %d, want 3 and %q\n%s", m, np, res.code, want, res.stderr)
			}
		}
	}
	for _, args := range [][]string{{"-solver", "gmres", "-prec", "jacobi", "-gmres.restart", "20"}, {"-solver", "bicgstab"}} {
		res := mpirun(t, 1, append(args, "-matrix", path, "-check-symmetry=false", "-backend", "cpu", "-report", rep)...)
		r := readReport(t, rep)
		if res.code != 0 || r["converged"] != true || r["relres"].(float64) > 1e-8 || r["solver"] != args[1] || r["n"].(float64) != 961 {
			t.Fatalf("%v: exit %d, report %v\n%s", args, res.code, r, res.stderr)
		}
		if restart, _ := r["gmres_restart"].(float64); (args[1] == "gmres") != (restart == 20) {
			t.Errorf("%v: gmres_restart %v", args, r["gmres_restart"])
		}
	}
	res := mpirun(t, 1, "-problem", "poisson7:4", "-solver", "gmres", "-nrhs", "2")
	if res.code != 2 || !strings.Contains(res.stderr, "flag -nrhs: 2 with -solver gmres, which solves one right-hand side at a time") {
		t.Errorf("-nrhs 2 -solver gmres: exit %d\n%s", res.code, res.stderr)
	}
	res = mpirun(t, 1, "-problem", "poisson7:10", "-solver", "gmres", "-gmres.restart", "100000000")
	if res.code != 2 || !strings.Contains(res.stderr, "flag -gmres.restart: the GMRES basis takes 100000001 vectors of 1000 rows: about 800 GB") {
		t.Errorf("-gmres.restart 100000000: exit %d\n%s", res.code, res.stderr)
	}
	rhs := filepath.Join(t.TempDir(), "b.mtx")
	var text strings.Builder
	text.WriteString("%%MatrixMarket matrix array real general\n8 2\n")
	for range 16 {
		text.WriteString("1\n")
	}
	if err := os.WriteFile(rhs, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	res = mpirun(t, 1, "-problem", "poisson7:2", "-solver", "bicgstab", "-rhs", rhs)
	if res.code != 2 || !strings.Contains(res.stderr, "2 right-hand sides with -solver bicgstab, which solves one at a time") {
		t.Errorf("two-column -rhs with -solver bicgstab: exit %d\n%s", res.code, res.stderr)
	}
}

// TestSingleReduction: -pcg.single-reduction reaches CG: the report says
// single_reduction, the solve converges on 2 ranks in PCG's iterations
// within 3, and without the flag the report leaves the field out.
func TestSingleReduction(t *testing.T) {
	rep := filepath.Join(t.TempDir(), "r.json")
	var iterations [2]float64
	for i, flags := range [][]string{nil, {"-pcg.single-reduction"}} {
		res := mpirun(t, 2, append(flags, "-problem", "poisson7:10", "-prec", "jacobi", "-backend", "cpu", "-report", rep, "-progress", "0")...)
		r := readReport(t, rep)
		if single, _ := r["single_reduction"].(bool); res.code != 0 || r["converged"] != true || single != (flags != nil) {
			t.Fatalf("%v: exit %d, report %v\n%s", flags, res.code, r, res.stderr)
		}
		iterations[i] = r["iterations"].(float64)
	}
	if d := iterations[1] - iterations[0]; d < -3 || d > 3 {
		t.Errorf("%v iterations with -pcg.single-reduction, %v without", iterations[1], iterations[0])
	}
}

// TestCoarseSpace: -problem elasticity carries its geometry, so the default
// aFSAI gets the coarse space (the report's coarse field) and cuts the
// iterations of -coarse off; the same matrix written with -write-matrix
// and read back with -coordinates and -block-size 3 gets the same coarse
// space and iterations. The second right-hand side (-nrhs 2, A*u with u
// random) is the one that counts: the first, A*1, is a rigid translation,
// which the coarse space solves in one iteration. -random-rhs solves that
// second one alone, in as many iterations. A scalar problem gets the
// constant with -coarse on only.
func TestCoarseSpace(t *testing.T) {
	dir := t.TempDir()
	const spec = "elasticity:5:1e3:0.3"
	s, err := problem.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	coords, _, _ := s.Geometry(0, s.Rows())
	var file strings.Builder
	fmt.Fprintf(&file, "%%%%MatrixMarket matrix array real general\n%d 3\n", s.Rows())
	for d := 0; d < 3; d++ { // column by column, as the format orders an array
		for i := 0; i < len(coords); i += 3 {
			fmt.Fprintf(&file, "%g\n", coords[i+d])
		}
	}
	coordFile, matrix, rep := filepath.Join(dir, "xyz.mtx"), filepath.Join(dir, "a.petsc"), filepath.Join(dir, "r.json")
	if err := os.WriteFile(coordFile, []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"-nrhs", "2", "-backend", "cpu", "-progress", "0", "-report", rep}
	run := func(args ...string) (iterations float64, coarse map[string]any) {
		t.Helper()
		res := mpirun(t, 2, append(args, common...)...)
		r := readReport(t, rep)
		if res.code != 0 || r["converged"] != true {
			t.Fatalf("%v: exit %d, report %v\n%s", args, res.code, r, res.stderr)
		}
		coarse, _ = r["coarse"].(map[string]any)
		return r["iterations"].(float64), coarse
	}
	withCoarse, info := run("-problem", spec, "-write-matrix", matrix)
	without, none := run("-problem", spec, "-coarse", "off")
	fromFile, infoFile := run("-matrix", matrix, "-coordinates", coordFile, "-block-size", "3")
	random, _ := run("-problem", spec, "-random-rhs", "-nrhs", "1")
	if _, scalar := run("-problem", "poisson7:6"); scalar != nil {
		t.Errorf("poisson7 (one unknown a node) has a coarse space by default: %v", scalar)
	}
	if _, scalar := run("-problem", "poisson7:6", "-coarse", "on"); scalar == nil || scalar["size"] != 1.0 {
		t.Errorf("poisson7:6 with -coarse on: coarse space %v, want the constant", scalar)
	}
	if info == nil || none != nil || infoFile == nil {
		t.Fatalf("coarse field: %v by default, %v with -coarse off, %v from the files", info, none, infoFile)
	}
	view, err := exec.Command("mpirun", "-np", "1", binary, "-problem", spec, "-backend", "cpu", "-progress", "0", "-view").Output()
	if want := fmt.Sprintf("coarse space    %v unknowns on %v^3 boxes", info["size"], info["boxes"]); err != nil || !strings.Contains(string(view), want) {
		t.Errorf("-view: %v, lacks %q:\n%s", err, want, view)
	}
	if !(withCoarse < without) || fromFile != withCoarse || info["size"] != infoFile["size"] || random != withCoarse {
		t.Errorf("iterations %v with the coarse space (%v unknowns), %v without, %v from the files (%v unknowns), %v with -random-rhs",
			withCoarse, info["size"], without, fromFile, infoFile["size"], random)
	}
}
