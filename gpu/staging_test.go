package gpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
)

// TestPieceLen: a copy is cut into pieces of whole pages that fit a half,
// at least minStaged bytes each (one piece for a smaller copy), and into
// stagePieces of them or more where that allows.
func TestPieceLen(t *testing.T) {
	for _, size := range []int{4, 8} {
		for _, n := range []int{1, 1000, minStaged/size - 1, minStaged / size, minStaged/size + 1,
			stagePieces*minStaged/size + 3, stagePieces*stageHalf/size - 1, 100*stageHalf/size + 7} {
			bytes := n * size
			per := pieceLen(n, size)
			pieces := ceilDiv(n, per)
			switch {
			case per < 1 || per > n || per*size > stageHalf:
				t.Errorf("size %d n %d: %d elements per piece", size, n, per)
			case per < n && per*size%pageSize != 0:
				t.Errorf("size %d n %d: pieces of %d bytes, not whole pages", size, n, per*size)
			case per*size < min(bytes, minStaged):
				t.Errorf("size %d n %d: pieces of %d bytes, fewer than %d", size, n, per*size, min(bytes, minStaged))
			case pieces < min(stagePieces, ceilDiv(bytes, minStaged)):
				t.Errorf("size %d n %d: %d pieces", size, n, pieces)
			}
		}
	}
}

// TestStagingPinned: the ranges that Pin notes are found, whole or in
// part, until they are forgotten; memory beside them is not.
func TestStagingPinned(t *testing.T) {
	var s staging
	host := make([]float64, 1000)
	p := unsafe.Pointer(&host[0])
	s.pin(unsafe.Pointer(&host[100]), 8*800)
	for _, c := range []struct {
		off, bytes int
		want       bool
	}{{100, 8 * 800, true}, {200, 8 * 10, true}, {899, 8, true}, {99, 16, false}, {850, 8 * 100, false}, {0, 8, false}} {
		if got := s.isPinned(unsafe.Add(p, 8*c.off), c.bytes); got != c.want {
			t.Errorf("%d bytes from entry %d: pinned %v, want %v", c.bytes, c.off, got, c.want)
		}
	}
	s.unpin(unsafe.Pointer(&host[100]))
	if s.isPinned(unsafe.Pointer(&host[200]), 8) {
		t.Error("pinned after unpin")
	}
}

// deviceArray returns n elements of device memory at src, copied by the
// driver straight into Go memory (not through the staging buffer).
func deviceArray[T any](t *testing.T, b *Backend, src uintptr, n int) []T {
	t.Helper()
	out := make([]T, n)
	if n == 0 {
		return out
	}
	defer b.enter()()
	b.download(unsafe.Pointer(&out[0]), src, n*int(unsafe.Sizeof(out[0])))
	if err := b.syncLocked(); err != nil {
		t.Fatal(err)
	}
	return out
}

// stagedSizes are vector lengths of float64s: below the staging threshold,
// just above it (two pieces, the second short) and over the whole buffer
// (many pieces, the last short).
var stagedSizes = []int{1000, minStaged/8 + 3, 3*stageHalf/8 + 12345}

// TestStagedVectors: vectors uploaded through the staging buffer arrive
// exactly, also when two uploads into one vector follow each other (the
// second's pieces wait for the halves of the first); a pinned vector goes
// straight to the driver and arrives too; downloadSlice brings back what
// the device holds, in float64 and int32.
func TestStagedVectors(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range stagedSizes {
		first, last := randomVec(rng, n), randomVec(rng, n)
		v := newVec(t, b, first)
		b.Upload(v, last)
		if got := deviceArray[float64](t, b, v.(*Vector).ptr, n); !slices.Equal(got, last) {
			t.Fatalf("n %d: the device's vector differs from the last upload", n)
		}
		back := make([]float64, n)
		func() {
			defer b.enter()()
			downloadSlice(b, back, v.(*Vector).ptr)
		}()
		if err := b.Err(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back, last) {
			t.Fatalf("n %d: downloadSlice differs from the upload", n)
		}

		idx := make([]int32, 2*n+1)
		for k := range idx {
			idx[k] = rng.Int32()
		}
		x, err := b.NewIndex(idx)
		if err != nil {
			t.Fatal(err)
		}
		if got := deviceArray[int32](t, b, x.(*Index).ptr, len(idx)); !slices.Equal(got, idx) {
			t.Fatalf("index of %d: the device's copy differs", len(idx))
		}
		back32 := make([]int32, len(idx))
		func() {
			defer b.enter()()
			downloadSlice(b, back32, x.(*Index).ptr)
		}()
		if !slices.Equal(back32, idx) {
			t.Fatalf("index of %d: downloadSlice differs", len(idx))
		}
		x.Free()
	}

	host := randomVec(rng, stagedSizes[2])
	unpin, err := b.Pin(host)
	if err != nil {
		t.Fatal(err)
	}
	if !b.staging.isPinned(unsafe.Pointer(&host[0]), 8*len(host)) {
		t.Error("Pin did not note its range")
	}
	v := newVec(t, b, host)
	if got := download(t, b, v); !slices.Equal(got, host) {
		t.Error("pinned upload differs")
	}
	unpin()
	if b.staging.isPinned(unsafe.Pointer(&host[0]), 8) {
		t.Error("unpin did not forget the range")
	}
}

// stagedMatrix returns a rows x rows matrix of 8 or 9 sorted entries per
// row and random values: for an odd rows above a million, more column
// indices and values than the staging buffer holds, in a number that is no
// multiple of a half or a page.
func stagedMatrix(rng *rand.Rand, rows int) *csr.Matrix[float64] {
	m := &csr.Matrix[float64]{Rows: rows, Cols: rows, RowPtr: make([]int32, rows+1)}
	band := rows / 9
	for i := range rows {
		for j := range 8 + i%2 {
			m.ColIdx = append(m.ColIdx, int32(j*band+i%band))
			m.Val = append(m.Val, rng.NormFloat64())
		}
		m.RowPtr[i+1] = int32(len(m.ColIdx))
	}
	return m
}

// TestStagedMatrix: a matrix larger than the staging buffer, with a row
// map, arrives on the device exactly in both precisions (values rounded to
// float32 in single precision).
func TestStagedMatrix(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(9, 10))
	m := stagedMatrix(rng, 1_000_003)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	if 4*m.NNZ() <= 2*stageHalf {
		t.Fatalf("%d entries fit the staging buffer", m.NNZ())
	}
	rowMap := make([]int32, m.Rows)
	for k := range rowMap {
		rowMap[k] = int32(3*k + 1)
	}
	for _, p := range []backend.Precision{backend.Double, backend.Single} {
		a, err := b.NewMatrix(m, rowMap, p)
		if err != nil {
			t.Fatal(err)
		}
		g := a.(*Matrix)
		if !slices.Equal(deviceArray[int32](t, b, g.rowPtr, m.Rows+1), m.RowPtr) {
			t.Errorf("%v: row pointers differ", p)
		}
		if !slices.Equal(deviceArray[int32](t, b, g.col, m.NNZ()), m.ColIdx) {
			t.Errorf("%v: column indices differ", p)
		}
		if !slices.Equal(deviceArray[int32](t, b, g.rowMap, m.Rows), rowMap) {
			t.Errorf("%v: row map differs", p)
		}
		if p == backend.Double {
			if !slices.Equal(deviceArray[float64](t, b, g.val, m.NNZ()), m.Val) {
				t.Errorf("%v: values differ", p)
			}
		} else if want := csr.Convert[float32](m).Val; !slices.Equal(deviceArray[float32](t, b, g.val, m.NNZ()), want) {
			t.Errorf("%v: values differ from the float32 rounding", p)
		}
		a.Free()
	}
}

// BenchmarkStaging compares, in GB/s of wall time, copies of 1 GiB of
// pageable memory by the driver's own path and through the staging
// buffer, with the upload of the same memory pinned (the bus's speed) for
// reference, and NewMatrix of a matrix of 34M entries in both precisions
// (bytes of its device arrays).
func BenchmarkStaging(bm *testing.B) {
	be := openGPU(bm)
	const n = 1 << 27 // float64s
	host := randomVec(rand.New(rand.NewPCG(11, 12)), n)
	p := benchVec(bm, be, n).(*Vector).ptr
	m := stagedMatrix(rand.New(rand.NewPCG(13, 14)), 4_000_037)
	// run times op, which queues work, and its synchronization.
	run := func(bm *testing.B, bytes int, op func()) {
		for bm.Loop() {
			op()
			if err := be.Sync(); err != nil {
				bm.Fatal(err)
			}
		}
		bm.ReportMetric(float64(bytes)*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GB/s")
	}
	// entered runs f with the context current.
	entered := func(f func()) func() {
		return func() {
			defer be.enter()()
			f()
		}
	}
	for _, c := range []struct {
		name string
		op   func()
	}{
		{"upload/driver", entered(func() { be.upload(p, unsafe.Pointer(&host[0]), 8*n) })},
		{"upload/staged", entered(func() { uploadSlice(be, p, host) })},
		{"download/driver", entered(func() { be.download(unsafe.Pointer(&host[0]), p, 8*n) })},
		{"download/staged", entered(func() { downloadSlice(be, host, p) })},
	} {
		bm.Run(c.name, func(bm *testing.B) { run(bm, 8*n, c.op) })
	}
	bm.Run("upload/pinned", func(bm *testing.B) {
		unpin, err := be.Pin(host)
		if err != nil {
			bm.Fatal(err)
		}
		defer unpin()
		run(bm, 8*n, entered(func() { uploadSlice(be, p, host) }))
	})
	for _, prec := range []backend.Precision{backend.Double, backend.Single} {
		val := 8
		if prec == backend.Single {
			val = 4
		}
		bm.Run(fmt.Sprintf("NewMatrix/%v", prec), func(bm *testing.B) {
			run(bm, 4*(m.Rows+1)+(4+val)*m.NNZ(), func() {
				a, err := be.NewMatrix(m, nil, prec)
				if err != nil {
					bm.Fatal(err)
				}
				a.Free()
			})
		})
	}
}

// TestUploadFunc: an upload whose elements a function writes into the
// staging buffer arrives as the array of those elements, in one piece and
// in many.
func TestUploadFunc(t *testing.T) {
	b := openGPU(t)
	for _, n := range stagedSizes {
		p := func() uintptr {
			defer b.enter()()
			p, err := b.alloc(4*n, "test")
			if err != nil {
				t.Fatal(err)
			}
			UploadFunc(b.Raw(), p, n, func(buf []int32, lo int) {
				for k := range buf {
					buf[k] = int32(3*(lo+k) + 1)
				}
			})
			return p
		}()
		got := deviceArray[int32](t, b, p, n)
		for k, v := range got {
			if v != int32(3*k+1) {
				t.Fatalf("n %d: element %d is %d, want %d", n, k, v, 3*k+1)
			}
		}
		b.free(p, "test")
	}
}
