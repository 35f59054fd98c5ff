package solver

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/fsai-dist/fsai-dist/backend"
)

// An Option is one of the solver's options by name: the one table from
// which the command line's flags (-name), the options file, the
// FSAI_OPTIONS environment variable, Options.Set and the C API's
// fsai_options_set take their names, types, defaults and checks.
type Option struct {
	// Name is the option's name: the command-line flag without its dash.
	Name string
	// Type is what the value is: "string", "int", "float" or "bool".
	Type string
	// Doc is the one-line help of the option.
	Doc string
	// get writes the option's value in o as Set reads it.
	get func(o *Options) string
	// parse stores the value in o: a number or a boolean as strconv
	// reads it (the flag package's syntax), a name checked against its
	// list.
	parse func(o *Options, value string) error
	// check checks the stored value's range; nil takes any.
	check func(o *Options) error
}

// Default is the option's value in DefaultOptions, as Set reads it.
func (op Option) Default() string {
	def := DefaultOptions()
	return op.get(&def)
}

// Get is the option's value in o, as Set reads it.
func (op Option) Get(o *Options) string { return op.get(o) }

// Parse stores value in o without checking its range: an error says why
// value is not of the option's type (or not one of its names).
func (op Option) Parse(o *Options, value string) error { return op.parse(o, value) }

// Check checks the option's value in o; the error says why it is out of
// range, in words that follow the option's name ("4 is not 1, 2 or 3").
func (op Option) Check(o *Options) error {
	if op.check == nil {
		return nil
	}
	return op.check(o)
}

// OptionTable lists the solver's options, in the order of their checks.
func OptionTable() []Option { return slices.Clone(optionTable) }

// LookupOption returns the option called name.
func LookupOption(name string) (Option, bool) {
	i := slices.IndexFunc(optionTable, func(op Option) bool { return op.Name == name })
	if i < 0 {
		return Option{}, false
	}
	return optionTable[i], true
}

// Set sets the option called name (OptionTable: "tol", "afsai.steps", ...)
// to value, read as its type, and checks its range. The zero fields of o
// take their defaults first, so that Set on the zero Options changes one
// option of DefaultOptions. On an error o is unchanged. Options that depend on each other (a method
// and a preconditioner) are checked by New and Bind.
func (o *Options) Set(name, value string) error {
	op, ok := LookupOption(name)
	if !ok {
		return fmt.Errorf("unknown option %q", name)
	}
	set := o.withDefaults()
	if err := op.parse(&set, value); err != nil {
		return fmt.Errorf("option %s: %w", name, err)
	}
	if err := op.Check(&set); err != nil {
		return fmt.Errorf("option %s: %w", name, err)
	}
	*o = set
	return nil
}

// OptionsEnv is the environment variable whose options SetEnv reads.
const OptionsEnv = "FSAI_OPTIONS"

// SetFile sets the options of an options file: one option a line, its
// name (with or without a leading dash) and its value, separated by
// blanks; a boolean's value may be left out (true). A # starts a comment
// to the end of the line; blank lines are skipped. An error names the
// file, the line and the option.
func (o *Options) SetFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("options file: %w", err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		if k := strings.IndexByte(line, '#'); k >= 0 {
			line = line[:k]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		err := o.setFields(fields)
		if err == nil && len(fields) > 2 {
			err = fmt.Errorf("%q after the value of %s", fields[2], fields[0])
		}
		if err != nil {
			return fmt.Errorf("options file %s line %d: %w", path, i+1, err)
		}
	}
	return nil
}

// SetEnv sets the options of the environment variable FSAI_OPTIONS
// (OptionsEnv), when it is set: a sequence of names, each followed by its
// value, as on a command line ("-afsai.steps 20 -tol 1e-10"; a boolean's
// value may be left out). An error names the variable and the option.
func (o *Options) SetEnv() error {
	fields := strings.Fields(os.Getenv(OptionsEnv))
	for len(fields) > 0 {
		n := 2
		if op, ok := LookupOption(optionName(fields[0])); ok && op.Type == "bool" && (len(fields) == 1 || strings.HasPrefix(fields[1], "-")) {
			n = 1
		}
		if err := o.setFields(fields[:min(n, len(fields))]); err != nil {
			return fmt.Errorf("%s: %w", OptionsEnv, err)
		}
		fields = fields[min(n, len(fields)):]
	}
	return nil
}

// setFields sets the option named by fields[0] to fields[1], or a boolean
// to true when there is no fields[1].
func (o *Options) setFields(fields []string) error {
	name := optionName(fields[0])
	op, ok := LookupOption(name)
	if !ok {
		return fmt.Errorf("unknown option %q", name)
	}
	switch {
	case len(fields) > 1:
		return o.Set(name, fields[1])
	case op.Type == "bool":
		return o.Set(name, "true")
	}
	return fmt.Errorf("option %s has no value", name)
}

// optionName strips the one or two dashes a name may start with.
func optionName(s string) string { return strings.TrimPrefix(strings.TrimPrefix(s, "-"), "-") }

// optionTable is the table OptionTable copies.
var optionTable = []Option{
	nameOption("solver", "Krylov method: "+strings.Join(Methods, ", ")+
		" (cg: preconditioned conjugate gradients, SPD matrices; bicgstab, gmres: right preconditioned, nonsymmetric matrices, one right-hand side)",
		func(o *Options) *string { return &o.Method }, Methods, orList),
	intOption("gmres.restart", "GMRES(m): the restart length m (the basis holds m+1 vectors)",
		func(o *Options) *int { return &o.GMRESRestart }, positive),
	boolOption("pcg.single-reduction", "CG: single-reduction variant (Chronopoulos-Gear): one Allreduce per iteration instead of two, and on a GPU one wait, for one more vector and one more vector update; may take a few more iterations (other methods ignore it)",
		func(o *Options) *bool { return &o.CGSingleReduction }),
	nameOption("prec", "preconditioner: "+strings.Join(Precs, ", "),
		func(o *Options) *string { return &o.Prec }, Precs, func(names []string) string { return "one of " + strings.Join(names, ", ") }),
	nameOption("coarse", "coarse space of rigid-body modes (constants for one unknown a node) on a grid of boxes over the matrix's geometry (-problem, -coordinates), which balances the preconditioner (two-level, docs/coarse.md): auto (with afsai and fsai where the geometry has three unknowns a node), on (any preconditioner of cg; needs a geometry), off",
		func(o *Options) *string { return &o.Coarse }, CoarseModes, orList),
	intOption("coarse.boxes", "coarse space: boxes along each axis of the geometry's bounding box (0: from the problem's size, at most 6)",
		func(o *Options) *int { return &o.CoarseBoxes }, notNegative),
	floatOption("tol", "relative residual ||r||/||b|| to stop at", func(o *Options) *float64 { return &o.Tol },
		finiteIn("(0,1)", func(v float64) bool { return v > 0 && v < 1 })),
	intOption("maxit", "maximum iterations (GMRES: Arnoldi steps)", func(o *Options) *int { return &o.MaxIt }, notNegative),
	intOption("stagnation", "stop when the residual has not fallen 0.1% below its lowest value over the latter half of the iterations, and over at least this many (0, the default: never)",
		func(o *Options) *int { return &o.Stagnation }, notNegative),
	floatOption("divtol", "stop with reason diverged when the relative residual exceeds this many times the initial one (inf: never; 0, the default: 1e10 for bicgstab and gmres, never for cg, whose residual can grow 1e5-fold in a solve that converges)",
		func(o *Options) *float64 { return &o.DivTol }, func(v float64) error {
			if v != 0 && !(v > 1) {
				return fmt.Errorf("%g is not above 1", v)
			}
			return nil
		}),
	nameOption("backend", "compute backend: auto (CUDA when a GPU is found, else CPU), cpu, cuda",
		func(o *Options) *string { return &o.Backend }, Backends, orList),
	intOption("threads", "CPU threads per rank (0: the node's cores shared among its ranks)", func(o *Options) *int { return &o.Threads }, notNegative),
	boolOption("gpu.share", "allow more ranks than GPUs on a node (ranks share GPUs round-robin)", func(o *Options) *bool { return &o.ShareGPU }),
	boolOption("gpu.host-halos", "send halos through the host also between GPUs of one node (default: device to device, CUDA IPC)",
		func(o *Options) *bool { return &o.HostHalos }),
	{Name: "matrix.narrow", Type: "bool",
		Doc: "store A's values, and FSAI's G and G' under -afsai.apply double, in float32 where they are all float32 numbers (the same values exactly, half the bytes); false keeps float64",
		get: func(o *Options) string { return strconv.FormatBool(!o.Wide) },
		parse: func(o *Options, value string) error {
			narrow, err := strconv.ParseBool(value)
			if err == nil {
				o.Wide = !narrow
			}
			return typeError(value, "a boolean", err)
		}},
	intOption("afsai.steps", "aFSAI: most pattern-growing steps per row (kmax)", func(o *Options) *int { return &o.FSAI.Params.Steps }, notNegative),
	intOption("afsai.step-size", "aFSAI: entries added to a row per step (s)", func(o *Options) *int { return &o.FSAI.Params.StepSize }, func(v int) error {
		if v < 1 {
			return fmt.Errorf("%d is below 1", v)
		}
		return nil
	}),
	floatOption("afsai.eps", "aFSAI: stop a row when its Kaporin number falls by this factor", func(o *Options) *float64 { return &o.FSAI.Params.Eps }, fraction),
	floatOption("afsai.stall", "aFSAI: stop a row after a step that lowers its Kaporin number by less than this fraction (0: off)",
		func(o *Options) *float64 { return &o.FSAI.Params.Stall }, fraction),
	boolOption("afsai.scaled", "aFSAI: rank candidate entries by |gradient_j|/sqrt(a_jj) instead of |gradient_j|", func(o *Options) *bool { return &o.FSAI.Params.Scaled }),
	intOption("afsai.power", "aFSAI and FSAI: G reaches ranks within this power of the block graph (1-3)", func(o *Options) *int { return &o.FSAI.Power }, oneToThree),
	intOption("afsai.reach", "aFSAI and FSAI: gather the neighbours' rows within this many hops of the rank's rows (0: all the set-up can look at, steps+1 or fsai.k hops, which gives the G of whole stripes; fewer gathers less and changes G near the stripes' starts)",
		func(o *Options) *int { return &o.FSAI.Reach }, notNegative),
	precisionOption("afsai.precision", "precision of the FSAI set-up: single or double", func(o *Options) *backend.Precision { return &o.FSAI.Setup }),
	precisionOption("afsai.apply", "the precision G and G' keep for PCG: double (stored in float32 when their values are float32 numbers, as a single-precision set-up's are, unless -matrix.narrow=false), or single (float32 values with float64 vectors: half the traffic of G)",
		func(o *Options) *backend.Precision { return &o.FSAI.Apply }),
	floatOption("fsai.tau", "static FSAI: drop |a_ij| <= tau*sqrt(a_ii a_jj) before building the pattern",
		func(o *Options) *float64 { return &o.FSAI.StaticParams.Tau }, finiteIn("", func(v float64) bool { return v >= 0 })),
	intOption("fsai.k", "static FSAI: pattern of Low(A~^k)", func(o *Options) *int { return &o.FSAI.StaticParams.K }, oneToThree),
	floatOption("fsai.delta", "static FSAI: post-filter entries below delta times the row norm",
		func(o *Options) *float64 { return &o.FSAI.StaticParams.Delta }, finiteIn("", func(v float64) bool { return v >= 0 })),
	floatOption("spai.tau", "SPAI: keep a_ij in M's pattern when |a_ij| > (1-tau) max_j |a_ij| of its row (0 to 1; the diagonal always)",
		func(o *Options) *float64 { return &o.SPAI.Tau }, func(v float64) error {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("%g is not in [0,1]", v)
			}
			return nil
		}),
	intOption("spai.k", fmt.Sprintf("SPAI: M has the pattern of the thresholded A to the power k (1 to %d)", SPAIMaxK), func(o *Options) *int { return &o.SPAI.K }, func(v int) error {
		if v < 1 || v > SPAIMaxK {
			return fmt.Errorf("%d is not in [1,%d]", v, SPAIMaxK)
		}
		return nil
	}),
	{Name: "log", Type: "bool",
		Doc: "account for the solve's time by operation (products with A, the preconditioner, the rest: vector updates and reductions) and the bytes they move on each rank, with each rank's peak memory, in the report's log and a table on standard output; on a GPU timed with events in the device's queue, read at the end of the solve, elsewhere waiting for the backend after each operation",
		get: func(o *Options) string { return strconv.FormatBool(o.Log != nil) },
		parse: func(o *Options, value string) error {
			on, err := strconv.ParseBool(value)
			switch {
			case err != nil:
			case on && o.Log == nil:
				o.Log = &OpLog{}
			case !on:
				o.Log = nil
			}
			return typeError(value, "a boolean", err)
		}},
	boolOption("spai.device", "SPAI: with -backend cuda, build and solve the least-squares blocks on the GPU, from the rank's rows of A uploaded once (by default the host's cores compute M's rows)",
		func(o *Options) *bool { return &o.SPAIOnDevice }),
}

// intOption is an integer option stored in *field(o), checked by check.
func intOption(name, doc string, field func(*Options) *int, check func(int) error) Option {
	return Option{Name: name, Type: "int", Doc: doc,
		get: func(o *Options) string { return strconv.Itoa(*field(o)) },
		parse: func(o *Options, value string) error {
			v, err := strconv.ParseInt(value, 0, strconv.IntSize)
			if err == nil {
				*field(o) = int(v)
			}
			return typeError(value, "an integer", err)
		},
		check: func(o *Options) error { return check(*field(o)) }}
}

// floatOption is a real option stored in *field(o), checked by check.
func floatOption(name, doc string, field func(*Options) *float64, check func(float64) error) Option {
	return Option{Name: name, Type: "float", Doc: doc,
		get: func(o *Options) string { return strconv.FormatFloat(*field(o), 'g', -1, 64) },
		parse: func(o *Options, value string) error {
			v, err := strconv.ParseFloat(value, 64)
			if err == nil {
				*field(o) = v
			}
			return typeError(value, "a number", err)
		},
		check: func(o *Options) error { return check(*field(o)) }}
}

// boolOption is a boolean option stored in *field(o).
func boolOption(name, doc string, field func(*Options) *bool) Option {
	return Option{Name: name, Type: "bool", Doc: doc,
		get: func(o *Options) string { return strconv.FormatBool(*field(o)) },
		parse: func(o *Options, value string) error {
			v, err := strconv.ParseBool(value)
			if err == nil {
				*field(o) = v
			}
			return typeError(value, "a boolean", err)
		}}
}

// nameOption is a string option stored in *field(o), one of names, which
// an error lists as list(names) does.
func nameOption(name, doc string, field func(*Options) *string, names []string, list func([]string) string) Option {
	return Option{Name: name, Type: "string", Doc: doc,
		get:   func(o *Options) string { return *field(o) },
		parse: func(o *Options, value string) error { *field(o) = value; return nil },
		check: func(o *Options) error {
			if v := *field(o); !slices.Contains(names, v) {
				return fmt.Errorf("%q is not %s", v, list(names))
			}
			return nil
		}}
}

// precisionOption is a precision, single or double, stored in *field(o).
func precisionOption(name, doc string, field func(*Options) *backend.Precision) Option {
	return Option{Name: name, Type: "string", Doc: doc,
		get: func(o *Options) string { return field(o).String() },
		parse: func(o *Options, value string) error {
			switch value {
			case "single":
				*field(o) = backend.Single
			case "double":
				*field(o) = backend.Double
			default:
				return fmt.Errorf("%q is not single or double", value)
			}
			return nil
		}}
}

// typeError says that value is not what a strconv function read it as.
func typeError(value, what string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%q is out of range", value)
	}
	return fmt.Errorf("%q is not %s", value, what)
}

// orList writes names as "a, b or c".
func orList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func positive(v int) error {
	if v < 1 {
		return fmt.Errorf("%d is not positive", v)
	}
	return nil
}

func notNegative(v int) error {
	if v < 0 {
		return fmt.Errorf("%d is negative", v)
	}
	return nil
}

func oneToThree(v int) error {
	if v < 1 || v > 3 {
		return fmt.Errorf("%d is not 1, 2 or 3", v)
	}
	return nil
}

// fraction takes a finite value in [0,1).
func fraction(v float64) error {
	return finiteIn("[0,1)", func(v float64) bool { return v >= 0 && v < 1 })(v)
}

// finiteIn takes a finite value for which in holds; an error says it is
// not in the interval span, or negative when span is "".
func finiteIn(span string, in func(float64) bool) func(float64) error {
	return func(v float64) error {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return fmt.Errorf("%g is not a finite number", v)
		case in(v):
			return nil
		case span == "":
			return fmt.Errorf("%g is negative", v)
		}
		return fmt.Errorf("%g is not in %s", v, span)
	}
}
