package cuda

import (
	"strings"
	"testing"
)

// pairSource defines the struct of the layout tests. Its layout in the
// ABI of every CUDA compiler: n at 0 (4 bytes), p at 8, x at 16, 24
// bytes in all.
const pairSource = "struct Pair { int n; double *p; double x; };\n"

// pairWords is what the probe of pair measures on Pair.
var pairWords = []uint64{0, 4, 8, 8, 16, 8, 24}

type pair struct {
	N int32   `c:"n"`
	P uintptr `c:"p"`
	X float64 `c:"x"`
}

// TestLayoutProbe checks the probe's source for a small mirror: one
// offset and one size per field, in field order, under the member names
// the tags give, then the struct's size.
func TestLayoutProbe(t *testing.T) {
	got := LayoutProbe("layout_Pair", "Pair", pair{})
	want := `#line 1 "layout probe of Pair"
extern "C" __global__ void layout_Pair(unsigned long long *out)
{
    Pair s;
    const char *base = (const char *)&s;
    out[0] = (const char *)&s.n - base;
    out[1] = sizeof(s.n);
    out[2] = (const char *)&s.p - base;
    out[3] = sizeof(s.p);
    out[4] = (const char *)&s.x - base;
    out[5] = sizeof(s.x);
    out[6] = sizeof(Pair);
}
`
	if got != want {
		t.Errorf("probe source:\n%s\nwant:\n%s", got, want)
	}
	if n := LayoutWords(pair{}); n != len(pairWords) {
		t.Errorf("LayoutWords = %d, want %d", n, len(pairWords))
	}
	type untagged struct{ Len int64 }
	if src := LayoutProbe("k", "S", untagged{}); !strings.Contains(src, "&s.Len - base") {
		t.Errorf("a field without a tag should name the member by its Go name:\n%s", src)
	}
}

// TestLayoutMismatch compares Pair's layout with mirrors that match it
// and mirrors that do not: a member at another offset, one of another
// size, another total size. Each mismatch must be named.
func TestLayoutMismatch(t *testing.T) {
	if err := LayoutMismatch("Pair", pair{}, pairWords); err != nil {
		t.Errorf("matching mirror: %v", err)
	}
	type swapped struct { // p and x exchanged: the probe measures n, x, p
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
		words  []uint64
		want   string
	}{
		{swapped{}, []uint64{0, 4, 16, 8, 8, 8, 24}, "C struct Pair member x at offset 16, Go mirror cuda.swapped.X at 8"},
		{wide{}, pairWords, "C struct Pair member n of 4 bytes, Go mirror cuda.wide.N of 8"},
		{short{}, []uint64{0, 4, 8, 8, 24}, "C struct Pair of 24 bytes, Go mirror cuda.short of 16"},
		{pair{}, pairWords[:5], "C struct Pair: the probe wrote 5 words for the 3 fields"},
	} {
		err := LayoutMismatch("Pair", c.mirror, c.words)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("mirror %T: error %v, want one that says %q", c.mirror, err, c.want)
		}
	}
}

// TestLayoutProbeCompiles compiles the probe after the struct it measures
// with the machine's NVRTC (no GPU needed): the probe's source must be
// one that every NVRTC accepts, also for a mirror of an unnamed type.
func TestLayoutProbeCompiles(t *testing.T) {
	nv := needNVRTC(t)
	unnamed := struct {
		N int32 `c:"n"`
	}{}
	for _, mirror := range []any{pair{}, unnamed} {
		src := pairSource + LayoutProbe("layout_Pair", "Pair", mirror)
		ptx, err := nv.Compile(src, "pair.cu", Target{Arch: 80})
		if err != nil {
			t.Fatalf("NVRTC %s, mirror %T: %v", nv.Version(), mirror, err)
		}
		if _, ok := PTXEntries(string(ptx))["layout_Pair"]; !ok {
			t.Errorf("NVRTC %s, mirror %T: the PTX has no entry layout_Pair", nv.Version(), mirror)
		}
	}
}
