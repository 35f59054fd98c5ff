// Command capi is the C API of fsai-dist: the functions of package solver
// for C and Fortran programs, built as a shared library,
//
//	go build -buildmode=c-shared -o lib/libfsai.so ./capi
//
// and declared in include/fsai.h (C) and include/fsai.f90 (a Fortran module
// of iso_c_binding interfaces). Matrices and solvers are opaque int64
// handles; functions return FSAI_OK (0) or an error code, and
// fsai_last_error gives the message. The library works on a duplicate of
// the communicator the program passes to fsai_init, and leaves the
// program's MPI as it found it: it does not initialize MPI when the program
// has, nor finalize it then.
package main

// #cgo pkg-config: ompi
// #include <mpi.h>
// #include <stdint.h>
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
	"github.com/fsai-dist/fsai-dist/solver"
)

// Return codes; include/fsai.h and include/fsai.f90 repeat them.
const (
	codeOK           = 0
	codeNotConverged = 1  // fsai_solve: the solve stopped without converging
	codeInput        = -1 // bad input on this rank (every rank returns an error)
	codePeer         = -2 // another rank had bad input
	codeFailure      = -3 // MPI, device or internal failure
	codeHandle       = -4 // not a handle of this library, or fsai_init not called
)

// state is everything the library holds; calls hold mu.
var state struct {
	mu      sync.Mutex
	c       *comm.Comm // duplicate of the program's communicator
	handles map[int64]any
	results map[int64][]solver.Result // each solver's last solve, by handle
	next    int64
	lastErr string
}

func main() {}

// call runs f with the library's state locked, turns its error (or a panic)
// into a return code and keeps the message for fsai_last_error.
func call(f func() error) (code C.int) {
	state.mu.Lock()
	defer state.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			state.lastErr = fmt.Sprintf("fsai: internal error: %v", r)
			code = codeFailure
		}
	}()
	err := f()
	var ce codedError
	switch {
	case err == nil:
		return codeOK
	case errors.As(err, &ce):
		code = ce.code
	case errors.Is(err, comm.ErrPeer):
		code = codePeer
	default:
		code = codeInput
	}
	state.lastErr = err.Error()
	return code
}

// codedError is an error with its own return code.
type codedError struct {
	code C.int
	err  error
}

func (e codedError) Error() string { return e.err.Error() }
func (e codedError) Unwrap() error { return e.err }

func failure(err error) error { return codedError{codeFailure, err} }

func badHandle(format string, args ...any) error {
	return codedError{codeHandle, fmt.Errorf(format, args...)}
}

// lookup returns the object of handle h as a T. The handle table tells a
// freed handle from a live one: handles count up from 1 and are never
// reused, so 0, a freed handle and one the library never returned are all
// refused.
func lookup[T any](h C.int64_t, what string) (T, error) {
	v, ok := state.handles[int64(h)].(T)
	if !ok {
		article := "a"
		if strings.HasPrefix(what, "o") {
			article = "an"
		}
		return v, badHandle("fsai: %d is not %s %s handle: not made by this library, or freed", int64(h), article, what)
	}
	return v, nil
}

// store registers v and returns its handle, never one returned before.
func store(v any) C.int64_t {
	state.next++
	state.handles[state.next] = v
	return C.int64_t(state.next)
}

// world returns the library's communicator, or an error before fsai_init.
func world() (*comm.Comm, error) {
	if state.c == nil {
		return nil, badHandle("fsai: the library is not initialized: fsai_init has not been called, or fsai_finalize has")
	}
	return state.c, nil
}

// fsai_init starts the library on a duplicate of the program's communicator
// (its Fortran handle: MPI_Comm_c2f(comm) from C). If the program has not
// initialized MPI, the library does, and fsai_finalize finalizes it.
// Collective.
//
//export fsai_init
func fsai_init(fcomm C.MPI_Fint) C.int {
	return call(func() error {
		if state.c != nil {
			return errors.New("fsai: fsai_init called twice")
		}
		if err := comm.Init(); err != nil {
			return failure(err)
		}
		parallel.Pin() // the set-up's consecutive parallel passes must split their ranges alike
		c, err := comm.FromFortran(int(fcomm))
		if err != nil {
			return err
		}
		state.c, state.handles, state.results = c, map[int64]any{}, map[int64][]solver.Result{}
		return nil
	})
}

// fsai_finalize frees every matrix and solver and the library's
// communicator, and finalizes MPI if fsai_init initialized it. Collective.
//
//export fsai_finalize
func fsai_finalize() C.int {
	return call(func() error {
		c, err := world()
		if err != nil {
			return err
		}
		var errs []error
		for _, v := range state.handles {
			if s, ok := v.(*solver.Solver); ok {
				errs = append(errs, s.Free())
			}
		}
		state.handles, state.results, state.c = nil, nil, nil
		errs = append(errs, c.Free(), comm.Finalize())
		if err := errors.Join(errs...); err != nil {
			return failure(err)
		}
		return nil
	})
}

// fsai_last_error copies the message of the last failed call, cut to
// len-1 bytes and NUL-terminated, into buf, and returns the message's full
// length (0 when no call has failed).
//
//export fsai_last_error
func fsai_last_error(buf *C.char, length C.int) C.int {
	state.mu.Lock()
	defer state.mu.Unlock()
	msg := state.lastErr
	if buf != nil && length > 0 {
		out := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(length))
		n := copy(out[:len(out)-1], msg)
		out[n] = 0
	}
	return C.int(len(msg))
}
