// Package matfile reads and writes the files of matrices and vectors, in
// parallel: Matrix Market coordinate files and PETSc binary files for a
// square sparse matrix, Matrix Market array files for one vector or a block
// of them. Each rank reads or writes only its own part; a reader returns this
// rank's stripe (dsmat.Rows) or vector part under a dsmat.Partition, which
// package dsmat then splits into its blocks. The package sits above dsmat and
// below the programs: dsmat knows no file format.
//
// Every call is collective and fails on all ranks if it fails on one: the
// rank that found the problem returns its own error, naming the file (and
// the line, for text), the others comm.ErrPeer. The messages begin
// "dsmat: ", the prefix docs/errors.md lists them under, which users and
// scripts match. Writers are atomic: the file appears at its path only once
// every rank has written its part.
package matfile
