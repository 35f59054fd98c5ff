package parallel

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
)

// TestCopy: Copy brings every element and Clear zeroes every one, with one
// chunk and with several.
func TestCopy(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 5, 1000} {
			src := make([]int32, n)
			for i := range src {
				src[i] = int32(3*i + 1)
			}
			dst := make([]int32, n)
			Copy(dst, src)
			if !slices.Equal(dst, src) {
				t.Errorf("GOMAXPROCS %d, %d elements: copied %v", procs, n, dst)
			}
			Clear(dst)
			if slices.ContainsFunc(dst, func(x int32) bool { return x != 0 }) {
				t.Errorf("GOMAXPROCS %d, %d elements: cleared %v", procs, n, dst)
			}
		}
	}
}

// TestMap: Map gives f of every element, in order, with one chunk and
// with several.
func TestMap(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 5, 100000} {
			in := make([]int, n)
			for i := range in {
				in[i] = i
			}
			out := Map(in, func(v int) int64 { return int64(2*v + 1) })
			if len(out) != n {
				t.Fatalf("GOMAXPROCS %d, %d elements: %d results", procs, n, len(out))
			}
			for i, v := range out {
				if v != int64(2*i+1) {
					t.Fatalf("GOMAXPROCS %d, %d elements: element %d is %d", procs, n, i, v)
				}
			}
		}
	}
}

// TestFor checks that the chunks cover [0, n) once, in order, with the
// count Chunks gives, for several GOMAXPROCS.
func TestFor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 63, 64, 200, 1000, 12345} {
			k := Chunks(n)
			if k < 1 || k > procs || (n >= grain*procs && k != procs) {
				t.Errorf("procs %d n %d: %d chunks", procs, n, k)
			}
			bounds := make([][2]int, k)
			hits := make([]int, n)
			For(n, func(c, lo, hi int) {
				bounds[c] = [2]int{lo, hi}
				for i := lo; i < hi; i++ {
					hits[i]++
				}
			})
			for c := range k {
				if c > 0 && bounds[c][0] != bounds[c-1][1] {
					t.Errorf("procs %d n %d: chunk %d starts at %d after %d", procs, n, c, bounds[c][0], bounds[c-1][1])
				}
			}
			if bounds[0][0] != 0 || bounds[k-1][1] != n {
				t.Errorf("procs %d n %d: chunks span [%d,%d)", procs, n, bounds[0][0], bounds[k-1][1])
			}
			for i, h := range hits {
				if h != 1 {
					t.Fatalf("procs %d n %d: index %d visited %d times", procs, n, i, h)
				}
			}
		}
	}
}

// TestScan compares Scan with a serial prefix sum from a nonzero start,
// for several GOMAXPROCS and lengths (one chunk and several).
func TestScan(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 63, 1000, 12345} {
			count := func(i int) int64 { return int64(i%7) + 1 }
			out := make([]int64, n+1)
			out[0] = 5
			Scan(out, count)
			want := int64(5)
			for i := range n {
				want += count(i)
				if out[i+1] != want {
					t.Fatalf("procs %d n %d: out[%d] = %d, want %d", procs, n, i+1, out[i+1], want)
				}
			}
		}
	}
}

// TestAccumulate: row lengths become row pointers in place, as the serial
// sum gives, for lengths too few and enough for several chunks.
func TestAccumulate(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 5, 1000, 100000} {
			p := make([]int32, n+1)
			p[0] = 3
			for i := 1; i <= n; i++ {
				p[i] = int32(i % 7 * (i % 3))
			}
			want := slices.Clone(p)
			for i := range n {
				want[i+1] += want[i]
			}
			Accumulate(p)
			if !slices.Equal(p, want) {
				t.Fatalf("procs %d, %d lengths: got %v..., want %v...", procs, n, p[:min(n+1, 8)], want[:min(n+1, 8)])
			}
		}
	}
}

// TestGather compares Gather with a serial loop, on indices that repeat and
// run backwards, for several GOMAXPROCS.
func TestGather(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	src := []float64{10, 11, 12, 13, 14, 15, 16}
	for _, procs := range []int{1, 3, 8} {
		runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 5000} {
			idx := make([]int32, n)
			for k := range idx {
				idx[k] = int32((n - k) * 3 % len(src))
			}
			dst := make([]float64, n)
			Gather(dst, src, idx)
			for k, i := range idx {
				if dst[k] != src[i] {
					t.Fatalf("procs %d n %d: dst[%d] = %g, want %g", procs, n, k, dst[k], src[i])
				}
			}
		}
	}
}

// TestShare: Linux CPU lists are counted, and the cores are divided only
// among unbound ranks (those that see every online CPU) when GOMAXPROCS is
// not set in the environment.
func TestShare(t *testing.T) {
	for list, want := range map[string]int{"0-127": 128, "0": 1, "0-63,128-191": 128, "0,2,4-5": 4, "": -1, "3-1": -1, "a-b": -1} {
		if got := countCPUs(list); got != want {
			t.Errorf("countCPUs(%q) = %d, want %d", list, got, want)
		}
	}
	keep := runtime.GOMAXPROCS(0)
	for _, c := range []struct {
		visible, online, ranks int
		set                    bool
		want                   int
	}{
		{128, 128, 8, false, 16},
		{32, 32, 2, false, 16},
		{2, 2, 3, false, 1},
		{128, 128, 1, false, keep}, // one rank: all cores
		{16, 128, 8, false, keep},  // bound to 16 cores of its own
		{128, 128, 8, true, keep},  // GOMAXPROCS set by the user
		{128, -1, 8, false, keep},  // online CPUs unknown
	} {
		if got := shareOf(c.visible, c.online, c.ranks, c.set); got != c.want {
			t.Errorf("shareOf(%d, %d, %d, %t) = %d, want %d", c.visible, c.online, c.ranks, c.set, got, c.want)
		}
	}
}

// BenchmarkAccumulate: 4M row pointers (warm memory) by Accumulate, and by
// Scan with a function that reads the lengths, which Accumulate was.
func BenchmarkAccumulate(b *testing.B) {
	p := make([]int32, 4_000_001)
	Accumulate(p) // touch the pages
	b.Run("Accumulate", func(b *testing.B) {
		for range b.N {
			Accumulate(p)
		}
	})
	b.Run("Scan", func(b *testing.B) {
		for range b.N {
			Scan(p, func(i int) int32 { return p[i+1] })
		}
	})
}

// TestForErr: every chunk runs, and the error is that of the first
// failing chunk in range order, whichever finishes first.
func TestForErr(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 1000
	ran := make([]bool, Chunks(n))
	err := ForErr(n, func(c, lo, hi int) error {
		ran[c] = true
		if lo > 0 {
			return fmt.Errorf("chunk from %d", lo)
		}
		return nil
	})
	if want := fmt.Sprintf("chunk from %d", n/len(ran)); err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	for c, r := range ran {
		if !r {
			t.Errorf("chunk %d did not run", c)
		}
	}
	if err := ForErr(n, func(int, int, int) error { return nil }); err != nil {
		t.Errorf("no chunk failed: %v", err)
	}
}

// TestSortedUnion: the union of 0 to 7 ascending lists, some empty, some
// overlapping, is their sorted concatenation without repeats.
func TestSortedUnion(t *testing.T) {
	for k := range 8 {
		parts := make([][]int64, k)
		var all []int64
		for p := range parts {
			for v := int64(p % 3); v < int64(40*(p%4)); v += int64(1 + p) {
				parts[p] = append(parts[p], v)
			}
			all = append(all, parts[p]...)
		}
		slices.Sort(all)
		want := slices.Compact(all)
		if got := SortedUnion(parts); !slices.Equal(got, want) {
			t.Errorf("%d lists: got %v, want %v", k, got, want)
		}
	}
}
