package main

import (
	"bytes"
	"context"
	be "encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mtxFile is a Matrix Market coordinate file with the given symmetry, size
// line n n len(lines) and data lines.
func mtxFile(symmetry string, n int, lines ...string) string {
	return fmt.Sprintf("%%%%MatrixMarket matrix coordinate real %s\n%d %d %d\n%s\n", symmetry, n, n, len(lines), strings.Join(lines, "\n"))
}

// laplace is the n x n matrix tridiag(-1, 2, -1): its lower triangle, or
// both triangles in general form.
func laplace(n int, general bool) []string {
	var l []string
	for i := 1; i <= n; i++ {
		l = append(l, fmt.Sprintf("%d %d 2", i, i))
		if i > 1 {
			l = append(l, fmt.Sprintf("%d %d -1", i, i-1))
			if general {
				l = append(l, fmt.Sprintf("%d %d -1", i-1, i))
			}
		}
	}
	return l
}

// replace returns lines with the line that starts with prefix replaced by
// line, or dropped if line is "".
func replace(lines []string, prefix, line string) []string {
	var out []string
	for _, l := range lines {
		switch {
		case !strings.HasPrefix(l, prefix):
			out = append(out, l)
		case line != "":
			out = append(out, line)
		}
	}
	return out
}

// arrayFile is a Matrix Market array vector.
func arrayFile(vals ...string) string {
	return fmt.Sprintf("%%%%MatrixMarket matrix array real general\n%d 1\n%s\n", len(vals), strings.Join(vals, "\n"))
}

// petscFile is a PETSc binary matrix.
func petscFile(classID, n, nz int32, lens, cols []int32, vals []float64) string {
	var b bytes.Buffer
	for _, x := range [][]int32{{classID, n, n, nz}, lens, cols} {
		be.Write(&b, be.BigEndian, x)
	}
	be.Write(&b, be.BigEndian, vals)
	return b.String()
}

// failureInputs writes the input files of TestFailures into dir.
func failureInputs(t *testing.T, dir string) {
	lap := laplace(12, false)
	general := laplace(12, true)
	var indefinite []string // six blocks [1 2; 2 1]
	for k := 1; k <= 11; k += 2 {
		indefinite = append(indefinite, fmt.Sprintf("%d %d 1", k, k), fmt.Sprintf("%d %d 2", k+1, k), fmt.Sprintf("%d %d 1", k+1, k+1))
	}
	alternating := slices.Repeat([]string{"1", "0"}, 6)
	e1 := slices.Repeat([]string{"0"}, 300)
	e1[0] = "1"
	// the Neumann Laplacian of a path: singular, with constants as null space
	neumann := replace(replace(laplace(300, false), "1 1 ", "1 1 1"), "300 300 ", "300 300 1")
	petscGood := petscFile(1211216, 3, 3, []int32{1, 1, 1}, []int32{0, 1, 2}, []float64{1, 1, 1})
	files := map[string]string{
		"lap.mtx":       mtxFile("symmetric", 12, lap...),
		"banner.mtx":    strings.Replace(mtxFile("symmetric", 12, lap...), "coordinate real", "coordinate", 1),
		"entry.mtx":     mtxFile("symmetric", 12, replace(lap, "5 5 ", "5 5 2..0")...),
		"range.mtx":     mtxFile("symmetric", 12, replace(lap, "7 6 ", "7 13 -1")...),
		"upper.mtx":     mtxFile("symmetric", 12, replace(lap, "7 6 ", "6 7 -1")...),
		"count.mtx":     strings.Replace(mtxFile("symmetric", 12, lap...), "12 12 23", "12 12 24", 1),
		"rect.mtx":      strings.Replace(mtxFile("symmetric", 12, lap...), "12 12 23", "12 13 23", 1),
		"nan.mtx":       mtxFile("symmetric", 12, replace(lap, "9 9 ", "9 9 NaN")...),
		"inf.mtx":       mtxFile("symmetric", 12, replace(lap, "9 8 ", "9 8 -Inf")...),
		"emptyrow.mtx":  mtxFile("symmetric", 12, replace(replace(replace(lap, "8 8 ", ""), "8 7 ", ""), "9 8 ", "")...),
		"tiny.mtx":      mtxFile("symmetric", 2, "1 1 2", "2 1 -1", "2 2 2"),
		"good.petsc":    petscGood,
		"claim.mtx":     strings.Replace(mtxFile("symmetric", 12, lap...), "12 12 23", "2000000000 2000000000 23", 1),
		"claim.petsc":   petscFile(1211216, 2000000000, 3, []int32{1, 1, 1}, []int32{0, 1, 2}, []float64{1, 1, 1}),
		"entries.mtx":   strings.Replace(mtxFile("symmetric", 12, lap...), "12 12 23", "12 12 9000000000", 1),
		"wide.vec":      fmt.Sprintf("%%%%MatrixMarket matrix array real general\n12 40\n%s", strings.Repeat("1\n", 480)),
		"bad.opts":      "# aFSAI\n-afsai.steps 3\nafsai.stepz 4\n",
		"good.opts":     "# Jacobi, two iterations\n-prec jacobi\n\nmaxit 2 # too few\n",
		"hex.mtx":       mtxFile("symmetric", 12, replace(lap, "5 5 ", "5 5 0x1p1")...),
		"long.mtx":      mtxFile("symmetric", 12, replace(lap, "5 5 ", "5 5 2"+strings.Repeat("0", 100000)+"x")...),
		"dupinf.mtx":    mtxFile("symmetric", 12, append(replace(lap, "6 6 ", "6 6 1e308"), "6 6 1e308")...),
		"junk.mtx":      "this is not a matrix\n",
		"class.petsc":   strings.Replace(petscGood, "\x00\x12{P", "\x00\x12{Q", 1),
		"trunc.petsc":   petscGood[:len(petscGood)-4],
		"short.vec":     arrayFile("1", "2", "3"),
		"nan.vec":       arrayFile(strings.Split(strings.Repeat("1 ", 11)+"nan", " ")...),
		"nonsym.mtx":    mtxFile("general", 12, replace(general, "4 5 ", "4 5 -0.5")...),
		"lower.mtx":     mtxFile("general", 12, lap...),
		"negdiag.mtx":   mtxFile("symmetric", 12, replace(lap, "10 10 ", "10 10 -2")...),
		"zerodiag.mtx":  mtxFile("symmetric", 12, replace(lap, "10 10 ", "")...),
		"indef.mtx":     mtxFile("symmetric", 12, indefinite...),
		"alt.vec":       arrayFile(alternating...),
		"overflow.mtx":  mtxFile("symmetric", 12, replace(lap, "3 3 ", "3 3 1e300")...),
		"neumann.mtx":   mtxFile("symmetric", 300, neumann...),
		"e1.vec":        arrayFile(e1...),
		"huge.vec":      arrayFile(slices.Repeat([]string{"1e308"}, 12)...),
		"symmetric.mtx": mtxFile("general", 12, replace(replace(general, "4 5 ", "4 5 -1.0000000001"), "5 4 ", "5 4 -0.9999999999")...),
		"dups.mtx":      mtxFile("symmetric", 12, append(replace(replace(lap, "6 6 ", "6 6 1"), "7 6 ", "7 6 -0.5"), "6 6 1", "7 6 -0.5")...),
		"mild.mtx":      mtxFile("general", 12, replace(general, "4 5 ", "4 5 -0.99")...),
		// SPD, but its leading 2 x 2 block is singular in float32 (see
		// afsai.TestBreakdownFallback)
		"fallback.mtx": mtxFile("symmetric", 3, "1 1 1.000000001", "2 1 1", "2 2 1.000000001", "3 1 0.5", "3 2 0.5", "3 3 1.000000001"),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// other names of lap.mtx, a directory and a named pipe
	in := func(name string) string { return filepath.Join(dir, name) }
	for _, err := range []error{os.Symlink(in("lap.mtx"), in("lap-link.mtx")), os.Link(in("lap.mtx"), in("lap-hard.mtx")),
		os.Mkdir(in("outdir"), 0o755), syscall.Mkfifo(in("fifo"), 0o644)} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot returns the contents of the regular files in dir, by name.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if e.Type().IsRegular() {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = string(data)
		}
	}
	return files
}

// ranksResult is what a run under ranksRun left behind.
type ranksResult struct {
	statuses []int    // each rank's own exit status
	lines    []string // standard error without the status lines
}

// statusLine prefixes the line in which each rank's wrapper reports how the
// rank exited.
const statusLine = "fsai-dist-test: rank exit "

// ranksRun runs fsai-dist on np ranks with mpirun's abort on a non-zero exit
// turned off, each rank in a shell that reports the rank's own exit status:
// every rank must leave by itself (a hung rank hangs mpirun, which the
// timeout catches), and only fsai-dist writes to standard error. env
// ("NAME=value") is added to the ranks' environment.
func ranksRun(t *testing.T, np int, env []string, args ...string) ranksResult {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not found")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wrapper := `"$0" "$@"; s=$?; echo "` + statusLine + `$s" >&2; exit $s`
	full := append([]string{"--mca", "orte_abort_on_non_zero_status", "0", "-np", strconv.Itoa(np),
		"--oversubscribe", "--bind-to", "none", "sh", "-c", wrapper, binary}, args...)
	cmd := exec.CommandContext(ctx, "mpirun", full...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_vader_single_copy_mechanism=none")
	cmd.Env = append(cmd.Env, env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("fsai-dist %v on %d ranks did not end within 30 s\n%s", args, np, stderr.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	var res ranksResult
	for _, line := range strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n") {
		if s, ok := strings.CutPrefix(line, statusLine); ok {
			code, _ := strconv.Atoi(s)
			res.statuses = append(res.statuses, code)
		} else if line != "" {
			res.lines = append(res.lines, line)
		}
	}
	return res
}

// isLogLine tells the logger's lines ("15:04:05.000\tINFO\t...") from others.
func isLogLine(line string) bool {
	return strings.Contains(line, "\tINFO\t") || strings.Contains(line, "\tWARN\t")
}

// TestFailures feeds every kind of bad input (issue 8, item 1) and every
// numerical failure (item 2) to fsai-dist on 1 and 3 ranks and checks the
// exit contract: every rank exits by itself with the same status; standard
// error holds exactly one line from fsai-dist, which names the problem,
// besides the log, and no panic trace or mpirun banner; no output file is
// left behind except the report (and the iterate, where usable) of a solve
// that ran. A few inputs that are accepted with a note in the log come
// last.
func TestFailures(t *testing.T) {
	dir := t.TempDir()
	failureInputs(t, dir)
	inputs := snapshot(t, dir)
	t.Cleanup(func() { // after the parallel subtests
		after := snapshot(t, dir)
		for name, data := range inputs {
			if after[name] != data {
				t.Errorf("input %s changed", name)
			}
		}
	})
	in := func(name string) string { return filepath.Join(dir, name) }
	lap := in("lap.mtx")
	none := []string{"-prec", "none"}
	cases := []struct {
		name   string
		args   []string
		code   int
		want   string // in the message; "" for none (status 0)
		report string // the reason in the report; "" for no report
		out    bool   // whether the iterate is written
		single bool   // only on 3 ranks
		noGPU  bool   // only without a GPU
		log    string // in the log
		check  func(r map[string]any) bool
		env    []string // added to the ranks' environment
	}{
		// bad usage
		{name: "bad flag value", args: []string{"-tol", "2"}, code: 2, want: "flag -tol: 2 is not in (0,1)"},
		{name: "negative reach", args: []string{"-afsai.reach", "-1"}, code: 2, want: "flag -afsai.reach: -1 is negative"},
		{name: "divtol not above 1", args: []string{"-divtol", "0.5"}, code: 2, want: "flag -divtol: 0.5 is not above 1"},
		{name: "unknown flag", args: []string{"-nosuch"}, code: 2, want: "-nosuch"},
		{name: "bad problem", args: []string{"-problem", "poisson9:4"}, code: 2, want: `unknown problem "poisson9"`},
		{name: "bad elasticity", args: []string{"-problem", "elasticity:4:1e3:0.5"}, code: 2, want: "nu 0.5 out of range (-1, 0.5)"},
		{name: "output directory", args: []string{"-problem", "poisson7:4", "-out", filepath.Join(dir, "none", "x.mtx")}, code: 2,
			want: "flag -out: cannot write beside " + filepath.Join(dir, "none", "x.mtx")},
		{name: "no gpu", args: []string{"-problem", "poisson7:4", "-backend", "cuda"}, code: 2, want: "flag -backend cuda: gpu: no CUDA driver", noGPU: true},
		// outputs that would destroy an input or another output, or cannot
		// be written; inputs that would block (issue 27)
		{name: "out is matrix", args: []string{"-matrix", lap, "-out", lap}, code: 2, want: "flag -out: " + lap + " is the same file as -matrix " + lap},
		{name: "report is matrix", args: []string{"-matrix", lap, "-report", lap}, code: 2, want: "flag -report: " + lap + " is the same file as -matrix"},
		{name: "out is petsc matrix", args: []string{"-matrix", in("good.petsc"), "-out", in("good.petsc")}, code: 2, want: "is the same file as -matrix"},
		{name: "out is rhs", args: []string{"-matrix", lap, "-rhs", in("alt.vec"), "-out", in("alt.vec")}, code: 2, want: "flag -out: " + in("alt.vec") + " is the same file as -rhs"},
		{name: "out is coordinates", args: []string{"-matrix", lap, "-coordinates", in("alt.vec"), "-out", in("alt.vec")}, code: 2, want: "flag -out: " + in("alt.vec") + " is the same file as -coordinates"},
		{name: "coordinates not 3 columns", args: []string{"-matrix", lap, "-coordinates", in("alt.vec")}, code: 2, want: "flag -coordinates: " + in("alt.vec") + " has 1 columns: need 3"},
		{name: "random-rhs with rhs", args: []string{"-matrix", lap, "-rhs", in("alt.vec"), "-random-rhs"}, code: 2, want: "flag -random-rhs with -rhs"},
		{name: "coarse without geometry", args: []string{"-matrix", lap, "-coarse", "on"}, code: 2, want: "flag -coarse on: the matrix has no geometry"},
		{name: "coarse with gmres", args: []string{"-problem", "elasticity:2", "-coarse", "on", "-solver", "gmres", "-prec", "jacobi"}, code: 2, want: "flag -coarse on: the coarse space needs an SPD matrix"},
		{name: "write-matrix is matrix", args: []string{"-matrix", lap, "-write-matrix", lap}, code: 2, want: "flag -write-matrix: " + lap + " is the same file as -matrix"},
		{name: "out is report", args: []string{"-problem", "poisson7:4", "-out", in("s"), "-report", in("s")}, code: 2, want: "flag -report: " + in("s") + " is the same file as -out " + in("s")},
		{name: "out is a symbolic link to the matrix", args: []string{"-matrix", lap, "-out", in("lap-link.mtx")}, code: 2, want: "is the same file as -matrix"},
		{name: "report is a hard link to the matrix", args: []string{"-matrix", in("lap-hard.mtx"), "-report", lap}, code: 2, want: "is the same file as -matrix"},
		{name: "out is a directory", args: []string{"-problem", "poisson7:4", "-out", in("outdir")}, code: 2, want: "flag -out: " + in("outdir") + " is a directory: name a file"},
		{name: "report is a directory", args: []string{"-problem", "poisson7:4", "-report", in("outdir")}, code: 2, want: "flag -report: " + in("outdir") + " is a directory"},
		{name: "out is a fifo", args: []string{"-problem", "poisson7:4", "-out", in("fifo")}, code: 2, want: "flag -out: " + in("fifo") + " is a named pipe (FIFO): name a file"},
		{name: "matrix is a fifo", args: []string{"-matrix", in("fifo")}, code: 2, want: "flag -matrix: " + in("fifo") + " is a named pipe (FIFO), not a regular file"},
		{name: "rhs is a fifo", args: []string{"-matrix", lap, "-rhs", in("fifo")}, code: 2, want: "flag -rhs: " + in("fifo") + " is a named pipe (FIFO), not a regular file"},
		{name: "x0 is a directory", args: []string{"-matrix", lap, "-x0", in("outdir")}, code: 2, want: "flag -x0: " + in("outdir") + " is a directory, not a regular file"},
		// sizes beyond the file or the memory, refused before allocating
		{name: "mtx claims 2e9 rows", args: []string{"-matrix", in("claim.mtx")}, code: 2, want: "claim.mtx line 2: size line declares 2000000000 rows but 23 entries, which leave rows empty"},
		{name: "petsc claims 2e9 rows", args: []string{"-matrix", in("claim.petsc")}, code: 2, want: "claim.petsc: truncated"},
		// the file's length is weighed before the memory: these get the
		// same messages under a limit that 2e9 rows would far exceed
		{name: "mtx claims 2e9 rows within little memory", args: []string{"-matrix", in("claim.mtx")}, code: 2, want: "claim.mtx line 2: size line declares 2000000000 rows but 23 entries, which leave rows empty",
			env: []string{"FSAI_RANK_MEMORY=5000"}},
		{name: "petsc claims 2e9 rows within little memory", args: []string{"-matrix", in("claim.petsc")}, code: 2, want: "claim.petsc: truncated", env: []string{"FSAI_RANK_MEMORY=5000"}},
		{name: "mtx claims 9e9 entries within little memory", args: []string{"-matrix", in("entries.mtx")}, code: 2, want: "entries.mtx line 2: size line declares 9000000000 entries, the file holds 23",
			env: []string{"FSAI_RANK_MEMORY=5000"}},
		// lap.mtx needs about 2.0 kB on one rank, 1.2 kB on each of three;
		// good.petsc 132 bytes on one rank, 44 on each of three
		{name: "matrix beyond memory", args: []string{"-matrix", lap}, code: 2, env: []string{"FSAI_RANK_MEMORY=500"},
			want: "flag -matrix: " + lap + ": 12 rows and up to 46 entries: about "},
		{name: "petsc matrix beyond memory", args: []string{"-matrix", in("good.petsc")}, code: 2, env: []string{"FSAI_RANK_MEMORY=40"},
			want: "flag -matrix: " + in("good.petsc") + ": 3 rows and 3 entries: about "},
		{name: "rhs beyond memory", args: []string{"-matrix", lap, "-rhs", in("wide.vec")}, code: 2, env: []string{"FSAI_RANK_MEMORY=5000"},
			want: "flag -rhs: " + in("wide.vec") + " has 40 columns: 40 right-hand sides take 8 blocks of"},
		{name: "x0 beyond memory", args: []string{"-matrix", lap, "-x0", in("wide.vec")}, code: 2, env: []string{"FSAI_RANK_MEMORY=5000"},
			want: "flag -x0: " + in("wide.vec") + " has 40 columns: 40 right-hand sides take 8 blocks of"},
		{name: "bad memory limit", args: []string{"-matrix", lap}, code: 2, env: []string{"FSAI_RANK_MEMORY=lots"},
			want: `FSAI_RANK_MEMORY: "lots" is not a positive number of bytes`},
		{name: "huge nrhs", args: []string{"-problem", "poisson7:4", "-nrhs", "1000000000"}, code: 2, want: "flag -nrhs: 1000000000 right-hand sides take 8 blocks of"},
		{name: "huge problem", args: []string{"-problem", "poisson27:1200"}, code: 2, want: "flag -problem: poisson27:1200 has 1728000000 rows and up to 46656000000 entries: about"},
		// messages
		{name: "infinite tau", args: []string{"-fsai.tau", "Inf"}, code: 2, want: "flag -fsai.tau: +Inf is not a finite number"},
		{name: "spai with cg", args: []string{"-problem", "convdiff:6", "-prec", "spai"}, code: 2,
			want: "flag -prec: spai is not symmetric, which -solver cg needs: use -solver bicgstab or gmres"},
		{name: "spai tau above 1", args: []string{"-problem", "convdiff:6", "-solver", "gmres", "-prec", "spai", "-spai.tau", "1.5"}, code: 2,
			want: "flag -spai.tau: 1.5 is not in [0,1]"},
		{name: "spai power 0", args: []string{"-problem", "convdiff:6", "-solver", "gmres", "-prec", "spai", "-spai.k", "0"}, code: 2,
			want: "flag -spai.k: 0 is not in [1,4]"},
		{name: "options file unknown", args: []string{"-problem", "poisson7:4", "-options", in("bad.opts")}, code: 2,
			want: "fsai-dist: options file " + in("bad.opts") + ` line 3: unknown option "afsai.stepz"`},
		{name: "options file missing", args: []string{"-problem", "poisson7:4", "-options", in("none.opts")}, code: 2,
			want: "fsai-dist: options file: open " + in("none.opts") + ": no such file"},
		{name: "options env out of range", args: []string{"-problem", "poisson7:4"}, env: []string{"FSAI_OPTIONS=-afsai.power 4"}, code: 2,
			want: "fsai-dist: FSAI_OPTIONS: option afsai.power: 4 is not 1, 2 or 3"},
		{name: "options file", args: []string{"-matrix", lap, "-options", in("good.opts")}, code: 3,
			want: "did not converge: max_iterations after 2 iterations", report: "max_iterations", out: true},
		{name: "flags over options", args: []string{"-matrix", lap, "-options", in("good.opts"), "-maxit", "1000"}, env: []string{"FSAI_OPTIONS=-maxit 1 -tol 1e-10"},
			report: "converged", out: true, check: func(r map[string]any) bool { return r["prec"] == "jacobi" && r["tol"] == 1e-10 && r["maxit"] == 1000.0 }},
		{name: "nan tol", args: []string{"-tol", "NaN"}, code: 2, want: "flag -tol: NaN is not a finite number"},
		{name: "hex value", args: []string{"-matrix", in("hex.mtx")}, code: 2, want: `hex.mtx line 10: malformed value "0x1p1"`},
		{name: "long value", args: []string{"-matrix", in("long.mtx")}, code: 2, want: `long.mtx line 10: malformed value "2` + strings.Repeat("0", 79) + `"...`},
		{name: "duplicates overflow", args: []string{"-matrix", in("dupinf.mtx")}, code: 2, want: "dupinf.mtx: duplicate entries of A(6,6) sum to +Inf, beyond the float64 range"},
		// item 1: bad input
		{name: "missing file", args: []string{"-matrix", in("none.mtx")}, code: 2, want: "none.mtx: no such file"},
		{name: "unknown format", args: []string{"-matrix", in("junk.mtx")}, code: 2, want: "junk.mtx: unknown format"},
		{name: "bad banner", args: []string{"-matrix", in("banner.mtx")}, code: 2, want: "banner.mtx line 1: bad banner"},
		{name: "bad entry", args: []string{"-matrix", in("entry.mtx")}, code: 2, want: `entry.mtx line 10: malformed value "2..0"`},
		{name: "index out of range", args: []string{"-matrix", in("range.mtx")}, code: 2, want: "range.mtx line 15: column index 13 out of range [1,12]"},
		{name: "upper triangle", args: []string{"-matrix", in("upper.mtx")}, code: 2, want: "upper.mtx line 15: entry (6,7) above the diagonal"},
		{name: "wrong count", args: []string{"-matrix", in("count.mtx")}, code: 2, want: "count.mtx line 2: size line declares 24 entries, the file holds 23"},
		{name: "not square", args: []string{"-matrix", in("rect.mtx")}, code: 2, want: "rect.mtx line 2: matrix is 12 x 13, not square"},
		{name: "nan value", args: []string{"-matrix", in("nan.mtx")}, code: 2, want: `nan.mtx line 18: value "NaN" is not finite`},
		{name: "inf value", args: []string{"-matrix", in("inf.mtx")}, code: 2, want: `inf.mtx line 19: value "-Inf" is not finite`},
		{name: "petsc class id", args: []string{"-matrix", in("class.petsc")}, code: 2, want: "class.petsc: unknown format"},
		{name: "petsc truncated", args: []string{"-matrix", in("trunc.petsc")}, code: 2, want: "trunc.petsc: truncated: 60 bytes, a 3 x 3 matrix with 3 entries needs 64"},
		{name: "empty row", args: []string{"-matrix", in("emptyrow.mtx")}, code: 2, want: "row 8 has no entries"},
		{name: "more ranks than rows", args: []string{"-matrix", in("tiny.mtx")}, code: 2, want: "3 ranks for 2 rows", single: true},
		{name: "rhs length", args: []string{"-matrix", lap, "-rhs", in("short.vec")}, code: 2, want: "short.vec line 2: vector has 3 rows, the matrix has 12"},
		{name: "x0 length", args: []string{"-matrix", lap, "-x0", in("short.vec")}, code: 2, want: "short.vec line 2: vector has 3 rows"},
		{name: "rhs nan", args: []string{"-matrix", lap, "-rhs", in("nan.vec")}, code: 2, want: `nan.vec line 14: value "nan" is not finite`},
		// item 2: numerical failures, before the solve
		{name: "not symmetric", args: []string{"-matrix", in("nonsym.mtx")}, code: 3, want: "A(4,5) = -0.5"},
		{name: "not symmetric cg jacobi", args: []string{"-matrix", in("nonsym.mtx"), "-prec", "jacobi"}, code: 3,
			want: "(tolerance 1e-06 relative to sqrt(|a_ii a_jj|)); -solver cg needs an SPD matrix; -check-symmetry=false skips this check"},
		{name: "convdiff cg afsai", args: []string{"-problem", "convdiff:6"}, code: 3,
			want: "problem convdiff:6: the matrix is not symmetric; -solver cg and -prec afsai need an SPD matrix"},
		{name: "convdiff cg none", args: append([]string{"-problem", "convdiff:6:100"}, none...), code: 3,
			want: "problem convdiff:6:100: the matrix is not symmetric; -solver cg needs an SPD matrix"},
		{name: "slightly not symmetric", args: []string{"-matrix", in("mild.mtx")}, code: 3, want: "A(4,5) = -0.99"},
		{name: "lower triangle as general", args: []string{"-matrix", in("lower.mtx")}, code: 3, want: "A(2,1) = -1 but A(1,2) is not stored"},
		{name: "negative diagonal none", args: append([]string{"-matrix", in("negdiag.mtx")}, none...), code: 3, want: "diagonal entry A(10,10) = -2 is not positive"},
		{name: "negative diagonal jacobi", args: []string{"-matrix", in("negdiag.mtx"), "-prec", "jacobi"}, code: 3, want: "diagonal entry A(10,10) = -2 is not positive"},
		{name: "negative diagonal afsai", args: []string{"-matrix", in("negdiag.mtx"), "-prec", "afsai"}, code: 3, want: "diagonal entry A(10,10) = -2 is not positive"},
		{name: "missing diagonal spai", args: []string{"-matrix", in("zerodiag.mtx"), "-solver", "bicgstab", "-prec", "spai", "-spai.tau", "0"}, code: 3,
			want: "spai: row 10 of M: no row of its pattern (1 rows) has an entry in column 10 (a zero diagonal entry: raise tau or k)"},
		{name: "missing diagonal fsai", args: []string{"-matrix", in("zerodiag.mtx"), "-prec", "fsai"}, code: 3, want: "diagonal entry A(10,10) = 0 is not positive"},
		// item 2: numerical failures in the solve
		{name: "breakdown", args: append([]string{"-matrix", in("indef.mtx"), "-rhs", in("alt.vec")}, none...), code: 3,
			want: "did not converge: breakdown after 1 iterations", report: "breakdown"},
		{name: "nan", args: append([]string{"-matrix", lap, "-x0", in("huge.vec")}, none...), code: 3, want: "did not converge: nan", report: "nan"},
		{name: "stagnation", args: append([]string{"-matrix", in("neumann.mtx"), "-rhs", in("e1.vec"), "-stagnation", "30"}, none...), code: 3,
			want: "did not converge: stagnation after 30 iterations", report: "stagnation", out: true},
		{name: "diverged", args: []string{"-problem", "convdiff:10:100", "-solver", "bicgstab", "-prec", "none", "-divtol", "1.5"}, code: 3,
			want: "did not converge: diverged after 6 iterations", report: "diverged"},
		{name: "max iterations", args: []string{"-matrix", lap, "-maxit", "2", "-prec", "jacobi"}, code: 3,
			want: "did not converge: max_iterations after 2 iterations", report: "max_iterations", out: true},
		// accepted
		{name: "huge diagonal", args: append([]string{"-matrix", in("overflow.mtx")}, none...), report: "converged", out: true},
		{name: "huge diagonal afsai", args: []string{"-matrix", in("overflow.mtx")}, report: "converged", out: true,
			check: func(r map[string]any) bool {
				info, _ := r["prec_info"].(map[string]any)
				return info["scaled"] == true
			}},
		{name: "spai", args: []string{"-problem", "convdiff:6:100", "-solver", "bicgstab", "-prec", "spai"}, report: "converged", out: true,
			check: func(r map[string]any) bool {
				info, _ := r["prec_info"].(map[string]any)
				params, _ := r["prec_params"].(map[string]any)
				return info["max_block_rows"].(float64) > 1 && r["prec_density"].(float64) > 0 && params["spai.tau"] == "0.9" && params["spai.k"] == "1"
			}},
		{name: "matrix within a memory limit", args: []string{"-matrix", lap}, report: "converged", out: true, env: []string{"FSAI_RANK_MEMORY=1e6"}},
		{name: "nearly symmetric", args: []string{"-matrix", in("symmetric.mtx")}, report: "converged", out: true},
		{name: "convdiff without convection", args: []string{"-problem", "convdiff:6:0"}, report: "converged", out: true},
		{name: "spai device on the cpu", args: []string{"-problem", "convdiff:6:100", "-solver", "bicgstab", "-prec", "spai", "-spai.device"}, report: "converged", out: true},
		{name: "elasticity", args: []string{"-problem", "elasticity:3:1e3:0.45"}, report: "converged", out: true},
		{name: "symmetry check off", args: []string{"-matrix", in("mild.mtx"), "-check-symmetry=false", "-prec", "jacobi"}, report: "converged", out: true},
		{name: "duplicates", args: []string{"-matrix", in("dups.mtx")}, report: "converged", out: true,
			log: `repeated entries were summed, as the format says	{"rank": 0, "matrix": "` + in("dups.mtx") + `", "entries": 3}`},
		{name: "fsai fallback", args: []string{"-matrix", in("fallback.mtx"), "-afsai.steps", "1", "-afsai.step-size", "2"}, report: "converged", out: true,
			log: "rows whose dense factorization broke down keep a shorter pattern", check: func(r map[string]any) bool {
				info, _ := r["prec_info"].(map[string]any)
				return info["fallback_rows"] == 2.0
			}},
	}
	for _, tc := range cases {
		for _, np := range []int{1, 3} {
			if tc.single && np == 1 {
				continue
			}
			t.Run(fmt.Sprintf("%s/np%d", strings.ReplaceAll(tc.name, " ", "_"), np), func(t *testing.T) {
				if tc.noGPU && haveGPU() {
					t.Skip("a GPU is present")
				}
				t.Parallel()
				outDir := t.TempDir()
				out, rep := filepath.Join(outDir, "x.mtx"), filepath.Join(outDir, "r.json")
				res := ranksRun(t, np, tc.env, append([]string{"-out", out, "-report", rep, "-progress", "0"}, tc.args...)...)
				if len(res.statuses) != np {
					t.Fatalf("%d of %d ranks reported their exit\n%s", len(res.statuses), np, strings.Join(res.lines, "\n"))
				}
				for _, s := range res.statuses {
					if s != tc.code {
						t.Fatalf("rank exit statuses %v, want %d\n%s", res.statuses, tc.code, strings.Join(res.lines, "\n"))
					}
				}
				var ours, other []string
				logged := false
				for _, line := range res.lines {
					switch {
					case strings.HasPrefix(line, "fsai-dist:"):
						ours = append(ours, line)
					case !isLogLine(line):
						other = append(other, line)
					case tc.log != "" && strings.Contains(line, tc.log):
						logged = true
					}
				}
				switch {
				case tc.want == "" && len(ours) > 0:
					t.Fatalf("want no fsai-dist line, got %q", ours)
				case tc.want != "" && (len(ours) != 1 || !strings.Contains(ours[0], tc.want)):
					t.Fatalf("want one fsai-dist line naming %q, got %q", tc.want, ours)
				case len(other) > 0:
					t.Fatalf("unexpected lines on standard error (panic trace? mpirun banner?):\n%s", strings.Join(other, "\n"))
				case tc.log != "" && !logged:
					t.Fatalf("the log lacks %q:\n%s", tc.log, strings.Join(res.lines, "\n"))
				}
				if _, err := os.Stat(rep); (err == nil) != (tc.report != "") {
					t.Fatalf("report written: %v, want %v", err == nil, tc.report != "")
				}
				if tc.report != "" {
					r := readReport(t, rep)
					converged := tc.report == "converged"
					if r["reason"] != tc.report || r["converged"] != converged || !converged && tc.report != "max_iterations" && r["detail"] == "" {
						t.Fatalf("report: reason %v, detail %v, want %s", r["reason"], r["detail"], tc.report)
					}
					if tc.check != nil && !tc.check(r) {
						t.Fatalf("report: %v", r)
					}
				}
				if _, err := os.Stat(out); (err == nil) != tc.out {
					t.Fatalf("iterate written: %v, want %v", err == nil, tc.out)
				}
				if entries, _ := os.ReadDir(outDir); len(entries) != map[bool]int{true: 1, false: 0}[tc.out]+map[bool]int{true: 1, false: 0}[tc.report != ""] {
					t.Fatalf("files left in the output directory: %v", entries)
				}
			})
		}
	}
}
