package afsai

import (
	"errors"
	"slices"
	"time"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/csr"
	"github.com/fsai-dist/fsai-dist/dsmat"
)

// The set-up on a device starts before the collection ends. Most of a
// rank's rows of G cannot reach a row that it receives: their set-up reads
// A's rows at the columns of their patterns, and a pattern reaches a
// received row only through an own row that A's left blocks store (the
// border's own rows). So the device computes, from A's diagonal block
// alone, the own rows farther than interiorHops from those rows while the
// host collects the neighbours' rows (Device.StartRows), and the
// others once the local system is there (RowsRun.Finish), which checks
// that no early row reached a border row (else it computes all rows again
// from the local system) and joins the two parts. A rank without left
// blocks, whose local system is its diagonal block, computes all its rows
// while it serves the others.

// interiorHops: the own rows farther than this many hops from the border's
// own rows are computed early. A pattern of up to 40 entries (the default)
// on a 3D grid of 7-point stencils lies within 4 hops of its row
// (firstReach).
const interiorHops = firstReach - 1

// early is what earlySetup collected and computed.
type early struct {
	ls        *localSystem
	gatherErr error
	gatherS   float64 // the collection's wall seconds
	// computeS is the set-up's wall seconds less those it waited for the
	// collection; rows is how many own rows it computed before the
	// collection ended (none when it computed them all again)
	computeS float64
	rows     int
	f        stripe
	stats    Stats
	kt       KernelTimes
	// err is the set-up's error: ErrDeviceUnsupported sends it to the CPU
	err error
}

// earlyDevice returns cfg's Device when the adaptive set-up of cfg runs on
// it with G kept there (setupFactor), nil otherwise. The
// static set-up collects within K hops, 2 by default, in one round: it
// starts once the rows are there.
func earlyDevice(cfg Config) Device {
	if cfg.Static || !cfg.keptOnDevice() {
		return nil
	}
	return cfg.device()
}

// earlySetup collects the local system within reach (gatherLocal, in a
// goroutine: the only one to call MPI until it returns) while dev computes
// the interior rows, then computes the others. bound is A's diagonal block
// on dev, or nil. Collective.
func earlySetup(A *dsmat.Matrix, dev Device, bound backend.Matrix, cfg Config, reach int) early {
	var e early
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		t := time.Now()
		e.ls, e.gatherErr = gatherLocal(A, cfg.power(), reach, cfg.Setup, true)
		e.gatherS = time.Since(t).Seconds()
	}()
	start := time.Now()
	var waited time.Duration
	wait := func() (Split, error) {
		t := time.Now()
		<-collected
		waited = time.Since(t)
		if e.gatherErr != nil {
			return Split{}, e.gatherErr
		}
		e.ls.split.Bound = bound
		return *e.ls.split, nil
	}
	e.f, e.stats, e.kt, e.rows, e.err = earlyFactor(A, dev, bound, cfg.Params, interiorHops, wait)
	e.computeS = (time.Since(start) - waited).Seconds()
	return e
}

// earlyFactor computes this rank's stripe of G on dev: the interior rows,
// farther than hops from the border's own rows, from A's diagonal block
// (bound on dev, or nil), then, once wait has returned the local system,
// the others; it returns how many rows it computed early. It calls wait
// whatever happens: the collection must end before any further MPI call.
// When wait fails, it returns wait's error and no stripe.
func earlyFactor(A *dsmat.Matrix, dev Device, bound backend.Matrix, p Params, hops int,
	wait func() (Split, error)) (stripe, Stats, KernelTimes, int, error) {
	n := A.LocalRows()
	diag := Split{Border: &csr.Matrix[float32]{Cols: n, RowPtr: make([]int32, 1)}, Diag: A.Diag, Bound: bound}
	seeds := leftRows(A)
	if len(seeds) == 0 { // no left blocks: the local system is the diagonal block
		df, st, kt, err := dev.AdaptiveFactor(diag, p)
		s, werr := wait()
		switch {
		case werr != nil:
			freeFactor(df)
			return stripe{}, st, kt, 0, werr
		case err == nil && s.Own > 0: // rows received all the same: compute from them
			freeFactor(df)
			df, st, kt, err = dev.AdaptiveFactor(s, p)
			return factorStripe(df), st, kt, 0, err
		}
		return factorStripe(df), st, kt, n, ownRowError(err, s)
	}
	run, near, st, kt, err := dev.StartRows(diag, seeds, hops, p)
	s, werr := wait()
	if werr == nil {
		werr = ownRowError(err, s)
	}
	if werr != nil {
		if run != nil {
			run.Free()
		}
		return stripe{}, st, kt, 0, werr
	}
	df, st2, kt2, reached, err := run.Finish(s, near, borderOwnRows(s))
	kt.add(kt2)
	if reached {
		return factorStripe(df), st2, kt, 0, err
	}
	st.merge(st2)
	return factorStripe(df), st, kt, n - len(near), err
}

// ownRowError renumbers a DiagonalError about a row of the diagonal block
// alone (the early computation's system) as the row of the local system s,
// whose own rows follow its s.Own received ones; other errors pass
// unchanged.
func ownRowError(err error, s Split) error {
	var de *diagonalError
	if !errors.As(err, &de) {
		return err
	}
	return DiagonalError(de.row+s.Own, de.d)
}

// factorStripe is a Device's factor as a stripe.
func factorStripe(df DeviceFactor) stripe {
	f := stripe{leftRows: df.LeftRows, diag: df.Diag, diagT: df.DiagT, scratch: df.Scratch}
	if df.Left != nil {
		f.rows = csr.Convert[float64](df.Left)
	}
	return f
}

// freeFactor releases a Device's blocks and scratch.
func freeFactor(df DeviceFactor) {
	f := stripe{diag: df.Diag, diagT: df.DiagT, scratch: df.Scratch}
	f.free()
}

// leftRows returns the own rows (numbered from 0) that A's left blocks
// store, ascending: the rows through which a set-up reaches a received
// row.
func leftRows(A *dsmat.Matrix) []int32 {
	var rows []int32
	for _, b := range A.Off {
		if b.Rank < A.Comm.Rank() {
			rows = append(rows, b.Rows...)
		}
	}
	slices.Sort(rows)
	return slices.Compact(rows)
}

// InteriorRows returns the rows of the square matrix d (numbered from 0,
// ascending) farther than hops from every row in seeds in its graph, and
// the others, near: a breadth-first search from the seeds along the rows'
// columns, the CPU reference of Device.StartRows (which may search
// along the columns' rows: the same on a symmetric pattern).
func InteriorRows(d *csr.Matrix[float64], seeds []int32, hops int) (interior, near []int32) {
	dist := make([]int32, d.Rows) // hops+1 - distance for the rows within hops; 0 beyond
	frontier := make([]int32, 0, len(seeds))
	for _, r := range seeds {
		if dist[r] == 0 {
			dist[r] = int32(hops + 1)
			frontier = append(frontier, r)
		}
	}
	for h := hops; h > 0 && len(frontier) > 0; h-- {
		var next []int32
		for _, r := range frontier {
			cols, _ := d.Row(int(r))
			for _, c := range cols {
				if dist[c] == 0 {
					dist[c] = int32(h)
					next = append(next, c)
				}
			}
		}
		frontier = next
	}
	for i, d := range dist {
		if d == 0 {
			interior = append(interior, int32(i))
		} else {
			near = append(near, int32(i))
		}
	}
	return interior, near
}

// borderOwnRows returns the own rows of s (numbered from 0) that hold
// entries in its border: the rows through which a set-up reaches a
// received row.
func borderOwnRows(s Split) []int32 {
	var out []int32
	for i := s.Own; i < s.Border.Rows; i++ {
		if s.Border.RowPtr[i+1] > s.Border.RowPtr[i] {
			out = append(out, int32(i-s.Own))
		}
	}
	return out
}
