// Package comm is a thin cgo binding over MPI (Open MPI's mpi.h by default):
// start-up and shutdown, ranks, point-to-point messages with requests, and the
// collectives the solver needs. Nothing else in the tree calls MPI directly.
//
// # Threads
//
// Init asks for MPI_THREAD_SERIALIZED, not MPI_THREAD_FUNNELED: the Go
// runtime moves goroutines between OS threads, so successive calls may come
// from different threads. Calls into this package must therefore never be
// concurrent: use it from one goroutine at a time.
//
// # Errors
//
// MPI_COMM_WORLD (and every communicator derived from it) has the error
// handler MPI_ERRORS_RETURN, so MPI failures come back as Go errors naming the
// MPI call and MPI_Error_string's text instead of killing the job. Argument
// errors found by this package (bad counts, too short buffers) are reported
// before any communication: a rank that gets one has not entered the call,
// and its peers may be blocked in it, so such a rank should Abort rather than
// go on. Agree lets ranks that may fail independently (bad input, say) learn
// whether any of them failed and exit together and cleanly.
//
// # Memory
//
// Nonblocking calls (Isend, Irecv) take a Buf, whose memory comes from
// C.calloc: MPI reads or writes it after the call returns, until the request
// completes, and the Go garbage collector can neither move nor free C memory.
// A Buf must be freed explicitly, with Free, once no request uses it any more.
// Blocking calls (the collectives) take plain Go slices: cgo lets C use Go
// memory for the duration of a call.
//
// Init works without mpirun too: Open MPI then starts a singleton job of one
// rank.
package comm
