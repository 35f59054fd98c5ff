package spai

import (
	"fmt"

	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// Pattern returns the pattern of the rank's rows of M, on all cores: own
// row i of M has the columns J = col[rowPtr[i]:rowPtr[i+1]], ascending, as
// Rows computes them (row i of the pattern of A~^K), each of them a row
// that l holds. A Device builds the least-squares blocks from it and l.
// It refuses a row as Rows does where a row the pattern reaches was not
// collected.
func Pattern(l *Local, p Params) (rowPtr, col []int64, err error) {
	if err := p.Check(); err != nil {
		return nil, nil, err
	}
	n := l.Count()
	type part struct {
		lens []int64
		cols []int64
	}
	parts := make([]part, parallel.Chunks(n))
	err = parallel.ForErr(n, func(ch, lo, hi int) error {
		w := &worker{l: l, p: p, seen: map[int64]bool{}}
		out := &parts[ch]
		for i := lo; i < hi; i++ {
			g := l.First + int64(i)
			if err := w.pattern(g); err != nil {
				return err
			}
			for _, j := range w.J {
				if _, _, _, ok := l.Row(j); !ok {
					return notCollected(g, j)
				}
			}
			out.lens = append(out.lens, int64(len(w.J)))
			out.cols = append(out.cols, w.J...)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	// the parts joined on all cores: part ch holds the rows of chunk ch
	start := make([]int64, len(parts)+1) // the entries before part ch
	for ch, pt := range parts {
		start[ch+1] = start[ch] + int64(len(pt.cols))
	}
	rowPtr = make([]int64, n+1)
	col = make([]int64, start[len(parts)])
	parallel.For(n, func(ch, lo, _ int) {
		pt := parts[ch]
		copy(col[start[ch]:], pt.cols)
		at := start[ch]
		for k, ln := range pt.lens {
			at += ln
			rowPtr[lo+k+1] = at
		}
	})
	return rowPtr, col, nil
}

// notCollected is the error of global row g of M, whose pattern reaches
// row r of A, which the local system does not hold.
func notCollected(g, r int64) error {
	return fmt.Errorf("spai: row %d of M: row %d of A was not collected", g+1, r+1)
}
