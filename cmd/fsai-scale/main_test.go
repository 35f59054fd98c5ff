package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/internal/testbin"
)

// fsaiDist is the fsai-dist binary the tests run, built once by TestMain.
var fsaiDist string

func TestMain(m *testing.M) {
	testbin.Main(m, "../fsai-dist", func(path string) {
		fsaiDist = path
		// what scripts/env.sh sets: mpirun as root, and no cross-memory
		// attach (containers refuse it)
		os.Setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
		os.Setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
		os.Setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
	})
}

// scale runs fsai-scale in this process and returns its exit status and
// what it printed.
func scale(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errs bytes.Buffer
	code = run(args, &out, &errs)
	return code, out.String(), errs.String()
}

func needMPI(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found")
	}
}

// readCSV returns the header and the rows of a CSV file, each row as a map
// from column name to cell.
func readCSV(t *testing.T, path string) ([]string, []map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cells, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cells) == 0 {
		t.Fatalf("%s is empty", path)
	}
	var rows []map[string]string
	for _, line := range cells[1:] {
		row := map[string]string{}
		for i, name := range cells[0] {
			row[name] = line[i]
		}
		rows = append(rows, row)
	}
	return cells[0], rows
}

func float(t *testing.T, row map[string]string, col string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(row[col], 64)
	if err != nil {
		t.Fatalf("column %s: %v (row %v)", col, err, row)
	}
	return v
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-4*math.Max(math.Abs(a), math.Abs(b)) }

// wantPNGs checks that each file in dir is a PNG image that decodes.
func wantPNGs(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, name := range files {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
			t.Errorf("%s is %dx%d pixels", name, b.Dx(), b.Dy())
		}
	}
}

// The CSV columns, in order: those the brief of the study asks for first.
var wantColumns = []string{"ranks", "problem", "n", "nnz", "backend", "prec", "iterations",
	"setup_s", "solve_s", "total_s", "iter_s", "efficiency", "efficiency_setup", "efficiency_solve",
	"efficiency_iter", "converged", "reason", "status", "relres", "device", "read_s", "wall_s",
	"halo_device_links", "halo_host_links"}

// checkStudy checks what every study's CSV must hold: one converged row
// per rank count 1 and 2, Tt = Tp + Ts, efficiency 1 at the reference and
// the formula at 2 ranks.
func checkStudy(t *testing.T, out string, weak bool) []map[string]string {
	t.Helper()
	header, rows := readCSV(t, filepath.Join(out, "scaling.csv"))
	if !slices.Equal(header, wantColumns) {
		t.Fatalf("columns\n%v\nwant\n%v", header, wantColumns)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	for i, row := range rows {
		if row["ranks"] != strconv.Itoa(i+1) || row["status"] != "0" || row["converged"] != "true" ||
			row["reason"] != "converged" || row["backend"] != "cpu" {
			t.Errorf("row %d: %v", i, row)
		}
		if float(t, row, "iterations") < 1 || float(t, row, "setup_s") <= 0 || float(t, row, "solve_s") <= 0 {
			t.Errorf("row %d: no iterations or times: %v", i, row)
		}
		if tt := float(t, row, "setup_s") + float(t, row, "solve_s"); !near(tt, float(t, row, "total_s")) {
			t.Errorf("row %d: total_s %s is not setup_s + solve_s = %g", i, row["total_s"], tt)
		}
		// on the CPU every halo goes through the host: none on one rank,
		// on two each rank receives from and sends to the other
		if want := strconv.Itoa(4 * i); row["halo_device_links"] != "0" || row["halo_host_links"] != want {
			t.Errorf("row %d: halo links %s device, %s host, want 0 and %s", i, row["halo_device_links"], row["halo_host_links"], want)
		}
	}
	for _, col := range []string{"efficiency", "efficiency_setup", "efficiency_solve", "efficiency_iter"} {
		if rows[0][col] != "1" {
			t.Errorf("%s at the reference is %s, want 1", col, rows[0][col])
		}
	}
	want := float(t, rows[0], "total_s") / float(t, rows[1], "total_s")
	if !weak {
		want /= 2
	}
	if got := float(t, rows[1], "efficiency"); !near(got, want) {
		t.Errorf("efficiency at 2 ranks %g, want %g", got, want)
	}
	return rows
}

func TestStrong(t *testing.T) {
	needMPI(t)
	out := t.TempDir()
	code, stdout, stderr := scale(t, "strong", "-ranks", "2,1", "-problem", "poisson7:10", "-bin", fsaiDist,
		"-out", out, "-warmup", "--", "-backend", "cpu", "-threads", "1", "-prec", "jacobi")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	rows := checkStudy(t, out, false)
	for _, row := range rows {
		if row["problem"] != "poisson7:10" || row["n"] != "1000" || row["prec"] != "jacobi" {
			t.Errorf("not the fixed problem poisson7:10 with jacobi: %v", row)
		}
	}
	wantPNGs(t, out, "times.png", "iter_time.png", "efficiency.png")
	for _, n := range []int{1, 2} {
		if _, err := os.Stat(filepath.Join(out, "runs", fmt.Sprintf("strong-np%d.json", n))); err != nil {
			t.Error(err)
		}
	}
	// -warmup: one more run, of the fewest ranks, not in the CSV
	if _, err := os.Stat(filepath.Join(out, "runs", "strong-np1-warmup.json")); err != nil {
		t.Error(err)
	}
	if len(rows) != 2 {
		t.Errorf("%d rows in the CSV, want 2 (the warm-up is not one)", len(rows))
	}
}

func TestWeak(t *testing.T) {
	needMPI(t)
	out := t.TempDir()
	code, stdout, stderr := scale(t, "weak", "-ranks", "1,2", "-rows-per-rank", "500", "-family", "poisson7",
		"-bin", fsaiDist, "-out", out, "--", "-backend", "cpu", "-threads", "1")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	rows := checkStudy(t, out, true)
	// N = round(cbrt(500*ranks)): 8 (512 rows), 10 (1000 rows)
	for i, want := range []struct{ problem, n string }{{"poisson7:8", "512"}, {"poisson7:10", "1000"}} {
		if rows[i]["problem"] != want.problem || rows[i]["n"] != want.n || rows[i]["prec"] != "afsai" {
			t.Errorf("row %d: problem %s n %s prec %s, want %s %s afsai", i, rows[i]["problem"], rows[i]["n"],
				rows[i]["prec"], want.problem, want.n)
		}
	}
	wantPNGs(t, out, "times.png", "iter_time.png", "efficiency.png", "iterations.png")
}

// A run that fails is recorded with fsai-dist's message, the study goes on
// and ends with status 3; the plots of an earlier study are removed.
func TestFailedRunRecorded(t *testing.T) {
	needMPI(t)
	out := t.TempDir()
	stale := filepath.Join(out, "times.png")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := scale(t, "strong", "-ranks", "1,2", "-problem", "poisson7:6", "-bin", fsaiDist,
		"-out", out, "--", "-backend", "cpu", "-tol", "2")
	if code != exitRunsFail {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitRunsFail, stdout, stderr)
	}
	_, rows := readCSV(t, filepath.Join(out, "scaling.csv"))
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2 (the study must go on after a failure)", len(rows))
	}
	for _, row := range rows {
		if row["status"] != "2" || !strings.Contains(row["reason"], "flag -tol") || row["n"] != "" || row["efficiency"] != "" {
			t.Errorf("failed run recorded as %v", row)
		}
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a plot of an earlier study is left in the output directory")
	}
}

// A missing binary or launcher stops the study before any run, with status
// 2 and a message that says what to do.
func TestMissingPrograms(t *testing.T) {
	needMPI(t) // the launcher is checked first
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"binary", []string{"-bin", "/nonexistent/fsai-dist"}, "flag -bin: /nonexistent/fsai-dist is not an executable"},
		{"launcher", []string{"-bin", fsaiDist, "-launcher", "/nonexistent/mpirun"}, "launcher /nonexistent/mpirun not found: install Open MPI"},
		{"unknown launcher", []string{"-bin", fsaiDist, "-launcher", "aprun"}, `flag -launcher: "aprun" is not mpirun, mpiexec or srun`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			code, stdout, stderr := scale(t, append([]string{"weak", "-out", out}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tc.want)
			}
			if stdout != "" {
				t.Errorf("printed %q: nothing should have run", stdout)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sideways"}, `unknown subcommand "sideways"`},
		{[]string{"strong", "-ranks", "1,0"}, `"0" is not a positive rank count`},
		{[]string{"strong", "-ranks", "2,2"}, "rank count 2 given twice"},
		{[]string{"strong", "extra"}, `unexpected argument "extra" (fsai-dist flags go after --)`},
		{[]string{"strong", "-bin", fsaiDist, "--", "-report", "x.json"}, "-report after -- would override"},
		{[]string{"weak", "-bin", fsaiDist, "-family", "poisson5"}, `flag -family: "poisson5" is not one of`},
		{[]string{"weak", "-bin", fsaiDist, "-rows-per-rank", "0"}, "flag -rows-per-rank: 0 is not positive"},
		{[]string{"peers", "-bin", fsaiDist, "-peers", "trilinos"}, `flag -peers: "trilinos" is not one of petsc, cupy`},
	} {
		code, _, stderr := scale(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
