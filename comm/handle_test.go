package comm_test

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/mpitest"
)

// TestFromFortran: the duplicate of a communicator named by its Fortran
// handle has the same ranks, carries collectives, and frees; a handle that
// names nothing is an error, not a crash.
func TestFromFortran(t *testing.T) {
	for _, np := range []int{1, 2} {
		mpitest.Run(t, np, func(t *testing.T, w *comm.Comm) {
			c, err := comm.FromFortran(w.Fortran())
			if err != nil {
				t.Fatal(err)
			}
			if c.Rank() != w.Rank() || c.Size() != w.Size() {
				t.Errorf("duplicate: rank %d of %d, world: %d of %d", c.Rank(), c.Size(), w.Rank(), w.Size())
			}
			if c.Fortran() == w.Fortran() {
				t.Errorf("the duplicate has the world's handle %d", w.Fortran())
			}
			sum, err := comm.AllreduceScalar(c, comm.Sum, int64(c.Rank()+1))
			if err != nil || sum != int64(np*(np+1)/2) {
				t.Errorf("Allreduce on the duplicate: %d, %v", sum, err)
			}
			if err := c.Free(); err != nil {
				t.Error(err)
			}
			if err := w.Free(); err == nil {
				t.Error("Free of MPI_COMM_WORLD succeeded")
			}
			if _, err := comm.FromFortran(1 << 20); err == nil {
				t.Error("FromFortran accepted a handle that names no communicator")
			}
		})
	}
}
