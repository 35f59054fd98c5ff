package comm

// #include "comm.h"
import "C"

import (
	"fmt"
	"unsafe"
)

// Request is a nonblocking operation in flight. Its MPI_Request lives in C
// memory, freed when the operation completes; a completed Request, or a nil
// one, is inactive: waiting on it returns at once.
type Request struct {
	h *C.MPI_Request // nil once complete
}

// Isend starts sending b to rank dest of c with tag tag. b must stay
// allocated and unchanged until the request completes.
func Isend[T Elem](c *Comm, b *Buf[T], dest, tag int) (*Request, error) {
	n, err := count(len(b.Data), "Isend count")
	if err != nil {
		return nil, err
	}
	return start("MPI_Isend", func(h *C.MPI_Request) C.int {
		return C.MPI_Isend(ptr(b.Data), n, datatype[T](), C.int(dest), C.int(tag), c.h, h)
	})
}

// Irecv starts receiving into b a message of at most len(b.Data) elements
// from rank src of c with tag tag. b must stay allocated and untouched until
// the request completes.
func Irecv[T Elem](c *Comm, b *Buf[T], src, tag int) (*Request, error) {
	n, err := count(len(b.Data), "Irecv count")
	if err != nil {
		return nil, err
	}
	return start("MPI_Irecv", func(h *C.MPI_Request) C.int {
		return C.MPI_Irecv(ptr(b.Data), n, datatype[T](), C.int(src), C.int(tag), c.h, h)
	})
}

// start allocates a request handle in C memory and lets post start the call
// named call on it.
func start(call string, post func(h *C.MPI_Request) C.int) (*Request, error) {
	h := (*C.MPI_Request)(C.malloc(C.size_t(unsafe.Sizeof(C.MPI_Request(nil)))))
	if h == nil {
		return nil, fmt.Errorf("comm: %s: out of C memory", call)
	}
	if err := check(call, post(h)); err != nil {
		C.free(unsafe.Pointer(h))
		return nil, err
	}
	return &Request{h: h}, nil
}

// active reports whether r is still in flight.
func (r *Request) active() bool { return r != nil && r.h != nil }

// settle frees r's handle once MPI has completed the operation, which sets the
// handle to MPI_REQUEST_NULL.
func (r *Request) settle() {
	if *r.h == C.comm_request_null() {
		C.free(unsafe.Pointer(r.h))
		r.h = nil
	}
}

// Test reports whether r has completed, without blocking.
func (r *Request) Test() (bool, error) {
	if !r.active() {
		return true, nil
	}
	var done C.int
	rc := C.MPI_Test(r.h, &done, nil) // nil: MPI_STATUS_IGNORE
	r.settle()
	return done != 0, check("MPI_Test", rc)
}

// Wait blocks until r completes.
func (r *Request) Wait() error {
	if !r.active() {
		return nil
	}
	rc := C.MPI_Wait(r.h, nil) // nil: MPI_STATUS_IGNORE
	r.settle()
	return check("MPI_Wait", rc)
}

// Waitall blocks until all of reqs have completed.
func Waitall(reqs []*Request) error {
	hs, n, err := handles(reqs, "Waitall")
	if err != nil || n == 0 {
		return err
	}
	st := make([]C.MPI_Status, n)
	rc := C.MPI_Waitall(n, &hs[0], &st[0])
	restore(reqs, hs)
	if rc == C.MPI_ERR_IN_STATUS {
		for i := range st {
			if e := st[i].MPI_ERROR; e != C.MPI_SUCCESS && e != C.MPI_ERR_PENDING {
				return fmt.Errorf("comm: MPI_Waitall: request %d: %s", i, errorString(e))
			}
		}
	}
	return check("MPI_Waitall", rc)
}

// Waitany blocks until one of reqs completes and returns its index, or
// returns -1 at once if none is active.
func Waitany(reqs []*Request) (int, error) {
	hs, n, err := handles(reqs, "Waitany")
	if err != nil || n == 0 {
		return -1, err
	}
	var idx C.int
	rc := C.MPI_Waitany(n, &hs[0], &idx, nil) // nil: MPI_STATUS_IGNORE
	restore(reqs, hs)
	i := int(idx)
	if idx == C.MPI_UNDEFINED {
		i = -1
	}
	return i, check("MPI_Waitany", rc)
}

// handles copies the MPI handles of reqs into an array for MPI, with
// MPI_REQUEST_NULL for inactive ones; n is its length as an MPI count.
func handles(reqs []*Request, call string) (hs []C.MPI_Request, n C.int, err error) {
	if n, err = count(len(reqs), call+" request count"); err != nil {
		return nil, 0, err
	}
	hs = make([]C.MPI_Request, len(reqs))
	for i, r := range reqs {
		if r.active() {
			hs[i] = *r.h
		} else {
			hs[i] = C.comm_request_null()
		}
	}
	return hs, n, nil
}

// restore copies the handles back after MPI has completed some of them.
func restore(reqs []*Request, hs []C.MPI_Request) {
	for i, r := range reqs {
		if r.active() {
			*r.h = hs[i]
			r.settle()
		}
	}
}
