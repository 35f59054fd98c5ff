package comm_test

import (
	"slices"
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
)

func TestCollectives(t *testing.T) {
	onRanks(t, func(t *testing.T, c *comm.Comm) {
		t.Run("Allreduce", func(t *testing.T) { allreduce(t, c) })
		t.Run("Exscan", func(t *testing.T) { exscan(t, c) })
		t.Run("Bcast", func(t *testing.T) { bcast(t, c) })
		t.Run("Alltoall", func(t *testing.T) { alltoall(t, c) })
		t.Run("Alltoallv", func(t *testing.T) { alltoallv(t, c) })
		t.Run("Gatherv", func(t *testing.T) { gatherv(t, c) })
		t.Run("Scatterv", func(t *testing.T) { scatterv(t, c) })
	})
}

func allreduce(t *testing.T, c *comm.Comm) {
	p, r := c.Size(), c.Rank()
	sq := 0 // sum of r*r over the ranks
	for q := range p {
		sq += q * q
	}
	tri := p * (p - 1) / 2 // sum of the ranks
	for _, tc := range []struct {
		op   comm.Op
		want []float64
	}{
		{comm.Sum, []float64{float64(tri), float64(p), -float64(tri), float64(sq)}},
		{comm.Max, []float64{float64(p - 1), 1, 0, float64((p - 1) * (p - 1))}},
		{comm.Min, []float64{0, 1, -float64(p - 1), 0}},
	} {
		data := []float64{float64(r), 1, -float64(r), float64(r * r)}
		if err := comm.Allreduce(c, tc.op, data); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(data, tc.want) {
			t.Errorf("Allreduce(op %d) = %v, want %v", tc.op, data, tc.want)
		}
		ints := []int64{int64(r), 1, -int64(r), int64(r * r)}
		if err := comm.Allreduce(c, tc.op, ints); err != nil {
			t.Fatal(err)
		}
		for i, x := range ints {
			if float64(x) != tc.want[i] {
				t.Errorf("Allreduce(op %d) of int64 = %v, want %v", tc.op, ints, tc.want)
				break
			}
		}
		scalar(t, c, tc.op, float32(r), tc.want[0])
		scalar(t, c, tc.op, int32(r), tc.want[0])
		scalar(t, c, tc.op, uint8(r), tc.want[0])
	}
	if err := comm.Allreduce[float64](c, comm.Sum, nil); err != nil {
		t.Errorf("Allreduce of nothing: %v", err)
	}
	if _, err := comm.AllreduceScalar(c, comm.Op(7), 1.0); err == nil {
		t.Errorf("Allreduce with an unknown Op succeeded")
	}
}

// scalar checks that AllreduceScalar of x with op is want.
func scalar[T comm.Elem](t *testing.T, c *comm.Comm, op comm.Op, x T, want float64) {
	t.Helper()
	got, err := comm.AllreduceScalar(c, op, x)
	if err != nil {
		t.Fatal(err)
	}
	if float64(got) != want {
		t.Errorf("AllreduceScalar(op %d) of %T %v = %v, want %v", op, x, x, got, want)
	}
}

func exscan(t *testing.T, c *comm.Comm) {
	r := c.Rank()
	want := r * (r + 1) / 2 // 1 + 2 + ... + r
	n, err := comm.Exscan(c, int64(r+1))
	if err != nil {
		t.Fatal(err)
	}
	x, err := comm.Exscan(c, float64(r+1))
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(want) || x != float64(want) {
		t.Errorf("Exscan of rank+1 = %d (int64), %v (float64); want %d", n, x, want)
	}
}

func bcast(t *testing.T, c *comm.Comm) {
	root := c.Size() - 1
	want := []int32{3, -1, 4}
	data := make([]int32, len(want))
	if c.Rank() == root {
		copy(data, want)
	}
	if err := comm.Bcast(c, data, root); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(data, want) {
		t.Errorf("Bcast from %d = %v, want %v", root, data, want)
	}
	if err := comm.Bcast[float64](c, nil, 0); err != nil {
		t.Errorf("Bcast of nothing: %v", err)
	}
}

func alltoall(t *testing.T, c *comm.Comm) {
	p, r := c.Size(), c.Rank()
	send, recv := make([]int32, 2*p), make([]int32, 2*p)
	for q := range p {
		for j := range 2 {
			send[2*q+j] = int32(100*r + 10*q + j)
		}
	}
	if err := comm.Alltoall(c, send, recv); err != nil {
		t.Fatal(err)
	}
	for q := range p {
		for j := range 2 {
			if got, want := recv[2*q+j], int32(100*q+10*r+j); got != want {
				t.Errorf("Alltoall: element %d from rank %d = %d, want %d", j, q, got, want)
			}
		}
	}
	if err := comm.Alltoall[float64](c, nil, nil); err != nil {
		t.Errorf("Alltoall of nothing: %v", err)
	}
	// Every rank detects a bad length before communicating.
	if err := comm.Alltoall(c, send, recv[1:]); err == nil {
		t.Errorf("Alltoall with a short recv succeeded")
	}
}

// part is the number of elements rank from sends to rank to in the tests of
// the v-collectives: uneven, and zero for some pairs.
func part(from, to int) int { return (from + 2*to) % 3 }

// val is the k-th element that rank from sends to rank to.
func val(from, to, k int) float32 { return float32(100*from + 10*to + k) }

func alltoallv(t *testing.T, c *comm.Comm) {
	p, r := c.Size(), c.Rank()
	var send []float32
	sendCounts, recvCounts := make([]int, p), make([]int, p)
	nrecv := 0
	for q := range p {
		sendCounts[q], recvCounts[q] = part(r, q), part(q, r)
		for k := range sendCounts[q] {
			send = append(send, val(r, q, k))
		}
		nrecv += recvCounts[q]
	}
	recv := make([]float32, nrecv)
	if err := comm.Alltoallv(c, send, sendCounts, recv, recvCounts); err != nil {
		t.Fatal(err)
	}
	i := 0
	for q := range p {
		for k := range recvCounts[q] {
			if got, want := recv[i], val(q, r, k); got != want {
				t.Errorf("Alltoallv: element %d from rank %d = %v, want %v", k, q, got, want)
			}
			i++
		}
	}
	zeros := make([]int, p)
	if err := comm.Alltoallv[float64](c, nil, zeros, nil, zeros); err != nil {
		t.Errorf("Alltoallv of nothing: %v", err)
	}
	// Every rank detects bad counts before communicating.
	if err := comm.Alltoallv(c, send, sendCounts[1:], recv, recvCounts); err == nil {
		t.Errorf("Alltoallv with too few counts succeeded")
	}
	if err := comm.Alltoallv(c, send, sendCounts, recv, append(zeros[1:], nrecv+1)); err == nil {
		t.Errorf("Alltoallv with counts beyond the buffer succeeded")
	}
	if err := comm.Alltoallv(c, send, sendCounts, recv, append(zeros[1:], -1)); err == nil {
		t.Errorf("Alltoallv with a negative count succeeded")
	}
}

func gatherv(t *testing.T, c *comm.Comm) {
	p, r := c.Size(), c.Rank()
	for _, root := range []int{0, p - 1} {
		send := make([]float32, part(r, root))
		for k := range send {
			send[k] = val(r, root, k)
		}
		var recv []float32
		var counts []int
		if r == root {
			counts = make([]int, p)
			for q := range p {
				counts[q] = part(q, root)
			}
			recv = make([]float32, sum(counts))
		}
		if err := comm.Gatherv(c, send, recv, counts, root); err != nil {
			t.Fatal(err)
		}
		var want []float32
		if r == root {
			for q := range p {
				for k := range part(q, root) {
					want = append(want, val(q, root, k))
				}
			}
		}
		if !slices.Equal(recv, want) {
			t.Errorf("Gatherv to %d = %v, want %v", root, recv, want)
		}
	}
}

func scatterv(t *testing.T, c *comm.Comm) {
	p, r := c.Size(), c.Rank()
	for _, root := range []int{0, p - 1} {
		var send []float32
		var counts []int
		if r == root {
			counts = make([]int, p)
			for q := range p {
				counts[q] = part(root, q)
				for k := range counts[q] {
					send = append(send, val(root, q, k))
				}
			}
		}
		recv := make([]float32, part(root, r))
		if err := comm.Scatterv(c, send, counts, recv, root); err != nil {
			t.Fatal(err)
		}
		for k, got := range recv {
			if want := val(root, r, k); got != want {
				t.Errorf("Scatterv from %d: element %d = %v, want %v", root, k, got, want)
			}
		}
	}
}

func sum(s []int) int {
	n := 0
	for _, x := range s {
		n += x
	}
	return n
}
