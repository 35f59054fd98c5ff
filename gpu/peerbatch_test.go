package gpu

import (
	"math/rand/v2"
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
)

// loopback returns links whose outbox j fills inbox j, a vector of n[j]
// entries on this GPU, through counters of this backend: the protocol of
// peer halos between two processes, run by one (two processes are needed
// for CUDA IPC, one suffices for the streams and counters).
func loopback(t *testing.T, b *Backend, n []int) (in []backend.Inbox, out []backend.Outbox, dst []backend.Vector) {
	t.Helper()
	defer b.enter()()
	for _, m := range n {
		v := newVec(t, b, make([]float64, m))
		vv := v.(*Vector)
		i, o := &inbox{b: b}, &outbox{b: b, dst: Vector{b: b, ptr: vv.ptr, n: vv.n}}
		if _, err := b.newCounter(&i.puts); err != nil {
			t.Fatal(err)
		}
		if _, err := b.newCounter(&o.released); err != nil {
			t.Fatal(err)
		}
		o.puts, i.released = i.puts, o.released
		in, out, dst = append(in, i), append(out, o), append(dst, v)
	}
	return in, out, dst
}

// TestPeerBatchesLoopback runs rounds of the halo exchange of a product
// with ten links, one of them empty, so that PutAll launches two gathers
// (eight outboxes, then two), with no wait between rounds: each round
// uploads a new source behind other work, puts (BeginPuts, PutAll,
// EndPuts), awaits every inbox in one batch, copies the inboxes out and
// releases them in one batch. Every copy must be its round's gather,
// src[idx[j]]: a gather that ran before the source was there or before
// the last round's copy, or a copy before the gather, breaks it. Then the
// same through the calls link by link (Put, Await, Release), which go on
// counting where the batches stopped.
func TestPeerBatchesLoopback(t *testing.T) {
	b := openGPU(t)
	rng := rand.New(rand.NewPCG(41, 42))
	const src, rounds = 50000, 3
	lens := []int{3000, 1, 5000, 0, 700, 2500, 4096, 9, 1200, 333}
	in, out, dst := loopback(t, b, lens)
	idx := make([]backend.Index, len(lens))
	lists := make([][]int32, len(lens))
	for j, m := range lens {
		lists[j] = make([]int32, m)
		for k := range lists[j] {
			lists[j][k] = int32(rng.IntN(src))
		}
		idx[j] = newIndex(t, b, lists[j])
	}
	x := newVec(t, b, make([]float64, src))
	w := newVec(t, b, make([]float64, 1<<24))
	for _, batched := range []bool{true, false} {
		hosts := make([][]float64, rounds)
		copies := make([][]backend.Vector, rounds)
		for r := range rounds {
			hosts[r] = randomVec(rng, src)
			for j := range dst {
				copies[r] = append(copies[r], newVec(t, b, make([]float64, lens[j])))
			}
		}
		for r := range rounds {
			// the main stream runs behind: work that the puts must not
			// overtake
			for range 4 {
				b.Fill(w, float64(r))
			}
			b.Upload(x, hosts[r])
			b.BeginPuts()
			if batched {
				b.PutAll(x, out, idx)
			} else {
				for j := range out {
					out[j].Put(x, idx[j])
				}
			}
			b.EndPuts()
			if batched {
				b.AwaitAll(in)
			} else {
				for _, i := range in {
					i.Await()
				}
			}
			for j, v := range dst {
				b.Copy(copies[r][j], v)
			}
			if batched {
				b.ReleaseAll(in)
			} else {
				for _, i := range in {
					i.Release()
				}
			}
		}
		for r := range rounds {
			for j, c := range copies[r] {
				got := download(t, b, c)
				for k, i := range lists[j] {
					if got[k] != hosts[r][i] {
						t.Fatalf("batched %v, round %d, link %d: inbox[%d] = %v, want src[%d] = %v", batched, r, j, k, got[k], i, hosts[r][i])
					}
				}
			}
		}
	}
	for j := range in {
		if n, m := in[j].(*inbox).n, out[j].(*outbox).n; n != 2*rounds || m != 2*rounds {
			t.Errorf("link %d: %d awaits, %d puts, want %d each", j, n, m, 2*rounds)
		}
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
}
