// Package gentest gives tests and benchmarks a generated problem (package
// problem) distributed over the ranks: this rank's stripe, or the stripes
// bound to a backend.
package gentest

import (
	"testing"

	"github.com/fsai-dist/fsai-dist/backend"
	"github.com/fsai-dist/fsai-dist/comm"
	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/problem"
)

// Stripe generates this rank's stripe of spec under the partition of
// equal rows per rank.
func Stripe(t testing.TB, c *comm.Comm, spec string) (problem.Spec, dsmat.Partition, *dsmat.Rows) {
	t.Helper()
	p, err := problem.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	part := dsmat.NewPartition(p.Rows(), c.Size())
	lo, hi := part.Range(c.Rank())
	rows, err := p.Generate(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	return p, part, rows
}

// Bind splits the stripes rows of part into a distributed matrix and binds
// it to be in double precision.
func Bind(t testing.TB, c *comm.Comm, be backend.Backend, part dsmat.Partition, rows *dsmat.Rows) *dsmat.Operator {
	t.Helper()
	A, err := dsmat.New(c, part, rows)
	if err != nil {
		t.Fatal(err)
	}
	op, err := A.Bind(be, backend.Double)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// Operator is Stripe's matrix bound to be (Bind), with the parsed spec.
func Operator(t testing.TB, c *comm.Comm, be backend.Backend, spec string) (*dsmat.Operator, problem.Spec) {
	t.Helper()
	p, part, rows := Stripe(t, c, spec)
	return Bind(t, c, be, part, rows), p
}
