package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHonestConvergence: on systems where the recurrence's residual
// misleads (a nearly singular matrix, a tolerance below what double
// precision attains) or whose scale under- or overflows a plain norm, every
// rank exits 0 only with a report that says converged and a true relres at
// or below -tol, and otherwise exits 3 with max_iterations and a detail
// naming the attainable accuracy; on 1 and 3 ranks. The right-hand sides
// of entries 1e-200 and 1e200 converge.
func TestHonestConvergence(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	// the Neumann Laplacian of a 30-point path plus 1e-14 I: condition
	// about 4e14, so double precision attains a relative residual near 1e-2
	var shifted []string
	for i := 1; i <= 30; i++ {
		d := "2.00000000000001"
		if i == 1 || i == 30 {
			d = "1.00000000000001"
		}
		shifted = append(shifted, fmt.Sprintf("%d %d %s", i, i, d))
		if i > 1 {
			shifted = append(shifted, fmt.Sprintf("%d %d -1", i, i-1))
		}
	}
	files := map[string]string{
		"shifted.mtx": mtxFile("symmetric", 30, shifted...),
		"lap.mtx":     mtxFile("symmetric", 12, laplace(12, false)...),
		"tiny.vec":    arrayFile(slices.Repeat([]string{"1e-200"}, 12)...),
		"big.vec":     arrayFile(slices.Repeat([]string{"1e200"}, 12)...),
	}
	for name, text := range files {
		if err := os.WriteFile(in(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name     string
		args     []string
		converge bool // must converge
	}{
		{"neumann none", []string{"-matrix", in("shifted.mtx"), "-prec", "none", "-maxit", "400"}, false},
		{"neumann jacobi", []string{"-matrix", in("shifted.mtx"), "-prec", "jacobi", "-maxit", "400"}, false},
		{"neumann afsai", []string{"-matrix", in("shifted.mtx"), "-prec", "afsai", "-maxit", "400"}, false},
		{"neumann fsai", []string{"-matrix", in("shifted.mtx"), "-prec", "fsai", "-maxit", "400"}, false},
		{"tol 1e-20", []string{"-problem", "diffusion:6", "-prec", "jacobi", "-tol", "1e-20", "-maxit", "100"}, false},
		{"rhs 1e-200", []string{"-matrix", in("lap.mtx"), "-rhs", in("tiny.vec")}, true},
		{"rhs 1e200", []string{"-matrix", in("lap.mtx"), "-rhs", in("big.vec")}, true},
	}
	for _, tc := range cases {
		for _, np := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/np%d", strings.ReplaceAll(tc.name, " ", "_"), np), func(t *testing.T) {
				t.Parallel()
				rep := filepath.Join(t.TempDir(), "r.json")
				res := ranksRun(t, np, nil, append([]string{"-report", rep, "-progress", "0"}, tc.args...)...)
				if len(res.statuses) != np {
					t.Fatalf("%d of %d ranks reported their exit\n%s", len(res.statuses), np, strings.Join(res.lines, "\n"))
				}
				r := readReport(t, rep)
				tol, _ := r["tol"].(float64)
				relres, _ := r["relres"].(float64)
				detail, _ := r["detail"].(string)
				for _, s := range res.statuses {
					switch {
					case s == 0 && (r["converged"] != true || !(relres <= tol)):
						t.Fatalf("exit 0 with converged %v, relres %v, tol %v", r["converged"], r["relres"], tol)
					case s == 3 && (r["converged"] != false || r["reason"] != "max_iterations" ||
						!strings.Contains(detail, "attainable accuracy") || r["replacements"].(float64) < 1):
						t.Fatalf("exit 3 with report %v", r)
					case s != 0 && tc.converge:
						t.Fatalf("exit %d, want 0: report %v", s, r)
					case s != 0 && s != 3:
						t.Fatalf("exit %d\n%s", s, strings.Join(res.lines, "\n"))
					}
				}
				t.Logf("exit %d: %v after %v iterations, relres %v, recurrence %v, %v replacements", res.statuses[0],
					r["reason"], r["iterations"], r["relres"], r["recurrence_relres"], r["replacements"])
			})
		}
	}
}
