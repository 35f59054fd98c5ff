package comm

// #cgo pkg-config: ompi
// #include "comm.h"
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Comm is an MPI communicator.
type Comm struct {
	h          C.MPI_Comm
	rank, size int
}

// world is MPI_COMM_WORLD once Init has succeeded; finalized records Finalize.
var (
	world     *Comm
	finalized bool
)

// Init initializes MPI with MPI_THREAD_SERIALIZED and sets MPI_ERRORS_RETURN on
// MPI_COMM_WORLD. Calling it again is a no-op; calling it after Finalize is an
// error, as MPI cannot be restarted. When the program has initialized MPI
// itself (a C or Fortran program using fsai-dist as a library), Init adopts
// that MPI as it is, and Finalize will not finalize it.
func Init() error {
	if finalized {
		return errors.New("comm: Init after Finalize")
	}
	if world != nil {
		return nil
	}
	if found, err := adopt(); found || err != nil {
		return err
	}
	var provided C.int
	if err := check("MPI_Init_thread", C.MPI_Init_thread(nil, nil, C.MPI_THREAD_SERIALIZED, &provided)); err != nil {
		return err
	}
	if provided < C.MPI_THREAD_SERIALIZED {
		return fmt.Errorf("comm: MPI_Init_thread: MPI provides thread level %d, need MPI_THREAD_SERIALIZED (%d)", provided, C.MPI_THREAD_SERIALIZED)
	}
	h := C.comm_world()
	if err := check("MPI_Comm_set_errhandler", C.MPI_Comm_set_errhandler(h, C.comm_errors_return())); err != nil {
		return err
	}
	rank, size, err := rankSize(h)
	if err != nil {
		return err
	}
	world = &Comm{h: h, rank: rank, size: size}
	return nil
}

// Initialized reports whether Init has succeeded and Finalize has not been called.
func Initialized() bool { return world != nil && !finalized }

// Finalize shuts MPI down. It is a no-op if MPI is not initialized or already
// finalized, or if the program initialized it (see Init).
func Finalize() error {
	if !Initialized() || adopted {
		return nil
	}
	finalized = true
	return check("MPI_Finalize", C.MPI_Finalize())
}

// World returns MPI_COMM_WORLD. It panics if Init has not succeeded: that is
// a programming error, not a run-time condition.
func World() *Comm {
	if world == nil {
		panic("comm: World called before Init")
	}
	return world
}

// Rank returns the calling process's rank in c.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of ranks in c.
func (c *Comm) Size() int { return c.size }

// Barrier blocks until all ranks of c have called it.
func (c *Comm) Barrier() error {
	return check("MPI_Barrier", C.MPI_Barrier(c.h))
}

// Abort writes msg as one line to stderr and ends all ranks of the job with
// exit code code (MPI_Abort). It never returns.
func (c *Comm) Abort(code int, msg string) {
	fmt.Fprintln(os.Stderr, strings.TrimRight(msg, "\n"))
	if Initialized() {
		C.MPI_Abort(c.h, C.int(code))
	}
	os.Exit(code) // MPI_Abort does not return while MPI runs; this covers the rest.
}

// rankSize returns the calling process's rank in communicator h and its size.
func rankSize(h C.MPI_Comm) (rank, size int, err error) {
	var r, s C.int
	if err := check("MPI_Comm_rank", C.MPI_Comm_rank(h, &r)); err != nil {
		return 0, 0, err
	}
	if err := check("MPI_Comm_size", C.MPI_Comm_size(h, &s)); err != nil {
		return 0, 0, err
	}
	return int(r), int(s), nil
}

// check turns the return code of MPI function call into an error, nil for MPI_SUCCESS.
func check(call string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	return fmt.Errorf("comm: %s: %s", call, errorString(rc))
}

// errorString returns MPI_Error_string's text for an MPI error code.
func errorString(rc C.int) string {
	var buf [C.MPI_MAX_ERROR_STRING]C.char
	var n C.int
	if C.MPI_Error_string(rc, &buf[0], &n) != C.MPI_SUCCESS {
		return fmt.Sprintf("MPI error code %d", rc)
	}
	return C.GoStringN(&buf[0], n)
}
