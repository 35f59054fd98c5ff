package gpu

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
// The levels lie in one allocation of the run (fsaiRun.levels), made at the
// first level with room for twice its rows, which holds every level below
// it too (each has at most half the rows of the one above), and reused by
// the batches after: one allocation for the set-up rather than a dozen per
// level, which cost 15 ms on diffusion:200 (docs/gpu.md, eleventh session).

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
func (r *fsaiRun) newLevel(above fsaiSetup, up uintptr, rows int) *fsaiLevel {
	b := r.b
	least := r.job.levelRows
	if least == 0 {
		least = minLevelRows * b.sms
	}
	if rows < least || !r.levelRoom(rows) {
		return nil
	}
	v := &fsaiLevel{setup: above, up: up}
	r.carveLevel(&r.levels, v, rows)
	if r.levels.err != nil {
		return nil
	}
	r.l.levels(&r.fn.compact, above, v.setup, up)
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

// levelRoom reports whether the run's levels have room for one more of
// rows rows, allocating them, with room for twice as many, when there are
// none yet or too few for a first level: only then, and only within half
// of the device memory free.
func (r *fsaiRun) levelRoom(rows int) bool {
	var need arena // sizes the level
	need.size = int(^uint(0) >> 1)
	r.carveLevel(&need, &fsaiLevel{}, rows)
	a := &r.levels
	if a.used+need.used+256 <= a.size {
		return true
	}
	if a.used > 0 {
		return false // a level below the first: as much as the first was given
	}
	b := r.b
	free, err := b.freeMemory()
	if err != nil || uint64(2*need.used) > free/2 {
		return false
	}
	if a.base != 0 {
		b.free(a.base, "levels of the adaptive steps")
		*a = arena{}
	}
	p, err := b.alloc(2*need.used, "levels of the adaptive steps")
	if err != nil {
		return false
	}
	*a = arena{base: p, size: 2 * need.used}
	return true
}

// restore hands the results of level v's rows back to the level above.
func (r *fsaiRun) restore(above, v *fsaiLevel) {
	r.l.levels(&r.fn.restore, above.setup, v.setup, v.up)
}
