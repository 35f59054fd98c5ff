package gpu

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/backend"
)

// UpdateSRCols is single-reduction CG's vector update (pcg.SingleFused),
// one pass per chunk of columns (kernels/cgsr.cu): p = u + b p, s = w + b
// s, x += a p, r -= a s; with d not nil also u = d .* r, adding r'u and
// r'r of column c to sums k+c and 2k+c of sum. It does not wait.
func (b *Backend) UpdateSRCols(x, r, p, s, u, w, d backend.Vector, a, beta []float64, sum backend.Sum) {
	defer b.enter()()
	k := len(a)
	vs := b.block("UpdateSRCols", k, x, r, p, s, u, w)
	sv := b.sum("UpdateSRCols", sum, 3*k)
	var dv *Vector
	if d != nil {
		if dv = b.vector("UpdateSRCols", d); dv == nil {
			return
		}
	}
	switch {
	case vs == nil || sv == nil || (dv != nil && !b.diagonal("UpdateSRCols", dv, vs[0], k)):
		// the error is recorded
	case len(beta) != k:
		b.fail(fmt.Errorf("gpu: UpdateSRCols: %d scalars a but %d scalars b", k, len(beta)))
	default:
		rows := vs[0].n / k
		b.sumCols(kCGSRUpdate, rows, k, func(c Cfg, c0, kc int) {
			b.launchCGSRUpdate(c, a[c0:c0+kc], beta[c0:c0+kc], int64(rows), int32(k), int32(kc),
				vs[0].at(c0), vs[1].at(c0), vs[2].at(c0), vs[3].at(c0), vs[4].at(c0), vs[5].at(c0), dv.arg(),
				b.partials, b.counter, sv.at(k+c0))
		})
	}
}

// DotsSRCols adds r'u and r'r of column c to sums k+c and 2k+c of sum
// (pcg.SingleFused), without waiting: DotPairCols's kernel, adding to the
// sum.
func (b *Backend) DotsSRCols(r, u backend.Vector, k int, sum backend.Sum) {
	defer b.enter()()
	vs := b.block("DotsSRCols", k, r, u)
	sv := b.sum("DotsSRCols", sum, 3*k)
	if vs == nil || sv == nil {
		return
	}
	rows := vs[0].n / k
	b.sumCols(kDotPairCols, rows, k, func(c Cfg, c0, kc int) {
		b.launchDotPairCols(c, int64(rows), int32(k), int32(kc), int32(k), 1, vs[0].at(c0), vs[1].at(c0), vs[0].at(c0),
			b.partials, b.counter, sv.at(k+c0))
	})
}

// sumCols queues a per-column reduction kernel k that adds to a Sum, chunk
// by chunk of columns, without waiting: launch(c, c0,
// kc) queues it for the kc columns from c0.
func (b *Backend) sumCols(k KernelID, rows, width int, launch func(c Cfg, c0, kc int)) {
	if rows == 0 {
		return
	}
	for c0 := 0; c0 < width; c0 += colChunk {
		kc := min(colChunk, width-c0)
		launch(b.reduceColsGrid(k, rows, kc), c0, kc)
	}
}

// at is the host address of sum i, which kernels add to.
func (s *Sum) at(i int) uintptr { return uintptr(s.p) + uintptr(8*i) }
