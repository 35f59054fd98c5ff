package problem

import (
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, every error names the spec and lists the
// valid forms, an accepted spec's size (rows, and the entries the command's
// memory check counts) does not overflow, and it prints in a form that parses back to
// itself. Seed corpus: testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := Parse(s)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "problem: parse ") || !strings.Contains(msg, "valid forms: ") {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			return
		}
		if spec.Rows() < 1 || spec.MaxNNZ() < spec.Rows() || spec.check() != nil {
			t.Fatalf("Parse(%q) = %+v", s, spec)
		}
		again, err := Parse(spec.String())
		if err != nil || again != spec {
			t.Fatalf("Parse(%q) = %+v prints as %q, which parses to %+v, %v", s, spec, spec.String(), again, err)
		}
	})
}
