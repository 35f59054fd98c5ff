// C helpers for package comm. Open MPI defines its predefined handles
// (MPI_COMM_WORLD, MPI_DOUBLE, MPI_SUM, ...) as macros that take the address
// of global symbols, which cgo cannot evaluate; these functions return them.
#include <mpi.h>
#include <stdlib.h>
#include <sys/mman.h>

// Element kinds, one per type in comm.Elem.
enum { COMM_FLOAT64, COMM_FLOAT32, COMM_INT32, COMM_INT64, COMM_UINT8 };

static inline MPI_Comm comm_world(void) { return MPI_COMM_WORLD; }
static inline MPI_Errhandler comm_errors_return(void) { return MPI_ERRORS_RETURN; }
static inline MPI_Info comm_info_null(void) { return MPI_INFO_NULL; }
static inline MPI_Request comm_request_null(void) { return MPI_REQUEST_NULL; }

// comm_datatype returns the MPI datatype of an element kind, or
// MPI_DATATYPE_NULL (which MPI rejects with an error) for an unknown kind.
static inline MPI_Datatype comm_datatype(int kind) {
	switch (kind) {
	case COMM_FLOAT64: return MPI_DOUBLE;
	case COMM_FLOAT32: return MPI_FLOAT;
	case COMM_INT32: return MPI_INT32_T;
	case COMM_INT64: return MPI_INT64_T;
	case COMM_UINT8: return MPI_UINT8_T;
	}
	return MPI_DATATYPE_NULL;
}

// comm_op returns the MPI operation of a comm.Op (Sum, Max, Min in that
// order), or MPI_OP_NULL (which MPI rejects with an error) for an unknown one.
static inline MPI_Op comm_op(int op) {
	switch (op) {
	case 0: return MPI_SUM;
	case 1: return MPI_MAX;
	case 2: return MPI_MIN;
	}
	return MPI_OP_NULL;
}

// comm_allreduce_in_place keeps MPI_IN_PLACE, the address 1, on the C side:
// Go code must never hold such a pointer.
static inline int comm_allreduce_in_place(void *buf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, count, type, op, comm);
}

// comm_alloc_pages returns size zeroed bytes on whole pages of their own, or
// NULL: a buffer that shares no page with another can be page-locked for
// fast device transfers (cuMemHostRegister) without touching its neighbours.
// The pages come from mmap, zeroed by the kernel when first touched: no
// memset writes them all on one core before use (a block collection's
// messages are 100 MB and more); they are first touched where the data is
// written, by the pack on all cores.
static inline void *comm_alloc_pages(size_t size) {
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

// comm_free_pages releases memory of comm_alloc_pages(size).
static inline void comm_free_pages(void *p, size_t size) { munmap(p, size); }
