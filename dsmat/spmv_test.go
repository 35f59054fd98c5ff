package dsmat_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/cpu"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
	"github.com/fsai-dist/fsai-dist/matfile"
	"github.com/fsai-dist/fsai-dist/problem"
)

// stripe cuts rows [lo,hi) out of a whole matrix held as one stripe.
func stripe(full *dsmat.Rows, lo, hi int64) *dsmat.Rows {
	a, b := full.RowPtr[lo], full.RowPtr[hi]
	r := &dsmat.Rows{N: full.N, First: lo, Col: full.Col[a:b], Val: full.Val[a:b]}
	for _, p := range full.RowPtr[lo : hi+1] {
		r.RowPtr = append(r.RowPtr, p-a)
	}
	return r
}

// blockDiagonal is k disconnected copies of poisson7:3 (27 rows each), so a
// partition along the copies gives ranks with no off-diagonal blocks.
func blockDiagonal(t *testing.T, k int) *dsmat.Rows {
	one, err := problem.Spec{Kind: "poisson7", N: 3}.Generate(0, 27)
	if err != nil {
		t.Fatal(err)
	}
	full := &dsmat.Rows{N: int64(27 * k), RowPtr: []int64{0}}
	for c := 0; c < k; c++ {
		base := int64(27 * c)
		for i := 0; i < one.Count(); i++ {
			for p := one.RowPtr[i]; p < one.RowPtr[i+1]; p++ {
				full.Col = append(full.Col, base+one.Col[p])
				full.Val = append(full.Val, one.Val[p])
			}
			full.RowPtr = append(full.RowPtr, int64(len(full.Col)))
		}
	}
	return full
}

func generate(t *testing.T, spec string) *dsmat.Rows {
	full, err := problem.All(spec)
	if err != nil {
		t.Fatal(err)
	}
	return full
}

// probe is the vector the products are checked on: no two entries equal, so
// a wrong halo index cannot go unnoticed.
func probe(i int64) float64 { return math.Sin(float64(i)*0.7) + 0.001*float64(i) }

// checkSpMV distributes full over part and checks the product.
func checkSpMV(t *testing.T, c *comm.Comm, full *dsmat.Rows, part dsmat.Partition, p backend.Precision) {
	t.Helper()
	lo, hi := part.Range(c.Rank())
	checkStripeSpMV(t, c, stripe(full, lo, hi), part, p)
}

// bindCPU distributes this rank's stripe under part and binds it to a
// one-thread CPU backend with values in precision p.
func bindCPU(t *testing.T, c *comm.Comm, part dsmat.Partition, rows *dsmat.Rows, p backend.Precision) (*dsmat.Matrix, *dsmat.Operator) {
	t.Helper()
	A, err := dsmat.New(c, part, rows)
	if err != nil {
		t.Fatal(err)
	}
	op, err := A.Bind(cpu.New(1), p)
	if err != nil {
		t.Fatal(err)
	}
	return A, op
}

// checkStripeSpMV builds the distributed matrix from this rank's stripe,
// multiplies by probe on the CPU backend (values in precision p) and compares
// each row with the serial product of the stripe's own entries, which hold
// global column indices.
func checkStripeSpMV(t *testing.T, c *comm.Comm, rows *dsmat.Rows, part dsmat.Partition, p backend.Precision) {
	t.Helper()
	lo, hi := part.Range(c.Rank())
	_, op := bindCPU(t, c, part, rows, p)
	be := op.Backend()
	defer op.Free()
	x, _ := be.NewVector(int(hi - lo))
	y, _ := be.NewVector(int(hi - lo))
	xs := make([]float64, hi-lo)
	for i := range xs {
		xs[i] = probe(lo + int64(i))
	}
	be.Upload(x, xs)
	be.Fill(y, math.NaN()) // beta = 0 must overwrite, not scale
	if err := op.Apply(y, x); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, hi-lo)
	if err := be.Download(got, y); err != nil {
		t.Fatal(err)
	}
	tol := 1e-13
	if p == backend.Single {
		tol = 1e-6
	}
	for i := 0; i < rows.Count(); i++ {
		var want, scale float64
		for k := rows.RowPtr[i]; k < rows.RowPtr[i+1]; k++ {
			want += rows.Val[k] * probe(rows.Col[k])
			scale += math.Abs(rows.Val[k] * probe(rows.Col[k]))
		}
		if d := math.Abs(got[i] - want); d > tol*scale {
			t.Fatalf("rank %d row %d: got %.17g want %.17g", c.Rank(), lo+int64(i), got[i], want)
		}
	}
}

func TestSpMVGenerated(t *testing.T) {
	for np := 1; np <= 4; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, spec := range []string{"poisson7:6", "poisson27:5", "diffusion:5", "aniso:5"} {
				full := generate(t, spec)
				checkSpMV(t, c, full, dsmat.NewPartition(full.N, np), backend.Double)
				checkSpMV(t, c, full, dsmat.NewPartition(full.N, np), backend.Single)
			}
		})
	}
}

func TestSpMVSharedMatrices(t *testing.T) {
	files, err := filepath.Glob("../../shared/matrices/*.mtx")
	if err != nil || len(files) == 0 {
		t.Skip("no ../shared/matrices beside the checkout")
	}
	for np := 1; np <= 4; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, f := range files {
				rows, part, err := matfile.ReadMatrix(c, f)
				if err != nil {
					t.Fatal(err)
				}
				checkStripeSpMV(t, c, rows, part, backend.Double)
			}
		})
	}
}

func TestSpMVUnevenStripes(t *testing.T) {
	mpitest.Run(t, 3, func(t *testing.T, c *comm.Comm) {
		full := generate(t, "poisson7:6") // 216 rows
		for _, off := range [][]int64{
			{0, 1, 2, 216},     // two one-row stripes
			{0, 200, 216, 216}, // an empty last rank
			{0, 0, 100, 216},   // an empty first rank
		} {
			t.Run(fmt.Sprint(off), func(t *testing.T) {
				checkSpMV(t, c, full, dsmat.Partition{Offsets: off}, backend.Double)
			})
		}
		// rank 2 owns a whole copy of a block-diagonal matrix: no
		// off-diagonal blocks at all, while ranks 0 and 1 share one copy
		blocks := blockDiagonal(t, 3)
		part := dsmat.Partition{Offsets: []int64{0, 20, 54, 81}}
		checkSpMV(t, c, blocks, part, backend.Double)
		if c.Rank() == 2 {
			lo, hi := part.Range(2)
			A, err := dsmat.New(c, part, stripe(blocks, lo, hi))
			if err != nil {
				t.Fatal(err)
			}
			if len(A.Off) != 0 || len(A.Sends) != 0 {
				t.Fatalf("rank 2 has %d off-diagonal blocks and %d sends, want none", len(A.Off), len(A.Sends))
			}
		} else {
			lo, hi := part.Range(c.Rank())
			if _, err := dsmat.New(c, part, stripe(blocks, lo, hi)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestSpMVBalanceNNZ(t *testing.T) {
	for _, np := range []int{2, 3} {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			full := generate(t, "poisson27:6")
			part := dsmat.NewPartition(full.N, np)
			lo, hi := part.Range(c.Rank())
			rows, newPart, err := dsmat.BalanceNNZ(c, stripe(full, lo, hi))
			if err != nil {
				t.Fatal(err)
			}
			nlo, nhi := newPart.Range(c.Rank())
			if rows.First != nlo || int64(rows.Count()) != nhi-nlo {
				t.Fatalf("stripe [%d,+%d) does not match partition [%d,%d)", rows.First, rows.Count(), nlo, nhi)
			}
			// every rank within 10% of the mean, the mean being large
			mean := float64(full.NNZ()) / float64(np)
			if d := math.Abs(float64(rows.NNZ()) - mean); d > 0.1*mean {
				t.Fatalf("rank %d holds %d nonzeros, mean %.0f", c.Rank(), rows.NNZ(), mean)
			}
			checkSpMV(t, c, full, newPart, backend.Double)
		})
	}
}

// TestApplyBlock: the product of a block of three columns equals the three
// products of its columns, bit for bit, on 1 to 3 ranks (the halo of all
// columns travels in one message per neighbour), in every schedule that
// exchanges halos; after it, single products still work on the same operator.
func TestApplyBlock(t *testing.T) {
	const k = 3
	for np := 1; np <= 3; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			full := generate(t, "diffusion:6")
			part := dsmat.NewPartition(full.N, np)
			lo, hi := part.Range(c.Rank())
			_, op := bindCPU(t, c, part, stripe(full, lo, hi), backend.Double)
			defer op.Free()
			be, n := op.Backend(), int(hi-lo)
			block := make([]float64, n*k)
			for i := range n {
				for col := range k {
					block[i*k+col] = probe(lo+int64(i)) * float64(col+1) / (1 + 0.1*float64(col)*float64(i))
				}
			}
			x, _ := be.NewVector(n * k)
			y, _ := be.NewVector(n * k)
			be.Upload(x, block)
			for _, s := range []dsmat.Schedule{dsmat.Overlap, dsmat.Sequential} {
				op.SetSchedule(s)
				if err := op.ApplyBlock(y, x, k); err != nil {
					t.Fatal(err)
				}
				got := make([]float64, n*k)
				if err := be.Download(got, y); err != nil {
					t.Fatal(err)
				}
				xc, yc := make([]float64, n), make([]float64, n)
				x1, _ := be.NewVector(n)
				y1, _ := be.NewVector(n)
				for col := range k {
					for i := range n {
						xc[i] = block[i*k+col]
					}
					be.Upload(x1, xc)
					if err := op.Apply(y1, x1); err != nil {
						t.Fatal(err)
					}
					if err := be.Download(yc, y1); err != nil {
						t.Fatal(err)
					}
					for i := range n {
						if got[i*k+col] != yc[i] {
							t.Fatalf("schedule %d rank %d row %d column %d: block %v, alone %v", s, c.Rank(), lo+int64(i), col, got[i*k+col], yc[i])
						}
					}
					// ApplyDots: the same product, and x'y computed with it
					dot := make([]float64, 1)
					be.Fill(y1, math.NaN())
					if err := op.ApplyDots(y1, x1, dot); err != nil {
						t.Fatal(err)
					}
					again := make([]float64, n)
					if err := be.Download(again, y1); err != nil {
						t.Fatal(err)
					}
					var want, scale float64
					for i := range n {
						if again[i] != yc[i] {
							t.Fatalf("schedule %d rank %d row %d column %d: ApplyDots %v, Apply %v", s, c.Rank(), lo+int64(i), col, again[i], yc[i])
						}
						want += xc[i] * yc[i]
						scale += math.Abs(xc[i] * yc[i])
					}
					if math.Abs(dot[0]-want) > 1e-13*scale {
						t.Fatalf("schedule %d rank %d column %d: ApplyDots dot %v, want %v", s, c.Rank(), col, dot[0], want)
					}
				}
				dots := make([]float64, k)
				if err := op.ApplyDots(y, x, dots); err != nil {
					t.Fatal(err)
				}
				prod := make([]float64, n*k)
				if err := be.Download(prod, y); err != nil {
					t.Fatal(err)
				}
				for col := range k {
					var want, scale float64
					for i := range n {
						want += block[i*k+col] * prod[i*k+col]
						scale += math.Abs(block[i*k+col] * prod[i*k+col])
					}
					if prod[col] != got[col] || math.Abs(dots[col]-want) > 1e-13*scale {
						t.Fatalf("schedule %d rank %d column %d of %d: ApplyDots dot %v, want %v", s, c.Rank(), col, k, dots[col], want)
					}
				}
				if err := op.ApplyDots(y, x, nil); err == nil {
					t.Fatal("ApplyDots of no columns was accepted")
				}
			}
		})
	}
}

// TestBindNarrows: Bind stores poisson7's integer values in float32 and its
// products equal BindWide's bit for bit; diffusion's values stay float64; a
// Refresh with values float32 cannot hold goes back to float64 and keeps
// them exactly.
func TestBindNarrows(t *testing.T) {
	for np := 1; np <= 2; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			for _, tc := range []struct {
				spec string
				want backend.Precision
			}{{"poisson7:6", backend.Single}, {"diffusion:5", backend.Double}} {
				full := generate(t, tc.spec)
				part := dsmat.NewPartition(full.N, np)
				lo, hi := part.Range(c.Rank())
				rows := stripe(full, lo, hi)
				A, op := bindCPU(t, c, part, rows, backend.Double)
				wide, err := A.BindWide(op.Backend())
				if err != nil {
					t.Fatal(err)
				}
				if op.Precision() != tc.want || wide.Precision() != backend.Double {
					t.Fatalf("%s: Bind stores %v, BindWide %v", tc.spec, op.Precision(), wide.Precision())
				}
				if all, err := op.StoredPrecision(); all != tc.want || err != nil {
					t.Fatalf("%s: every rank's storage %v (%v), want %v", tc.spec, all, err, tc.want)
				}
				be, n := op.Backend(), int(hi-lo)
				x, _ := be.NewVector(n)
				y1, _ := be.NewVector(n)
				y2, _ := be.NewVector(n)
				xs := make([]float64, n)
				for i := range xs {
					xs[i] = probe(lo + int64(i))
				}
				be.Upload(x, xs)
				if err := op.Apply(y1, x); err != nil {
					t.Fatal(err)
				}
				if err := wide.Apply(y2, x); err != nil {
					t.Fatal(err)
				}
				got, want := make([]float64, n), make([]float64, n)
				_ = be.Download(got, y1)
				_ = be.Download(want, y2)
				if !slices.Equal(got, want) {
					t.Fatalf("%s: narrowed and wide products differ", tc.spec)
				}
				wide.Free()

				next := reweigh(rows)
				if err := A.SetValues(next); err != nil {
					t.Fatal(err)
				}
				if err := op.Refresh(); err != nil {
					t.Fatal(err)
				}
				if op.Precision() != backend.Double {
					t.Fatalf("%s: after values float32 cannot hold, stored %v", tc.spec, op.Precision())
				}
				checkProduct(t, c, op, next, backend.Double)
				op.Free()
			}
		})
	}
}

// upperBand is the n x n matrix with entries only on the diagonal and the
// w diagonals above it: each row needs columns of higher rows only, so a
// rank receives from the ranks above it and sends only to those below.
func upperBand(n, w int64) *dsmat.Rows {
	full := &dsmat.Rows{N: n, RowPtr: []int64{0}}
	for i := range n {
		for j := i; j < min(i+w+1, n); j++ {
			v := -1 / float64(1+j-i)
			if j == i {
				v = float64(w + 1)
			}
			full.Col = append(full.Col, j)
			full.Val = append(full.Val, v)
		}
		full.RowPtr = append(full.RowPtr, int64(len(full.Col)))
	}
	return full
}

// checkPlan checks this rank's halo plan against the whole matrix: to each
// other rank q it sends exactly the entries of its stripe that q's rows
// reference, ascending, and to no rank whose rows reference none.
func checkPlan(t *testing.T, c *comm.Comm, full *dsmat.Rows, part dsmat.Partition, A *dsmat.Matrix) {
	t.Helper()
	lo, hi := part.Range(c.Rank())
	want := map[int][]int32{}
	for q := range part.Ranks() {
		if q == c.Rank() {
			continue
		}
		qlo, qhi := part.Range(q)
		var cols []int32
		for _, j := range full.Col[full.RowPtr[qlo]:full.RowPtr[qhi]] {
			if j >= lo && j < hi {
				cols = append(cols, int32(j-lo))
			}
		}
		slices.Sort(cols)
		if cols = slices.Compact(cols); len(cols) > 0 {
			want[q] = cols
		}
	}
	if len(A.Sends) != len(want) {
		t.Errorf("rank %d sends to %d ranks, want %d", c.Rank(), len(A.Sends), len(want))
	}
	for _, s := range A.Sends {
		if !slices.Equal(s.Idx, want[s.Rank]) {
			t.Errorf("rank %d sends rank %d entries %v, want %v", c.Rank(), s.Rank, s.Idx, want[s.Rank])
		}
	}
}

// TestSpMVNonsymmetric: the halo plan comes from the column pattern of each
// stripe, not from symmetry. On an upper band (a rank receives from ranks
// it never sends to), convdiff and the shared nonsymmetric matrices, on 1
// to 4 ranks, the plan is what the other stripes reference and the product
// equals the serial one.
func TestSpMVNonsymmetric(t *testing.T) {
	files, _ := filepath.Glob("../../shared/matrices/nonsym/*.mtx")
	for np := 1; np <= 4; np++ {
		mpitest.Run(t, np, func(t *testing.T, c *comm.Comm) {
			band := upperBand(40, 7)
			for _, full := range []*dsmat.Rows{band, generate(t, "convdiff:5:100")} {
				part := dsmat.NewPartition(full.N, np)
				lo, hi := part.Range(c.Rank())
				A, err := dsmat.New(c, part, stripe(full, lo, hi))
				if err != nil {
					t.Fatal(err)
				}
				checkPlan(t, c, full, part, A)
				checkSpMV(t, c, full, part, backend.Double)
				if full != band {
					continue
				}
				for _, b := range A.Off {
					if b.Rank < c.Rank() {
						t.Errorf("rank %d: upper band holds columns of the lower rank %d", c.Rank(), b.Rank)
					}
				}
				for _, s := range A.Sends {
					if s.Rank > c.Rank() {
						t.Errorf("rank %d: upper band sends to the higher rank %d", c.Rank(), s.Rank)
					}
				}
			}
			for _, f := range files {
				rows, part, err := matfile.ReadMatrix(c, f)
				if err != nil {
					t.Fatal(err)
				}
				checkStripeSpMV(t, c, rows, part, backend.Double)
			}
		})
	}
}
