package comm

// #include "comm.h"
//
// // comm_is_null: MPI_Comm_f2c gives MPI_COMM_NULL, or in Open MPI a null
// // pointer, for a handle that names no communicator.
// static inline int comm_is_null(MPI_Comm c) { return c == MPI_COMM_NULL || c == (MPI_Comm)0; }
import "C"

import (
	"errors"
	"fmt"
)

// adopted records that the program started MPI before Init (a C or Fortran
// program that calls fsai-dist as a library): Init then neither called
// MPI_Init nor changed MPI_COMM_WORLD's error handler, and Finalize leaves
// MPI running for the program to finalize.
var adopted bool

// adopt sets up world for an MPI that the program initialized itself and
// reports whether it found one. Such a program chose its thread level; the
// library's calls are made from the thread that calls it (exported
// functions run on their caller's thread), so any level serves a program
// that calls the library from the thread that initialized MPI.
func adopt() (bool, error) {
	var flag C.int
	if err := check("MPI_Initialized", C.MPI_Initialized(&flag)); err != nil || flag == 0 {
		return false, err
	}
	if err := check("MPI_Finalized", C.MPI_Finalized(&flag)); err != nil {
		return false, err
	}
	if flag != 0 {
		return false, errors.New("comm: Init: the program has already finalized MPI")
	}
	rank, size, err := rankSize(C.comm_world())
	if err != nil {
		return false, err
	}
	world = &Comm{h: C.comm_world(), rank: rank, size: size}
	adopted = true
	return true, nil
}

// FromFortran returns a duplicate (MPI_Comm_dup) of the program's
// communicator with Fortran handle h, the form in which C and Fortran
// programs hand a communicator to a library: Fortran passes its integer
// handle, C passes MPI_Comm_c2f(comm). The duplicate keeps the library's
// messages apart from the program's, and has MPI_ERRORS_RETURN so that
// errors come back as Go errors, leaving the program's communicator as it
// was. It is collective over that communicator; Init must have succeeded.
// Free releases the duplicate.
func FromFortran(h int) (*Comm, error) {
	if !Initialized() {
		return nil, errors.New("comm: FromFortran before Init")
	}
	src := C.MPI_Comm_f2c(C.MPI_Fint(h))
	if C.comm_is_null(src) != 0 {
		return nil, fmt.Errorf("comm: Fortran handle %d names no communicator", h)
	}
	var dup C.MPI_Comm
	if err := check("MPI_Comm_dup", C.MPI_Comm_dup(src, &dup)); err != nil {
		return nil, err
	}
	c := &Comm{h: dup}
	err := check("MPI_Comm_set_errhandler", C.MPI_Comm_set_errhandler(dup, C.comm_errors_return()))
	if err == nil {
		c.rank, c.size, err = rankSize(dup)
	}
	if err != nil {
		return nil, errors.Join(err, c.Free())
	}
	return c, nil
}

// Fortran returns the Fortran handle of c (MPI_Comm_c2f), which FromFortran
// accepts.
func (c *Comm) Fortran() int { return int(C.MPI_Comm_c2f(c.h)) }

// Free releases a communicator that FromFortran made. It is collective over
// c. MPI_COMM_WORLD cannot be freed.
func (c *Comm) Free() error {
	if c.h == C.comm_world() {
		return errors.New("comm: Free of MPI_COMM_WORLD")
	}
	return check("MPI_Comm_free", C.MPI_Comm_free(&c.h))
}
