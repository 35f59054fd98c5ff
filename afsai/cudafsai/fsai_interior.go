package cudafsai

import "github.com/fsai-dist/fsai-dist/gpu"

// The interior rows of a set-up that starts before the collection ends
// (afsai.Device.StartRows, kernels/fsai_interior.cu): the own rows farther than
// some hops from the rows that A's left blocks store, found on the device
// in the system the run joined there. On the host the search, the lists of
// 4M rows and their upload took 6 to 8 ms of the 13 before the first step
// on a rank of diffusion:200 (one H200).

// interior lists in r.rowsDev, which has room for every own row, the own
// rows of the joined system s (m of them from row own) that are farther
// than r.job.hops from every own row in r.job.seeds in the graph of its
// diagonal block, as local rows; r.rows becomes their number. It returns
// the other own rows, numbered from 0, ascending.
func (r *fsaiRun) interior(s *fsaiSetup, own, m int) ([]int32, error) {
	b, fn, seeds := r.b, r.fn, r.job.seeds
	// dist and near have m entries, pos m+1 (the seeds wait there until
	// the search is over), then the prefix sum's scratch
	scratch, err := b.Alloc(4*(3*m+1+ceilDiv(m+1, gpu.ScanTile)), "interior rows")
	if err != nil {
		return nil, err
	}
	defer b.Free(scratch, "interior rows")
	dist, pos := scratch, scratch+uintptr(4*m)
	near, sums := pos+uintptr(4*(m+1)), pos+uintptr(4*(2*m+1))
	b.Memset32(dist, 0, m)
	if len(seeds) > 0 {
		gpu.UploadSlice(b.Raw, pos, seeds)
		fn.launchSeed(b, b.Blocks(b.ElementBlocks(len(seeds))), int32(len(seeds)), pos, dist)
	}
	for level := 1; level <= r.job.hops; level++ {
		fn.launchHops(b, b.Blocks(b.ElementBlocks(m)), int32(m), int32(own), s.rowptr, s.col, dist, int32(level))
	}
	b.Memset32(pos, 0, 1)
	fn.launchInteriorFlags(b, b.Blocks(b.ElementBlocks(m)), int32(m), dist, pos)
	b.Scan(pos, m+1, sums)
	fn.launchInteriorSplit(b, b.Blocks(b.ElementBlocks(m)), int32(m), int32(own), dist, pos, r.rowsDev, near)
	b.Download(b.Host(), pos+uintptr(4*m), 4)
	if err := b.SyncStream(); err != nil {
		return nil, err
	}
	r.rows = int(*(*int32)(b.Host()))
	out := make([]int32, m-r.rows)
	gpu.DownloadSlice(b.Raw, out, near)
	return out, b.SyncStream()
}
