package main

import (
	"slices"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/pcg"
)

// precNames lists the values -prec accepts.
var precNames = []string{"none", "jacobi"}

func isPrec(name string) bool { return slices.Contains(precNames, name) }

// newPreconditioner sets up the preconditioner that -prec names and records
// its figures in the report.
func newPreconditioner(o *options, A *dsmat.Matrix, op *dsmat.Operator, rep *report) (pcg.Preconditioner, error) {
	switch o.prec {
	case "jacobi":
		return pcg.NewJacobi(A, op.Backend())
	default:
		return pcg.None{}, nil
	}
}
