package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fsai-dist/fsai-dist/solver"
)

// TestOutputs (issue 27): a valid 249-byte file name, an -out that
// replaces the -x0 it resumed from, character devices written in place
// (/dev/null takes everything, a copy of /dev/full reports its error and
// stays a device), and an -out naming a directory refused before the
// matrix is even generated; on 1 and 3 ranks.
func TestOutputs(t *testing.T) {
	for _, np := range []int{1, 3} {
		dir := t.TempDir()
		long := filepath.Join(dir, strings.Repeat("x", 249))
		res := mpirun(t, np, "-problem", "poisson7:6", "-progress", "0", "-out", long, "-report", long[:len(long)-1]+"r")
		if res.code != 0 {
			t.Fatalf("np%d: 249-byte name: exit %d\n%s", np, res.code, res.stderr)
		}
		if x := readArray(t, long); len(x) != 216 {
			t.Fatalf("np%d: 249-byte name: %d entries", np, len(x))
		}

		// resume in place: -x0 and -out one file, which ends up converged
		x := filepath.Join(dir, "x.mtx")
		if res := mpirun(t, np, "-problem", "poisson7:6", "-progress", "0", "-maxit", "2", "-out", x); res.code != 3 {
			t.Fatalf("np%d: exit %d\n%s", np, res.code, res.stderr)
		}
		rep := filepath.Join(dir, "r.json")
		if res := mpirun(t, np, "-problem", "poisson7:6", "-progress", "0", "-x0", x, "-out", x, "-report", rep); res.code != 0 {
			t.Fatalf("np%d: resume in place: exit %d\n%s", np, res.code, res.stderr)
		}
		if r := readReport(t, rep); r["history"].([]any)[0].(float64) >= 1 {
			t.Fatalf("np%d: resumed from relative residual %v, not from the iterate", np, r["history"].([]any)[0])
		}
		for i, v := range readArray(t, x) {
			if v < 1-1e-6 || v > 1+1e-6 {
				t.Fatalf("np%d: x[%d] = %g after resuming in place, want 1", np, i, v)
			}
		}

		// a directory: refused before the problem is generated
		res = mpirun(t, np, "-problem", "poisson7:6", "-report", dir)
		if res.code != 2 || !strings.Contains(res.stderr, "flag -report: "+dir+" is a directory") || strings.Contains(res.stderr, "\tmatrix\t") {
			t.Fatalf("np%d: -report naming a directory: exit %d\n%s", np, res.code, res.stderr)
		}

		res = mpirun(t, np, "-problem", "poisson7:6", "-progress", "0", "-out", "/dev/null", "-report", "/dev/null")
		if res.code != 0 {
			t.Fatalf("np%d: /dev/null: exit %d\n%s", np, res.code, res.stderr)
		}
		devices(t, np, dir)
	}
}

// devices writes -out and -report to copies of /dev/null and /dev/full
// made with mknod (root only).
func devices(t *testing.T, np int, dir string) {
	null, full := filepath.Join(dir, "null"), filepath.Join(dir, "full")
	for name, minor := range map[string]int{null: 3, full: 7} {
		if err := syscall.Mknod(name, syscall.S_IFCHR|0o666, 1<<8|minor); err != nil {
			t.Logf("mknod (needs root): %v; character device copies not tried", err)
			return
		}
	}
	if res := mpirun(t, np, "-problem", "poisson7:6", "-progress", "0", "-out", null, "-report", null); res.code != 0 {
		t.Fatalf("np%d: copy of /dev/null: exit %d\n%s", np, res.code, res.stderr)
	}
	for _, flag := range []string{"-out", "-report"} {
		res := mpirun(t, np, "-problem", "poisson7:6", "-progress", "0", flag, full)
		if res.code != 1 || !strings.Contains(res.stderr, "write "+full) || !strings.Contains(res.stderr, "no space left on device") {
			t.Fatalf("np%d: %s copy of /dev/full: exit %d\n%s", np, flag, res.code, res.stderr)
		}
	}
	for _, name := range []string{null, full} {
		if st, err := os.Stat(name); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("np%d: %s is no longer a character device: %v", np, name, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".fsai-*")); len(left) > 0 {
		t.Fatalf("np%d: temporary files left: %v", np, left)
	}
	os.Remove(null)
	os.Remove(full)
}

// TestVersion: -version prints the version and exits 0 without solving;
// the report records it, the command line and the FSAI parameters used.
func TestVersion(t *testing.T) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found")
	}
	cmd := exec.Command("mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none", binary, "-version")
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 1 || !strings.HasPrefix(lines[0], "fsai-dist ") {
		t.Fatalf("-version: %v, printed %q", err, out)
	}
	printed := strings.TrimPrefix(lines[0], "fsai-dist ")

	rep := filepath.Join(t.TempDir(), "r.json")
	args := []string{"-problem", "poisson7:6", "-progress", "0", "-afsai.steps", "3", "-report", rep}
	if res := mpirun(t, 2, args...); res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var r struct {
		Version     string            `json:"version"`
		CommandLine []string          `json:"command_line"`
		PrecParams  map[string]string `json:"prec_params"`
	}
	data, _ := os.ReadFile(rep)
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.Version != printed || len(r.CommandLine) < 1 || !slices.Equal(r.CommandLine[1:], args) {
		t.Fatalf("report: version %q (-version printed %q), command line %q", r.Version, printed, r.CommandLine)
	}
	if r.PrecParams["afsai.steps"] != "3" || r.PrecParams["afsai.precision"] != "single" || r.PrecParams["fsai.k"] == "" {
		t.Fatalf("report: prec_params %v", r.PrecParams)
	}
}

// TestView runs -view on two ranks with an option from FSAI_OPTIONS and
// one from a flag: rank 0 alone prints the block once, with the
// preconditioner's parameters as resolved and its density, and the report
// carries every option's resolved value.
func TestView(t *testing.T) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found")
	}
	rep := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command("mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none", binary,
		"-problem", "poisson7:8", "-backend", "cpu", "-progress", "0", "-view", "-afsai.steps", "3", "-report", rep)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", solver.OptionsEnv+"=-afsai.eps 0.25")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("-view: %v\n%s", err, out)
	}
	view := string(out)
	for _, want := range []string{"ranks           2, backend cpu", "poisson7:8: 512 rows, 3200 nonzeros, values stored single",
		"method          cg: tol 1e-08", "preconditioner  afsai\n", "afsai.eps 0.25", "afsai.steps 3", "G: "} {
		if !strings.Contains(view, want) {
			t.Errorf("the view lacks %q:\n%s", want, view)
		}
	}
	if strings.Count(view, "fsai-dist view:") != 1 || strings.Contains(view, "fsai.tau") || strings.Contains(view, "coarse space") {
		t.Errorf("want one view without static FSAI's parameters:\n%s", view)
	}
	var r struct {
		Options map[string]string `json:"options"`
		PrecNNZ int64             `json:"prec_nnz"`
	}
	data, _ := os.ReadFile(rep)
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Options) != len(solver.OptionTable()) || r.Options["afsai.eps"] != "0.25" || r.Options["afsai.steps"] != "3" || r.Options["tol"] != "1e-08" {
		t.Errorf("report: options %v", r.Options)
	}
	if r.PrecNNZ < 1 || !strings.Contains(view, fmt.Sprintf("G: %d nonzeros", r.PrecNNZ)) {
		t.Errorf("the view's G does not have the report's %d nonzeros:\n%s", r.PrecNNZ, view)
	}
}

// TestLog runs -log on two ranks: rank 0 prints the table once, and the
// report's log counts a product and a preconditioner application at least
// once an iteration, on rank 0, and accounts for the solve: its solve time
// is solve_s, measured apart, to within 5% (and a millisecond). A product
// moves A's entries (at least 8 bytes each, 12 at most) and x and y once,
// an application of FSAI G's and G”s; the rates are those bytes over the
// slowest rank's time. On Linux the ranks' peak host memory is reported,
// at least the bytes of A's entries, and no device peak on the CPU.
func TestLog(t *testing.T) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found")
	}
	rep := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command("mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none", binary,
		"-problem", "poisson7:16", "-backend", "cpu", "-progress", "0", "-log", "-report", rep)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("-log: %v\n%s", err, out)
	}
	if strings.Count(string(out), "fsai-dist log") != 1 || !strings.Contains(string(out), "  spmv ") {
		t.Errorf("want one table:\n%s", out)
	}
	for _, want := range []string{"GB/s", "peak memory per rank"} {
		if runtime.GOOS == "linux" && !strings.Contains(string(out), want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	var r struct {
		Iterations      int          `json:"iterations"`
		N               float64      `json:"n"`
		NNZ             float64      `json:"nnz"`
		PrecNNZ         float64      `json:"prec_nnz"`
		SolveS          float64      `json:"solve_s"`
		Log             []opTime     `json:"log"`
		PeakHostBytes   float64      `json:"peak_host_bytes"`
		PeakDeviceBytes float64      `json:"peak_device_bytes"`
		LogMemory       []peakMemory `json:"log_memory"`
	}
	data, _ := os.ReadFile(rep)
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	ops := map[string]opTime{}
	for _, op := range r.Log {
		ops[op.Op] = op
	}
	spmv, prec, other, solve := ops["spmv"], ops["prec"], ops["other"], ops["solve"]
	switch {
	case len(r.Log) != 4 || spmv.Count < r.Iterations || prec.Count < r.Iterations || solve.Count != 1:
		t.Errorf("log %+v for %d iterations", r.Log, r.Iterations)
	case math.Abs(solve.MaxS-r.SolveS) > 0.05*r.SolveS+1e-3:
		t.Errorf("the log's solve took %g s, solve_s is %g s", solve.MaxS, r.SolveS)
	case math.Abs(spmv.AvgS+prec.AvgS+other.AvgS-solve.AvgS) > 1e-9 || other.MinS < 0:
		t.Errorf("the operations do not add up to the solve: %+v", r.Log)
	}
	perSpMV, perPrec := spmv.Bytes/float64(spmv.Count), prec.Bytes/float64(prec.Count)
	if perSpMV < 8*r.NNZ+16*r.N || perSpMV > 12*r.NNZ+24*r.N {
		t.Errorf("a product moves %g bytes; A has %g entries and %g rows", perSpMV, r.NNZ, r.N)
	}
	if perPrec < 2*(8*r.PrecNNZ+16*r.N) || perPrec > 2*(12*r.PrecNNZ+24*r.N) {
		t.Errorf("an FSAI application moves %g bytes; G has %g entries and %g rows", perPrec, r.PrecNNZ, r.N)
	}
	for _, op := range []opTime{spmv, prec} {
		if want := op.Bytes / op.MaxS / 1e9; math.Abs(op.GBs-want) > 1e-9*want {
			t.Errorf("%s: %g GB/s, want %g", op.Op, op.GBs, want)
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	if len(r.LogMemory) != 1 || r.LogMemory[0].Memory != "host" || r.PeakDeviceBytes != 0 {
		t.Fatalf("log_memory %+v, peak_device_bytes %g: want the host's only", r.LogMemory, r.PeakDeviceBytes)
	}
	host := r.LogMemory[0]
	if host.MaxBytes != r.PeakHostBytes || host.MinBytes > host.AvgBytes || host.AvgBytes > host.MaxBytes || host.MinBytes < 8*r.NNZ/2 {
		t.Errorf("peak host memory %+v, peak_host_bytes %g: A's entries take %g bytes", host, r.PeakHostBytes, 8*r.NNZ)
	}
}

// TestMonitor runs -monitor 5 on two ranks: CG writes one line every 5
// iterations with the recurrence's relative residual, the report's
// history at that iteration, and the true one, which poisson7 keeps near
// it; GMRES writes the recurrence's only. A negative -monitor is refused.
func TestMonitor(t *testing.T) {
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found")
	}
	for _, method := range []string{"cg", "gmres"} {
		rep := filepath.Join(t.TempDir(), "r.json")
		cmd := exec.Command("mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none", binary,
			"-problem", "poisson7:16", "-backend", "cpu", "-solver", method, "-prec", "jacobi", "-progress", "0", "-monitor", "5", "-report", rep)
		cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s -monitor: %v\n%s", method, err, out)
		}
		var r struct {
			Iterations int       `json:"iterations"`
			History    []float64 `json:"history"`
		}
		data, _ := os.ReadFile(rep)
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "monitor ") {
				lines = append(lines, l)
			}
		}
		if len(lines) != r.Iterations/5 || len(lines) == 0 {
			t.Fatalf("%s: %d lines for %d iterations:\n%s", method, len(lines), r.Iterations, out)
		}
		for i, l := range lines {
			var it int
			var rec float64
			var truth string
			if _, err := fmt.Sscanf(l, "monitor %d recurrence %g true %s", &it, &rec, &truth); err != nil || it != 5*(i+1) {
				t.Fatalf("%s: line %q: %v", method, l, err)
			}
			if math.Abs(rec-r.History[it]) > 1e-6*rec {
				t.Errorf("%s: %q: history has %g", method, l, r.History[it])
			}
			v, err := strconv.ParseFloat(truth, 64)
			switch {
			case method == "cg" && (err != nil || math.Abs(v-rec) > 1e-3*rec):
				t.Errorf("cg: %q: the true residual is not near the recurrence's", l)
			case method != "cg" && truth != "-":
				t.Errorf("%s: %q: a true residual", method, l)
			}
		}
	}
	if r := mpirun(t, 1, "-monitor", "-1"); r.code != 2 || !strings.Contains(r.stderr, "flag -monitor: -1 is negative") {
		t.Errorf("-monitor -1: exit %d, %s", r.code, r.stderr)
	}
}
