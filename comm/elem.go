package comm

// #include "comm.h"
import "C"

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"
)

// Elem lists the element types that messages and reductions carry.
type Elem interface {
	~float64 | ~float32 | ~int32 | ~int64 | ~uint8
}

// datatype returns the MPI datatype of T.
func datatype[T Elem]() C.MPI_Datatype {
	var kind C.int
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Float64:
		kind = C.COMM_FLOAT64
	case reflect.Float32:
		kind = C.COMM_FLOAT32
	case reflect.Int32:
		kind = C.COMM_INT32
	case reflect.Int64:
		kind = C.COMM_INT64
	case reflect.Uint8:
		kind = C.COMM_UINT8
	}
	return C.comm_datatype(kind)
}

// count converts n, a count or displacement, to the int that MPI takes.
func count(n int, what string) (C.int, error) {
	if n < 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("comm: %s %d out of MPI int range", what, n)
	}
	return C.int(n), nil
}

// ptr returns the address of s's first element, nil for a nil slice. MPI
// never dereferences it for a zero count.
func ptr[T any](s []T) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(s))
}
