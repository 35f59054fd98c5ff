package comm

// #include "comm.h"
import "C"

import "errors"

// NodeRank returns the calling process's rank among the ranks of c on the
// same node (sharing memory) and their number: the way to pick a GPU when
// running one rank per GPU. It is a collective over c.
func (c *Comm) NodeRank() (rank, size int, err error) {
	var sub C.MPI_Comm
	if err := check("MPI_Comm_split_type", C.MPI_Comm_split_type(c.h, C.MPI_COMM_TYPE_SHARED, C.int(c.rank), C.comm_info_null(), &sub)); err != nil {
		return 0, 0, err
	}
	rank, size, err = rankSize(sub)
	ferr := check("MPI_Comm_free", C.MPI_Comm_free(&sub))
	if err = errors.Join(err, ferr); err != nil {
		return 0, 0, err
	}
	return rank, size, nil
}
