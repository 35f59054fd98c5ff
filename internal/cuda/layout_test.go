package cuda

import (
	"strings"
	"testing"
)

// TestLayoutAsserts compiles a struct with the asserts of a Go mirror that
// matches it, and of mirrors that do not: a member at another offset, one
// of another size, another total size. Each mismatch must stop the
// compilation with a message naming the member.
func TestLayoutAsserts(t *testing.T) {
	nv := needNVRTC(t)
	const src = "struct Pair { int n; double *p; double x; };\n"
	type good struct {
		N int32   `c:"n"`
		P uintptr `c:"p"`
		X float64 `c:"x"`
	}
	if _, err := nv.Compile(src+LayoutAsserts("Pair", good{}), "pair.cu", Target{Arch: 80}); err != nil {
		t.Fatalf("matching mirror refused: %v", err)
	}
	type swapped struct { // p and x exchanged: offsets differ
		N int32   `c:"n"`
		X float64 `c:"x"`
		P uintptr `c:"p"`
	}
	type wide struct { // n of 8 bytes
		N int64   `c:"n"`
		P uintptr `c:"p"`
		X float64 `c:"x"`
	}
	type short struct { // x missing: the total size differs
		N int32   `c:"n"`
		P uintptr `c:"p"`
	}
	for _, c := range []struct {
		mirror any
		want   string
	}{
		{swapped{}, "Pair::x is not at offset 8"},
		{wide{}, "Pair::n is not at offset 0 with 8 bytes"},
		{short{}, "Pair is not of 16 bytes"},
	} {
		_, err := nv.Compile(src+LayoutAsserts("Pair", c.mirror), "pair.cu", Target{Arch: 80})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mirror %T: error %v, want one that says %q", c.mirror, err, c.want)
		}
	}
}
