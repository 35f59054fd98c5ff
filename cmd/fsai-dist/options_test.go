package main

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fsai-dist/fsai-dist/solver"
)

// samplesFile holds a value other than the default for each of the
// solver's options (solver.OptionTable), as an options file.
var samplesFile = filepath.Join("..", "..", "solver", "testdata", "samples.opts")

// samples reads samplesFile as name, value pairs.
func samples(t *testing.T) [][2]string {
	data, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	var pairs [][2]string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			pairs = append(pairs, [2]string{f[0], f[1]})
		}
	}
	if len(pairs) != len(solver.OptionTable()) {
		t.Fatalf("%d samples for %d options", len(pairs), len(solver.OptionTable()))
	}
	return pairs
}

// parse runs parseFlags on args and returns the solver's options.
func parse(t *testing.T, args ...string) solver.Options {
	t.Helper()
	o, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return o.solver
}

// TestFlagsFromTable checks that every option of the table is a flag with
// its default, and that each sample reaches the solver's options through
// its flag, the options file and FSAI_OPTIONS as through Options.Set.
func TestFlagsFromTable(t *testing.T) {
	t.Setenv(solver.OptionsEnv, "")
	if got := parse(t); !reflect.DeepEqual(got, solver.DefaultOptions()) {
		t.Errorf("no flags: %+v, want the defaults %+v", got, solver.DefaultOptions())
	}
	var all solver.Options
	var flags, env []string
	for _, s := range samples(t) {
		var want solver.Options
		if err := want.Set(s[0], s[1]); err != nil {
			t.Fatal(err)
		}
		if err := all.Set(s[0], s[1]); err != nil {
			t.Fatal(err)
		}
		if got := parse(t, "-"+s[0]+"="+s[1]); !reflect.DeepEqual(got, want) {
			t.Errorf("-%s %s: %+v, want %+v", s[0], s[1], got, want)
		}
		flags = append(flags, "-"+s[0]+"="+s[1])
		env = append(env, "-"+s[0], s[1])
	}
	if got := parse(t, flags...); !reflect.DeepEqual(got, all) {
		t.Errorf("every flag: %+v, want %+v", got, all)
	}
	if got := parse(t, "-options", samplesFile); !reflect.DeepEqual(got, all) {
		t.Errorf("options file: %+v, want %+v", got, all)
	}
	t.Setenv(solver.OptionsEnv, strings.Join(env, " "))
	if got := parse(t); !reflect.DeepEqual(got, all) {
		t.Errorf("%s: %+v, want %+v", solver.OptionsEnv, got, all)
	}
}

// TestOptionsPrecedence checks that FSAI_OPTIONS overrides the options
// file and a flag overrides both.
func TestOptionsPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "o.opts")
	if err := os.WriteFile(file, []byte("tol 1e-3\nmaxit 5\nafsai.steps 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(solver.OptionsEnv, "-tol 1e-4 -maxit 6")
	got := parse(t, "-options", file, "-tol", "1e-5")
	if got.Tol != 1e-5 || got.MaxIt != 6 || got.FSAI.Params.Steps != 4 {
		t.Errorf("tol %g (want the flag's 1e-5), maxit %d (want the environment's 6), afsai.steps %d (want the file's 4)",
			got.Tol, got.MaxIt, got.FSAI.Params.Steps)
	}
}

// TestOptionsErrors checks the one-line errors of each source.
func TestOptionsErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "o.opts")
	if err := os.WriteFile(file, []byte("tol 1e-3\n\n-afsai.stepz 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{args: []string{"-options", file}, want: "options file " + file + ` line 3: unknown option "afsai.stepz"`},
		{env: "-afsai.stepz 4", want: `FSAI_OPTIONS: unknown option "afsai.stepz"`},
		{args: []string{"-afsai.stepz", "4"}, want: "flag provided but not defined: -afsai.stepz"},
		{env: "-afsai.steps x", want: `FSAI_OPTIONS: option afsai.steps: "x" is not an integer`},
		{args: []string{"-afsai.steps", "x"}, want: `invalid value "x" for flag -afsai.steps: parse error`},
		{args: []string{"-afsai.power", "4"}, want: "flag -afsai.power: 4 is not 1, 2 or 3"},
		{args: []string{"-afsai.precision", "half"}, want: `flag -afsai.precision: "half" is not single or double`},
		{args: []string{"-solver", "cgs"}, want: `flag -solver: "cgs" is not bicgstab, cg or gmres`},
		{env: "-prec spai", want: "flag -prec: spai is not symmetric, which -solver cg needs: use -solver bicgstab or gmres"},
	} {
		t.Setenv(solver.OptionsEnv, tc.env)
		if _, err := parseFlags(tc.args, io.Discard); err == nil || err.Error() != tc.want {
			t.Errorf("%q with %s=%q: error %v, want %s", tc.args, solver.OptionsEnv, tc.env, err, tc.want)
		}
	}
}
