package gpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/internal/testmatrices"
)

// pinned returns n zeros in page-locked memory, unpinned when the test ends.
func pinned(t *testing.T, b *Backend, n int) []float64 {
	t.Helper()
	h := make([]float64, n)
	unpin, err := b.Pin(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unpin)
	return h
}

func newIndex(t *testing.T, b *Backend, idx []int32) backend.Index {
	t.Helper()
	ix, err := b.NewIndex(idx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ix.Free)
	return ix
}

// busy queues count fills of a 256 MiB vector: milliseconds of work that
// keep the main stream behind the host.
func busy(t *testing.T, b *Backend, count int) {
	t.Helper()
	w, err := b.NewVector(1 << 25)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Free)
	for i := range count {
		b.Fill(w, float64(i))
	}
}

// checkEqual compares from the end, which a copy still running writes last.
func checkEqual(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := len(want) - 1; i >= 0; i-- {
		if got[i] != want[i] {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestPackHalo checks that PackHalo gives what Gather and Download give:
// its copy waits for the gather (queued behind other work, into a stage
// poisoned with NaN), is not disturbed by kernels queued after it, runs
// while they run, and is also waited for by Sync. The pack is 16 MiB, long
// enough to copy that a copy not waited for is seen.
func TestPackHalo(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(31, 32))
	srcHost := randomVec(rng, 5000)
	idx := make([]int32, 1<<21)
	for k := range idx {
		idx[k] = int32(rng.IntN(len(srcHost)))
	}
	ix := newIndex(t, b, idx)
	src := newVec(t, b, srcHost)
	stage := newVec(t, b, make([]float64, len(idx)))
	b.Gather(stage, src, ix)
	want := download(t, b, stage)
	for k, i := range idx {
		if want[k] != srcHost[i] {
			t.Fatalf("Gather: stage[%d] = %v, want %v", k, want[k], srcHost[i])
		}
	}
	host := pinned(t, b, len(idx))

	b.Fill(stage, math.NaN())
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	busy(t, b, 20)
	wait := b.PackHalo(host, stage, src, ix)
	b.Fill(src, math.NaN())
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	checkEqual(t, "PackHalo", host, want)

	// Overlap: wait returns long before the kernels queued after
	// PackHalo end.
	b.Upload(src, srcHost)
	clear(host)
	start := time.Now()
	wait = b.PackHalo(host, stage, src, ix)
	busy(t, b, 200)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	waited := time.Since(start)
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	total := time.Since(start)
	checkEqual(t, "PackHalo beside kernels", host, want)
	t.Logf("wait returned after %v, the queued kernels after %v", waited, total)
	if waited > total/4 {
		t.Errorf("wait returned after %v, the queued kernels after %v: the copy did not run beside them", waited, total)
	}

	// Sync waits for the copy too.
	clear(host)
	b.PackHalo(host, stage, src, ix)
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	checkEqual(t, "PackHalo then Sync", host, want)
}

// TestUploadHaloFirst: an UploadHalo with no PackHalo before it waits for
// the work queued so far, here the zeroing of its new vector behind other
// kernels, which would otherwise overwrite the copy.
func TestUploadHaloFirst(t *testing.T) {
	b := openGPU(t)
	const n = 1 << 20
	src := pinned(t, b, n)
	for i := range src {
		src[i] = float64(i + 1)
	}
	busy(t, b, 20)
	v, err := b.NewVector(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Free)
	b.UploadHalo(v, src)
	checkEqual(t, "UploadHalo", download(t, b, v), src)
}

// TestHaloRounds runs a distributed SpMV against itself, round after round
// with the same buffers and no synchronization between rounds, the way
// repeated products do: y = D*x + O1*h1 + O2*h2 where the halo (h1, h2) is
// x[idx] packed by PackHalo and brought back by UploadHalo in two pieces,
// and the next round's x is y. The halo is large and the off-diagonal blocks
// are small, so an off-diagonal product that did not wait for its upload
// would read the previous round's halo. Every round must match csr.MulVec.
func TestHaloRounds(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(33, 34))
	const n, h1, h2, rounds = 20000, 1 << 19, 1 << 18, 4
	d := testmatrices.RandomSPD(rng, n, 4)
	idx := make([]int32, h1+h2)
	for k := range idx {
		idx[k] = int32(rng.IntN(n))
	}
	type offBlock struct {
		m      *csr.Matrix[float64]
		rowMap []int32
		off    int // of its halo in idx
	}
	offs := []offBlock{{m: randomBlock(rng, 3000, h1, 12), off: 0}, {m: randomBlock(rng, 5000, h2, 12), off: h1}}
	for k := range offs {
		perm := rng.Perm(n)[:offs[k].m.Rows]
		offs[k].rowMap = make([]int32, len(perm))
		for i, r := range perm {
			offs[k].rowMap[i] = int32(r)
		}
	}

	// The reference, and the size of the terms that make each entry (a
	// bound on rounding errors).
	x0 := randomVec(rng, n)
	want, scale := make([][]float64, rounds), make([][]float64, rounds)
	x, s := x0, make([]float64, n)
	for i, v := range x0 {
		s[i] = math.Abs(v)
	}
	absD := absMatrix(d)
	for r := range rounds {
		y, sy := make([]float64, n), make([]float64, n)
		csr.MulVec(d, x, 0, y)
		csr.MulVec(absD, s, 0, sy)
		for _, o := range offs {
			g, sg := make([]float64, o.m.Cols), make([]float64, o.m.Cols)
			for k := range g {
				g[k], sg[k] = x[idx[o.off+k]], s[idx[o.off+k]]
			}
			oy, osy := make([]float64, o.m.Rows), make([]float64, o.m.Rows)
			csr.MulVec(o.m, g, 0, oy)
			csr.MulVec(absMatrix(o.m), sg, 0, osy)
			for k, row := range o.rowMap {
				y[row] += oy[k]
				sy[row] += osy[k]
			}
		}
		want[r], scale[r] = y, sy
		x, s = y, sy
	}

	dm, err := b.NewMatrix(d, nil, backend.Double)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dm.Free)
	om := make([]backend.Matrix, len(offs))
	for k, o := range offs {
		if om[k], err = b.NewMatrix(o.m, o.rowMap, backend.Double); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(om[k].Free)
	}
	ix := newIndex(t, b, idx)
	xv := newVec(t, b, x0)
	stage := newVec(t, b, make([]float64, len(idx)))
	halo := newVec(t, b, make([]float64, len(idx)))
	send, recv := pinned(t, b, len(idx)), pinned(t, b, len(idx))
	ys := make([]backend.Vector, rounds)
	for r := range rounds {
		ys[r] = newVec(t, b, make([]float64, n))
		wait := b.PackHalo(send, stage, xv, ix)
		backend.SpMV(b, ys[r], dm, xv, 0)
		if err := wait(); err != nil {
			t.Fatal(err)
		}
		copy(recv, send) // the exchange: this rank is its own neighbour
		for k := len(offs) - 1; k >= 0; k-- {
			o := offs[k]
			part := halo.Slice(o.off, o.m.Cols)
			b.UploadHalo(part, recv[o.off:o.off+o.m.Cols])
			backend.SpMV(b, ys[r], om[k], part, 1)
		}
		b.Copy(xv, ys[r])
	}
	for r := range rounds {
		got := download(t, b, ys[r])
		for i := range got {
			if !near(got[i], want[r][i], scale[r][i]+1e-300, 1e-13) {
				t.Fatalf("round %d: y[%d] = %v, want %v", r, i, got[i], want[r][i])
			}
		}
	}
}

// absMatrix returns m with the magnitudes of its values.
func absMatrix(m *csr.Matrix[float64]) *csr.Matrix[float64] {
	a := &csr.Matrix[float64]{Rows: m.Rows, Cols: m.Cols, RowPtr: m.RowPtr, ColIdx: m.ColIdx,
		Val: make([]float64, len(m.Val))}
	for k, v := range m.Val {
		a.Val[k] = math.Abs(v)
	}
	return a
}

// TestHaloErrors: a length mismatch is recorded, returned by wait and by
// Close.
func TestHaloErrors(t *testing.T) {
	b := openUnclosed(t)
	x, _ := b.NewVector(10)
	ix, _ := b.NewIndex([]int32{1, 2, 3})
	stage, _ := b.NewVector(3)
	wait := b.PackHalo(make([]float64, 4), stage, x, ix)
	if err := wait(); err == nil || !strings.Contains(err.Error(), "PackHalo") {
		t.Errorf("wait after a length mismatch: %v", err)
	}
	for _, f := range []interface{ Free() }{x, ix, stage} {
		f.Free()
	}
	if err := b.Close(); err == nil {
		t.Error("Close did not report the error")
	}
}
