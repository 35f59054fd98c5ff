package cudafsai

// Levels of the adaptive set-up's steps (kernels/fsai_compact.cu). A batch
// keeps its rows' state in a structure of arrays, entry p of row k at
// [p*nb + k]: a warp of threads reads adjacent words while its rows are all
// active. Once at most half of them are, the rows still active lie
// scattered, and each thread reads one word of every sector it loads. The
// steps then move those rows into a level of their own, as many rows long,
// and go on there; a level moves its active rows down again when half of
// them have stopped. When the steps are over, each level solves for g and
// hands its rows' results back up, the deepest first, so that the batch
// holds all rows for the assembly of G.
//
// The levels need no memory of their own where the batch's Cholesky
// factors have room for them: once the rows still active have moved down,
// the batch's rows never grow again, so their factors' entries past the
// triangle of the longest pattern they reached are dead (fsaiRun.deadTail).
// On diffusion:200 the levels took 28 GB, whose cuMemFree alone cost 10
// ms (0.35 ms per GB, touched or not, measured on an H200); the dead part of the factors, 26 GB when the first
// rows move down after the third step, holds all of them. Where it is too
// small (rows that move down late), the levels lie in one allocation of
// the run (fsaiRun.levels), made at the first level with room for twice
// its rows, which holds every level below it too (each has at most half
// the rows of the one above), and reused by the batches after: one
// allocation for the set-up rather than a dozen per level, which cost 15
// ms on diffusion:200.

// fsaiLevel is a set of rows the steps work on: the batch (the top level)
// or the rows of the level above still active when it moved them down.
type fsaiLevel struct {
	setup fsaiSetup  // the level's per-row arrays; nb is its row count
	lists [2]uintptr // the active rows of a step and of the next
	up    uintptr    // the row in the level above of each row here
}

// minLevelRows: the steps move the rows still active into a level of their
// own only when there are at least this many per multiprocessor. Fewer go
// on through a list of the level above, where their steps take well under
// a millisecond and the kernels with a warp per row serve them.
const minLevelRows = warpBorderRows

// newLevel makes a level for the rows of the level above (whose setup is
// above) listed in up, rows of them, and moves their state there. It
// returns nil, moving nothing, for fewer rows than the job's levelRows, or
// when the device memory is short: the steps then go on through the list.
func (r *fsaiRun) newLevel(above fsaiSetup, up uintptr, rows, step int) *fsaiLevel {
	b := r.b
	least := r.job.levelRows
	if least == 0 {
		least = minLevelRows * b.SMs()
	}
	if rows < least || !r.levelRoom(above, rows, step) {
		return nil
	}
	v := &fsaiLevel{setup: above, up: up}
	r.carveLevel(r.lv, v, rows)
	if r.lv.err != nil {
		return nil
	}
	r.l.launchCompact(r.l.perRow(int(v.setup.nb)), above, v.setup, up)
	return v
}

// carveLevel points v's arrays, for rows rows, into a.
func (r *fsaiRun) carveLevel(a *arena, v *fsaiLevel, rows int) {
	s := &v.setup
	s.nb, s.active, s.next, s.nact = int64(rows), 0, 0, 0
	allocBatch(a, s, r.job.pl, rows, true)
	s.rows = a.alloc(4*rows, "rows of a level")
	for k := range v.lists {
		v.lists[k] = a.alloc(4*rows, "active rows")
	}
}

// levelRoom reports whether the batch's levels have room for one more of
// rows rows, below the level above, which moves them down after step. For
// the batch's first level it finds them a place (r.lv): the dead part of
// the batch's factors when it holds them, else the run's allocation of
// levels, made, with room for twice as many rows, when there is none yet or
// one too small, and only within half of the device memory free.
func (r *fsaiRun) levelRoom(above fsaiSetup, rows, step int) bool {
	var need arena // sizes the level
	need.size = int(^uint(0) >> 1)
	r.carveLevel(&need, &fsaiLevel{}, rows)
	if r.lv != nil {
		return r.lv.used+need.used+256 <= r.lv.size // below the first: what the first was given
	}
	if !r.job.levelsApart {
		if r.tail = r.deadTail(above, step); need.used+256 <= r.tail.size {
			r.lv = &r.tail
			return true
		}
	}
	a := &r.levels
	if need.used+256 > a.size {
		b := r.b
		free, err := b.FreeMemory()
		if err != nil || uint64(2*need.used) > free/2 {
			return false
		}
		if a.base != 0 {
			b.Free(a.base, "levels of the adaptive steps")
			*a = arena{}
		}
		p, err := b.Alloc(2*need.used, "levels of the adaptive steps")
		if err != nil {
			return false
		}
		*a = arena{base: p, size: 2 * need.used}
	}
	r.lv = a
	return true
}

// deadTail returns the Cholesky factors of the level top, the batch, past
// the triangle of the longest pattern that its rows reach when the rows
// still active after step move down: (step+1)*s entries, as a step adds at
// most s. Nothing there is read or written again.
func (r *fsaiRun) deadTail(top fsaiSetup, step int) arena {
	pl := r.job.pl
	tri := func(m int) int { return m * (m + 1) / 2 }
	live := (4*tri(min((step+1)*pl.s, pl.mmax))*int(top.nb) + 255) &^ 255 // bytes, cuMemAlloc's alignment
	return arena{base: top.l + uintptr(live), size: 4*tri(pl.mmax)*int(top.nb) - live}
}

// restore hands the results of level v's rows back to the level above.
func (r *fsaiRun) restore(above, v *fsaiLevel) {
	r.l.launchRestore(r.l.perRow(int(v.setup.nb)), above.setup, v.setup, v.up)
}
