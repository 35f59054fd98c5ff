package comm

// #include "comm.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// Op is a reduction operation.
type Op int

// The reduction operations. Their order is that of comm_op in comm.h.
const (
	Sum Op = iota
	Max
	Min
)

// Allreduce reduces data element-wise with op over all ranks of c, in place:
// every rank ends up with the result. All ranks pass the same length.
func Allreduce[T Elem](c *Comm, op Op, data []T) error {
	n, err := count(len(data), "Allreduce count")
	if err != nil {
		return err
	}
	return check("MPI_Allreduce", C.comm_allreduce_in_place(ptr(data), n, datatype[T](), C.comm_op(C.int(op)), c.h))
}

// AllreduceScalar returns x reduced with op over all ranks of c.
func AllreduceScalar[T Elem](c *Comm, op Op, x T) (T, error) {
	v := []T{x}
	err := Allreduce(c, op, v)
	return v[0], err
}

// Exscan returns the sum of x over the ranks of c below the calling one: 0 on
// rank 0. With x a local length, that is the global offset of the local part.
func Exscan[T Elem](c *Comm, x T) (T, error) {
	var sum T
	if err := check("MPI_Exscan", C.MPI_Exscan(unsafe.Pointer(&x), unsafe.Pointer(&sum), 1, datatype[T](), C.comm_op(C.int(Sum)), c.h)); err != nil {
		return 0, err
	}
	if c.rank == 0 {
		return 0, nil // MPI leaves rank 0's result undefined
	}
	return sum, nil
}

// Bcast copies data from rank root to all ranks of c. All ranks pass the same
// length.
func Bcast[T Elem](c *Comm, data []T, root int) error {
	n, err := count(len(data), "Bcast count")
	if err != nil {
		return err
	}
	return check("MPI_Bcast", C.MPI_Bcast(ptr(data), n, datatype[T](), C.int(root), c.h))
}

// Alltoall sends the i-th of Size() equal parts of send to rank i and receives
// the part from rank i into the i-th part of recv, which has send's length.
func Alltoall[T Elem](c *Comm, send, recv []T) error {
	if len(send)%c.size != 0 || len(recv) != len(send) {
		return fmt.Errorf("comm: Alltoall: send and recv lengths %d and %d, want equal multiples of %d ranks", len(send), len(recv), c.size)
	}
	n, err := count(len(send)/c.size, "Alltoall count")
	if err != nil {
		return err
	}
	dt := datatype[T]()
	return check("MPI_Alltoall", C.MPI_Alltoall(ptr(send), n, dt, ptr(recv), n, dt, c.h))
}

// Alltoallv sends sendCounts[i] elements of send to rank i and receives
// recvCounts[i] elements from rank i. The parts for (and from) the ranks lie
// one after the other, in rank order, from the start of send (and recv).
func Alltoallv[T Elem](c *Comm, send []T, sendCounts []int, recv []T, recvCounts []int) error {
	sc, sd, err := layout(sendCounts, c.size, len(send), "Alltoallv send")
	if err != nil {
		return err
	}
	rc, rd, err := layout(recvCounts, c.size, len(recv), "Alltoallv recv")
	if err != nil {
		return err
	}
	dt := datatype[T]()
	return check("MPI_Alltoallv", C.MPI_Alltoallv(ptr(send), &sc[0], &sd[0], dt, ptr(recv), &rc[0], &rd[0], dt, c.h))
}

// Gatherv collects send from all ranks of c on rank root: recvCounts[i]
// elements from rank i, one part after the other in rank order from the start
// of recv. recv and recvCounts matter on root only.
func Gatherv[T Elem](c *Comm, send, recv []T, recvCounts []int, root int) error {
	n, err := count(len(send), "Gatherv send count")
	if err != nil {
		return err
	}
	var rc, rd []C.int
	if c.rank == root {
		if rc, rd, err = layout(recvCounts, c.size, len(recv), "Gatherv recv"); err != nil {
			return err
		}
	}
	dt := datatype[T]()
	return check("MPI_Gatherv", C.MPI_Gatherv(ptr(send), n, dt, ptr(recv), unsafe.SliceData(rc), unsafe.SliceData(rd), dt, C.int(root), c.h))
}

// Scatterv sends sendCounts[i] elements of send from rank root to rank i,
// which receives them into recv; the parts lie one after the other in rank
// order from the start of send. send and sendCounts matter on root only.
func Scatterv[T Elem](c *Comm, send []T, sendCounts []int, recv []T, root int) error {
	n, err := count(len(recv), "Scatterv recv count")
	if err != nil {
		return err
	}
	var sc, sd []C.int
	if c.rank == root {
		if sc, sd, err = layout(sendCounts, c.size, len(send), "Scatterv send"); err != nil {
			return err
		}
	}
	dt := datatype[T]()
	return check("MPI_Scatterv", C.MPI_Scatterv(ptr(send), unsafe.SliceData(sc), unsafe.SliceData(sd), dt, ptr(recv), n, dt, C.int(root), c.h))
}

// layout returns the counts and displacements (prefix sums of the counts)
// for a buffer of length buflen split into parts for size ranks.
func layout(counts []int, size, buflen int, what string) (cnt, displ []C.int, err error) {
	if len(counts) != size {
		return nil, nil, fmt.Errorf("comm: %s: %d counts for %d ranks", what, len(counts), size)
	}
	cnt, displ = make([]C.int, size), make([]C.int, size)
	off := 0
	for i, n := range counts {
		if cnt[i], err = count(n, what+" count"); err != nil {
			return nil, nil, err
		}
		if displ[i], err = count(off, what+" displacement"); err != nil {
			return nil, nil, err
		}
		off += n
	}
	if off > buflen {
		return nil, nil, fmt.Errorf("comm: %s: counts add up to %d, buffer holds %d", what, off, buflen)
	}
	return cnt, displ, nil
}
