package comm_test

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
)

type named float64 // Elem admits types by their underlying type

// completions are the ways to wait for a set of requests.
var completions = []struct {
	name     string
	complete func(t *testing.T, reqs []*comm.Request)
}{
	{"Waitall", func(t *testing.T, reqs []*comm.Request) {
		if err := comm.Waitall(reqs); err != nil {
			t.Fatal(err)
		}
	}},
	{"Waitany", func(t *testing.T, reqs []*comm.Request) {
		seen := make([]bool, len(reqs))
		for range reqs {
			i, err := comm.Waitany(reqs)
			if err != nil {
				t.Fatal(err)
			}
			if i < 0 || seen[i] {
				t.Fatalf("Waitany returned %d; done so far: %v", i, seen)
			}
			seen[i] = true
		}
		if i, err := comm.Waitany(reqs); i != -1 || err != nil {
			t.Errorf("Waitany with all complete = %d, %v; want -1, nil", i, err)
		}
	}},
	{"Test", func(t *testing.T, reqs []*comm.Request) {
		for _, r := range reqs {
			for {
				done, err := r.Test()
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
			}
			if err := r.Wait(); err != nil {
				t.Errorf("Wait on a completed request: %v", err)
			}
		}
	}},
}

func TestRing(t *testing.T) {
	onRanks(t, func(t *testing.T, c *comm.Comm) {
		t.Run("float64", func(t *testing.T) { ring[float64](t, c) })
		t.Run("float32", func(t *testing.T) { ring[float32](t, c) })
		t.Run("int32", func(t *testing.T) { ring[int32](t, c) })
		t.Run("int64", func(t *testing.T) { ring[int64](t, c) })
		t.Run("uint8", func(t *testing.T) { ring[uint8](t, c) })
		t.Run("named", func(t *testing.T) { ring[named](t, c) })
		if i, err := comm.Waitany(nil); i != -1 || err != nil {
			t.Errorf("Waitany(nil) = %d, %v; want -1, nil", i, err)
		}
	})
}

// ring sends one half of a buffer to the right neighbour and the other half
// to the left one, through views, and checks what arrives, once for each way
// of completing the requests.
func ring[T comm.Elem](t *testing.T, c *comm.Comm) {
	const n = 6
	p, r := c.Size(), c.Rank()
	right, left := (r+1)%p, (r+p-1)%p
	send, recv := comm.NewBuf[T](2*n), comm.NewBuf[T](2*n)
	defer send.Free()
	defer recv.Free()
	for _, cm := range completions {
		for k := range send.Data {
			send.Data[k] = T(20*r + k)
		}
		clear(recv.Data)
		var reqs []*comm.Request
		post := func(req *comm.Request, err error) {
			if err != nil {
				t.Fatal(err)
			}
			reqs = append(reqs, req)
		}
		post(comm.Irecv(c, recv.Slice(0, n), left, 1))
		post(comm.Irecv(c, recv.Slice(n, n), right, 2))
		post(comm.Isend(c, send.Slice(0, n), right, 1))
		post(comm.Isend(c, send.Slice(n, n), left, 2))
		cm.complete(t, reqs)
		for i := range n {
			if got, want := recv.Data[i], T(20*left+i); got != want {
				t.Errorf("%s: from the left, element %d = %v, want %v", cm.name, i, got, want)
			}
			if got, want := recv.Data[n+i], T(20*right+n+i); got != want {
				t.Errorf("%s: from the right, element %d = %v, want %v", cm.name, i, got, want)
			}
		}
	}
}
