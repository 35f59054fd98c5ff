package main

import (
	"flag"
	"fmt"
	"math"
	"strings"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/solver"
)

// fsaiFlags are the tuning flags of the FSAI preconditioners.
type fsaiFlags struct {
	cfg       solver.FSAIConfig
	precision string
	apply     string
	values    map[string]string // every FSAI flag's value, by name
}

func (f *fsaiFlags) register(fs *flag.FlagSet) {
	f.cfg = solver.DefaultOptions().FSAI
	p, s := &f.cfg.Params, &f.cfg.StaticParams
	fs.IntVar(&p.Steps, "afsai.steps", p.Steps, "aFSAI: most pattern-growing steps per row (kmax)")
	fs.IntVar(&p.StepSize, "afsai.step-size", p.StepSize, "aFSAI: entries added to a row per step (s)")
	fs.Float64Var(&p.Eps, "afsai.eps", p.Eps, "aFSAI: stop a row when its Kaporin number falls by this factor")
	fs.Float64Var(&p.Stall, "afsai.stall", p.Stall, "aFSAI: stop a row after a step that lowers its Kaporin number by less than this fraction (0: off)")
	fs.BoolVar(&p.Scaled, "afsai.scaled", p.Scaled, "aFSAI: rank candidate entries by |gradient_j|/sqrt(a_jj) instead of |gradient_j|")
	fs.IntVar(&f.cfg.Power, "afsai.power", f.cfg.Power, "aFSAI and FSAI: G reaches ranks within this power of the block graph (1-3)")
	fs.IntVar(&f.cfg.Reach, "afsai.reach", 0, "aFSAI and FSAI: gather the neighbours' rows within this many hops of the rank's rows (0: all the set-up can look at, steps+1 or fsai.k hops, which gives the G of whole stripes; fewer gathers less and changes G near the stripes' starts)")
	fs.StringVar(&f.precision, "afsai.precision", "single", "precision of the FSAI set-up: single or double")
	fs.StringVar(&f.apply, "afsai.apply", "double", "the precision G and G' keep for PCG: double (stored in float32 when their values are float32 numbers, as a single-precision set-up's are, unless -matrix.narrow=false), or single (float32 values with float64 vectors: half the traffic of G)")
	fs.Float64Var(&s.Tau, "fsai.tau", s.Tau, "static FSAI: drop |a_ij| <= tau*sqrt(a_ii a_jj) before building the pattern")
	fs.IntVar(&s.K, "fsai.k", s.K, "static FSAI: pattern of Low(A~^k)")
	fs.Float64Var(&s.Delta, "fsai.delta", s.Delta, "static FSAI: post-filter entries below delta times the row norm")
}

// check checks the parsed flags of fs and records their values.
func (f *fsaiFlags) check(fs *flag.FlagSet) error {
	f.values = flagValues(fs, "afsai.", "fsai.")
	p, s := f.cfg.Params, f.cfg.StaticParams
	for _, v := range []struct {
		flag  string
		value float64
	}{{"afsai.eps", p.Eps}, {"afsai.stall", p.Stall}, {"fsai.tau", s.Tau}, {"fsai.delta", s.Delta}} {
		if err := finite(v.flag, v.value); err != nil {
			return err
		}
	}
	var err error
	if f.cfg.Setup, err = parsePrecision("afsai.precision", f.precision); err != nil {
		return err
	}
	if f.cfg.Apply, err = parsePrecision("afsai.apply", f.apply); err != nil {
		return err
	}
	if f.cfg.Power < 1 || f.cfg.Power > 3 {
		return fmt.Errorf("flag -afsai.power: %d is not 1, 2 or 3", f.cfg.Power)
	}
	if f.cfg.Reach < 0 {
		return fmt.Errorf("flag -afsai.reach: %d is negative", f.cfg.Reach)
	}
	switch {
	case p.Steps < 0:
		return fmt.Errorf("flag -afsai.steps: %d is negative", p.Steps)
	case p.StepSize < 1:
		return fmt.Errorf("flag -afsai.step-size: %d is below 1", p.StepSize)
	case !(p.Eps >= 0 && p.Eps < 1):
		return fmt.Errorf("flag -afsai.eps: %g is not in [0,1)", p.Eps)
	case !(p.Stall >= 0 && p.Stall < 1):
		return fmt.Errorf("flag -afsai.stall: %g is not in [0,1)", p.Stall)
	case !(s.Tau >= 0):
		return fmt.Errorf("flag -fsai.tau: %g is negative", s.Tau)
	case s.K < 1 || s.K > 3:
		return fmt.Errorf("flag -fsai.k: %d is not 1, 2 or 3", s.K)
	case !(s.Delta >= 0):
		return fmt.Errorf("flag -fsai.delta: %g is negative", s.Delta)
	}
	return nil
}

// flagValues returns the value, set or default, of every flag of fs whose
// name starts with one of prefixes.
func flagValues(fs *flag.FlagSet, prefixes ...string) map[string]string {
	values := map[string]string{}
	fs.VisitAll(func(fl *flag.Flag) {
		for _, p := range prefixes {
			if strings.HasPrefix(fl.Name, p) {
				values[fl.Name] = fl.Value.String()
			}
		}
	})
	return values
}

// spaiFlags are the pattern flags of the SPAI preconditioner.
type spaiFlags struct {
	params   solver.SPAIParams
	onDevice bool
	values   map[string]string // every SPAI flag's value, by name
}

func (f *spaiFlags) register(fs *flag.FlagSet) {
	f.params = solver.DefaultOptions().SPAI
	fs.Float64Var(&f.params.Tau, "spai.tau", f.params.Tau, "SPAI: keep a_ij in M's pattern when |a_ij| > (1-tau) max_j |a_ij| of its row (0 to 1; the diagonal always)")
	fs.IntVar(&f.params.K, "spai.k", f.params.K, fmt.Sprintf("SPAI: M has the pattern of the thresholded A to the power k (1 to %d)", solver.SPAIMaxK))
	fs.BoolVar(&f.onDevice, "spai.device", false, "SPAI: with -backend cuda, solve the least-squares blocks on the GPU (gathered on the host and copied over; by default the host's cores solve them, which is faster on the nodes measured)")
}

// check checks the parsed flags of fs and records their values.
func (f *spaiFlags) check(fs *flag.FlagSet) error {
	f.values = flagValues(fs, "spai.")
	switch {
	case !(f.params.Tau >= 0 && f.params.Tau <= 1):
		return fmt.Errorf("flag -spai.tau: %g is not in [0,1]", f.params.Tau)
	case f.params.K < 1 || f.params.K > solver.SPAIMaxK:
		return fmt.Errorf("flag -spai.k: %d is not in [1,%d]", f.params.K, solver.SPAIMaxK)
	}
	return nil
}

// finite refuses a value of a float flag that is NaN or infinite, which
// strconv reads but no tuning parameter means.
func finite(flag string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("flag -%s: %g is not a finite number", flag, v)
	}
	return nil
}

// parsePrecision reads the value of a precision flag.
func parsePrecision(flag, value string) (backend.Precision, error) {
	switch value {
	case "single":
		return backend.Single, nil
	case "double":
		return backend.Double, nil
	}
	return 0, fmt.Errorf("flag -%s: %q is not single or double", flag, value)
}
