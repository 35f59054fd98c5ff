package solver

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// samplesFile holds a valid value other than the default for each
// option of the table.
const samplesFile = "testdata/samples.opts"

// optionSamples reads samplesFile: the sample value of each option.
func optionSamples(t *testing.T) map[string]string {
	data, err := os.ReadFile(samplesFile)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			samples[f[0]] = f[1]
		}
	}
	return samples
}

// TestOptionSources sets every option of the table, one at a time, through
// Set, an options file and FSAI_OPTIONS, and checks that each reaches the
// same Options, differs from the defaults and reads back.
func TestOptionSources(t *testing.T) {
	dir := t.TempDir()
	samples := optionSamples(t)
	for _, op := range OptionTable() {
		value, ok := samples[op.Name]
		if !ok {
			t.Errorf("option %s has no sample value", op.Name)
			continue
		}
		var set, again Options
		if err := set.Set(op.Name, value); err != nil {
			t.Fatalf("Set(%s, %s): %v", op.Name, value, err)
		}
		if reflect.DeepEqual(set, DefaultOptions()) {
			t.Errorf("option %s: Set %s leaves the defaults", op.Name, value)
		}
		if err := again.Set(op.Name, op.Get(&set)); err != nil || !reflect.DeepEqual(again, set) {
			t.Errorf("option %s: Set %s, Get %s does not read back: %v", op.Name, value, op.Get(&set), err)
		}
		file := filepath.Join(dir, op.Name+".opts")
		if err := os.WriteFile(file, []byte(fmt.Sprintf("# one option\n\n-%s %s # the sample\n", op.Name, value)), 0o644); err != nil {
			t.Fatal(err)
		}
		fromFile := DefaultOptions()
		if err := fromFile.SetFile(file); err != nil {
			t.Fatalf("option %s from a file: %v", op.Name, err)
		}
		t.Setenv(OptionsEnv, fmt.Sprintf("  %s %s ", op.Name, value))
		fromEnv := DefaultOptions()
		if err := fromEnv.SetEnv(); err != nil {
			t.Fatalf("option %s from %s: %v", op.Name, OptionsEnv, err)
		}
		if !reflect.DeepEqual(fromFile, set) || !reflect.DeepEqual(fromEnv, set) {
			t.Errorf("option %s: Set gives %+v, the file %+v, the environment %+v", op.Name, set, fromFile, fromEnv)
		}
	}
	if len(samples) != len(OptionTable()) {
		t.Errorf("%d samples for %d options", len(samples), len(OptionTable()))
	}
}

// TestOptionBooleans leaves out a boolean's value, in a file and in the
// environment, where it means true.
func TestOptionBooleans(t *testing.T) {
	file := filepath.Join(t.TempDir(), "b.opts")
	if err := os.WriteFile(file, []byte("gpu.share\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var fromFile, fromEnv Options
	if err := fromFile.SetFile(file); err != nil || !fromFile.ShareGPU {
		t.Errorf("file: ShareGPU %v, error %v", fromFile.ShareGPU, err)
	}
	t.Setenv(OptionsEnv, "-gpu.host-halos -tol 1e-3 --gpu.share")
	if err := fromEnv.SetEnv(); err != nil || !fromEnv.HostHalos || !fromEnv.ShareGPU || fromEnv.Tol != 1e-3 {
		t.Errorf("environment: %+v, error %v", fromEnv, err)
	}
}

// TestOptionErrors checks that an unknown, malformed or out-of-range
// option is refused by each source, with a message naming it and where
// it came from.
func TestOptionErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		line, want string
	}{
		{"afsai.stepz 4", `unknown option "afsai.stepz"`},
		{"afsai.power 4", "option afsai.power: 4 is not 1, 2 or 3"},
		{"tol abc", `option tol: "abc" is not a number`},
		{"tol NaN", "option tol: NaN is not a finite number"},
		{"tol 2", "option tol: 2 is not in (0,1)"},
		{"maxit 1e3", `option maxit: "1e3" is not an integer`},
		{"maxit 99999999999999999999", `option maxit: "99999999999999999999" is out of range`},
		{"gpu.share maybe", `option gpu.share: "maybe" is not a boolean`},
		{"matrix.narrow no", `option matrix.narrow: "no" is not a boolean`},
		{"solver cgs", `option solver: "cgs" is not bicgstab, cg or gmres`},
		{"prec ilu", `option prec: "ilu" is not one of afsai, fsai, jacobi, none, spai`},
		{"backend gpu", `option backend: "gpu" is not auto, cpu or cuda`},
		{"afsai.apply half", `option afsai.apply: "half" is not single or double`},
		{"spai.k 9", "option spai.k: 9 is not in [1,4]"},
		{"fsai.delta -1", "option fsai.delta: -1 is negative"},
		{"afsai.eps 1", "option afsai.eps: 1 is not in [0,1)"},
		{"threads -2", "option threads: -2 is negative"},
	} {
		fields := strings.Fields(tc.line)
		o := DefaultOptions()
		if err := o.Set(fields[0], fields[1]); err == nil || err.Error() != tc.want {
			t.Errorf("Set %s: error %v, want %s", tc.line, err, tc.want)
		}
		if !reflect.DeepEqual(o, DefaultOptions()) {
			t.Errorf("Set %s changed the options: %+v", tc.line, o)
		}
		file := filepath.Join(dir, "bad.opts")
		if err := os.WriteFile(file, []byte("# bad\ntol 1e-6\n"+tc.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("options file %s line 3: %s", file, tc.want)
		if err := o.SetFile(file); err == nil || err.Error() != want {
			t.Errorf("file line %s: error %v, want %s", tc.line, err, want)
		}
		t.Setenv(OptionsEnv, "-tol 1e-6 -"+tc.line)
		want = OptionsEnv + ": " + tc.want
		if err := o.SetEnv(); err == nil || err.Error() != want {
			t.Errorf("environment %s: error %v, want %s", tc.line, err, want)
		}
	}
	file := filepath.Join(dir, "extra.opts")
	for line, want := range map[string]string{
		"tol 1e-6 1e-7": `options file ` + file + ` line 1: "1e-7" after the value of tol`,
		"maxit":         `options file ` + file + ` line 1: option maxit has no value`,
	} {
		if err := os.WriteFile(file, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		var o Options
		if err := o.SetFile(file); err == nil || err.Error() != want {
			t.Errorf("file line %q: error %v, want %s", line, err, want)
		}
	}
}

// TestSetDefaults checks that Set on the zero Options changes one option
// of DefaultOptions, so that an FSAI parameter set alone keeps the others.
func TestSetDefaults(t *testing.T) {
	var o Options
	if err := o.Set("afsai.steps", "12"); err != nil {
		t.Fatal(err)
	}
	want := DefaultOptions()
	want.FSAI.Params.Steps = 12
	if !reflect.DeepEqual(o, want) {
		t.Errorf("got %+v, want %+v", o, want)
	}
}

// TestOptionsDocumented checks the table of docs/library.md against
// OptionTable: a row "| `name` | type | `default` | doc |" for every
// option, in its order, and no other row.
func TestOptionsDocumented(t *testing.T) {
	data, err := os.ReadFile("../docs/library.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "| name | type | default | meaning |\n| --- | --- | --- | --- |\n")
	if !ok {
		t.Fatal("docs/library.md has no table of options")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := strings.Split(table, "\n")
	for i, op := range OptionTable() {
		want := fmt.Sprintf("| `%s` | %s | `%s` | %s |", op.Name, op.Type, op.Default(), strings.ReplaceAll(op.Doc, "|", "\\|"))
		if i >= len(rows) || rows[i] != want {
			t.Errorf("docs/library.md: row %d of the options is not\n%s", i+1, want)
		}
	}
	if len(rows) != len(OptionTable()) {
		t.Errorf("docs/library.md: %d rows for %d options", len(rows), len(OptionTable()))
	}
}
