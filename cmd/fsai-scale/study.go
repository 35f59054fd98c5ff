package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
)

// studyCmd is the strong and the weak scaling study.
type studyCmd struct {
	weak bool
	common
	// strong: the fixed problem
	problem, matrix string
	// weak: the problem family and the rows each rank gets
	family      string
	rowsPerRank int64
	// run the study's largest run once first, unrecorded
	warmup bool
}

// families are the built-in problems of fsai-dist on an N^3 grid.
var families = []string{"poisson7", "poisson27", "diffusion", "aniso", "convdiff"}

func (s *studyCmd) name() string {
	if s.weak {
		return "weak"
	}
	return "strong"
}

func (s *studyCmd) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("fsai-scale "+s.name(), flag.ContinueOnError)
	s.common.register(fs, filepath.Join("out", "scale", s.name()))
	fs.BoolVar(&s.warmup, "warmup", false, "run the study's largest run (strong: the fewest ranks; weak: the most) once first and discard it, so that first-touch costs (fresh memory, kernel compilation, file cache) fall on no measured run")
	if s.weak {
		fs.StringVar(&s.family, "family", "poisson7", "problem family: "+strings.Join(families, ", ")+" (an N^3 grid)")
		fs.Int64Var(&s.rowsPerRank, "rows-per-rank", 1000000, "rows per rank R: each run solves family:N with N = round(cbrt(R*ranks))")
	} else {
		fs.StringVar(&s.problem, "problem", "poisson7:64", "the fixed problem, a built-in fsai-dist -problem spec")
		fs.StringVar(&s.matrix, "matrix", "", "the fixed problem from a matrix file (fsai-dist -matrix) instead of -problem")
	}
	return fs
}

// gridSize is the N of the weak-scaling problem on ranks ranks: the N^3
// grid closest to rowsPerRank rows per rank.
func gridSize(rowsPerRank int64, ranks int) int {
	return int(math.Round(math.Cbrt(float64(rowsPerRank) * float64(ranks))))
}

// source returns the fsai-dist arguments that name the matrix of the run
// on ranks ranks, and the label of the problem in the CSV.
func (s *studyCmd) source(ranks int) (args []string, label string) {
	switch {
	case s.weak:
		label = fmt.Sprintf("%s:%d", s.family, gridSize(s.rowsPerRank, ranks))
	case s.matrix != "":
		return []string{"-matrix", s.matrix}, s.matrix
	default:
		label = s.problem
	}
	return []string{"-problem", label}, label
}

func (s *studyCmd) check(passthrough []string) error {
	if s.weak {
		if !slices.Contains(families, s.family) {
			return usagef("flag -family: %q is not one of %s", s.family, strings.Join(families, ", "))
		}
		if s.rowsPerRank < 1 {
			return usagef("flag -rows-per-rank: %d is not positive", s.rowsPerRank)
		}
	}
	return checkPassthrough(passthrough)
}

// checkPassthrough refuses fsai-dist flags that the study sets itself: they
// would silently replace the problem or the report of every run.
func checkPassthrough(args []string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains([]string{"problem", "matrix", "report"}, name) {
			return usagef("%s after -- would override the study's own; use fsai-scale's flags", a)
		}
	}
	return nil
}

func (s *studyCmd) run(passthrough []string, log io.Writer) (int, error) {
	if err := s.check(passthrough); err != nil {
		return 0, err
	}
	r, err := s.newRunner()
	if err != nil {
		return 0, err
	}
	if s.warmup {
		n := s.ranks[0]
		if s.weak {
			n = s.ranks[len(s.ranks)-1]
		}
		args, label := s.source(n)
		rec := r.fsaiDist(n, label, fmt.Sprintf("%s-np%d-warmup", s.name(), n), args, passthrough)
		fmt.Fprintf(log, "%s: warm-up, not recorded: %s\n", s.name(), rec.summary())
	}
	recs := make([]record, 0, len(s.ranks))
	for _, n := range s.ranks {
		args, label := s.source(n)
		rec := r.fsaiDist(n, label, fmt.Sprintf("%s-np%d", s.name(), n), args, passthrough)
		fmt.Fprintf(log, "%s: %s\n", s.name(), rec.summary())
		recs = append(recs, rec)
	}
	setEfficiency(recs, s.weak)

	csvPath := filepath.Join(s.out, "scaling.csv")
	if err := writeCSV(csvPath, studyColumns, recs); err != nil {
		return 0, err
	}
	plots, err := plotStudy(s.out, s.title(recs), recs, s.weak)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(log, "%s: wrote %s and %d plots in %s\n", s.name(), csvPath, len(plots), s.out)
	return exitStatus(log, s.name(), recs, (*record).ok), nil
}

// title names the study in its plots: problem, backend and preconditioner
// as the first run that reported them.
func (s *studyCmd) title(recs []record) string {
	t := "strong scaling: " + s.problem
	if s.matrix != "" {
		t = "strong scaling: " + filepath.Base(s.matrix)
	}
	if s.weak {
		t = fmt.Sprintf("weak scaling: %s, %d rows per rank", s.family, s.rowsPerRank)
	}
	for _, r := range recs {
		if r.rep != nil {
			return fmt.Sprintf("%s (%s, %s)", t, r.rep.Backend, r.rep.Prec)
		}
	}
	return t
}

// exitStatus is 0 when every row is ok, else 3 after saying how many are
// not.
func exitStatus[T any](log io.Writer, name string, rows []T, ok func(*T) bool) int {
	failed := 0
	for i := range rows {
		if !ok(&rows[i]) {
			failed++
		}
	}
	if failed == 0 {
		return exitOK
	}
	fmt.Fprintf(log, "%s: %d of %d runs failed or did not converge (see the reason column of the CSV and runs/*.log)\n",
		name, failed, len(rows))
	return exitRunsFail
}
