package krylov

import (
	"fmt"
	"math"

	"github.com/fsai-dist/fsai-dist/ddmat"
)

// Scales returns the power of two each column of b is solved scaled by,
// given the norms of b's columns: 1 where the norm lies in [2^-64, 2^64]
// (or is 0, NaN or infinite), else the one that brings it into [1/2, 1)
// (into [2^-52, 1) for a subnormal norm). A method solves scale*b with x
// scaled alike (ScaleColumns), so that its dot products neither underflow
// (b of entries 1e-200) nor overflow (1e200); powers of two change no bits.
func Scales(bnorm []float64) []float64 {
	s := make([]float64, len(bnorm))
	for c, v := range bnorm {
		s[c] = 1
		if _, e := math.Frexp(v); Finite(v) && v > 0 && (e < -63 || e > 65) {
			s[c] = math.Ldexp(1, min(-e, 1022)) // 2^1023 is the largest power of two
		}
	}
	return s
}

// ScaleColumns multiplies the columns of x by scale (by 1/scale when
// inverse); it does nothing when every scale is 1.
func ScaleColumns(x *ddmat.Dense, scale []float64, inverse bool) {
	a, ones := make([]float64, len(scale)), true
	for c, v := range scale {
		a[c] = v
		if inverse {
			a[c] = 1 / v
		}
		ones = ones && v == 1
	}
	if !ones {
		ddmat.AxpbyCols(x, a, x, make([]float64, len(a)))
	}
}

// Residual sets dst = scale*b - A x column by column, with q (shaped like
// x) as scratch: the true residual of the scaled system a method solves.
// q may be dst itself, for a method that has no vector to spare (the
// product then goes to dst, and scale*b is added to its negative: the same
// bits, as scale is a power of two).
func Residual(A Operator, dst, b, x, q *ddmat.Dense, scale []float64) error {
	if err := A.ApplyBlock(q.V, x.V, x.Cols); err != nil {
		return err
	}
	negOnes := make([]float64, len(scale))
	for c := range negOnes {
		negOnes[c] = -1
	}
	if q == dst {
		ddmat.AxpbyCols(dst, scale, b, negOnes)
		return nil
	}
	ddmat.Copy(dst, b)
	ddmat.AxpbyCols(dst, negOnes, q, scale)
	return nil
}

// TrueRelRes returns the true relative residual of every column of x in
// the scaled system a method solves, ||scale*b - A x|| / (scale*||b||), 0
// for a zero right-hand side; bnorm are the norms of b's columns, r and q
// (shaped like x) scratch.
func TrueRelRes(A Operator, r, b, x, q *ddmat.Dense, bnorm, scale []float64) ([]float64, error) {
	if err := Residual(A, r, b, x, q, scale); err != nil {
		return nil, err
	}
	rnorm, err := ddmat.Norms(r)
	if err != nil {
		return nil, err
	}
	for c := range rnorm {
		if bnorm[c] == 0 {
			rnorm[c] = 0
		} else {
			rnorm[c] /= bnorm[c] * scale[c]
		}
	}
	return rnorm, nil
}

// Settled returns the Result of a one-column solve that is over before it
// starts, given ||b||: a zero right-hand side, whose solution is x = 0
// (converged), or one that holds NaN or Inf (reason nan, x unchanged). It
// reports false for any other b.
func Settled(opt Options, bnorm float64, x *ddmat.Dense) (Result, bool, error) {
	switch {
	case bnorm == 0:
		x.BE.Fill(x.V, 0)
		m := NewMonitor(opt, 0)
		m.Converged, m.Reason = true, Converged
		return m.Result, true, x.BE.Err()
	case !Finite(bnorm):
		m := NewMonitor(opt, math.NaN())
		m.Stop(NaN, "||b|| = %v: the right-hand side holds NaN or Inf", bnorm)
		return m.Result, true, nil
	}
	return Result{}, false, nil
}

// SolveOne runs a method that solves one right-hand side at a time (name,
// for its messages): it checks that b and x have one column, settles a
// zero or non-finite b (Settled), runs the method on scale*b from the
// scaled x (Scales: run gets ||b|| and the scale), sets the Result's RelRes
// to the true relative residual of x (r and q, shaped like b, scratch) and
// scales x back.
func SolveOne(name string, A Operator, b, x, r, q *ddmat.Dense, opt Options,
	run func(bnorm float64, scale []float64) (Result, error)) ([]Result, error) {
	if b.Cols != 1 || x.Cols != 1 {
		return nil, fmt.Errorf("%s: %d right-hand sides and %d initial guesses: it solves one at a time", name, b.Cols, x.Cols)
	}
	bnorm, err := ddmat.Norms(b)
	if err != nil {
		return nil, err
	}
	if res, over, err := Settled(opt, bnorm[0], x); over {
		return []Result{res}, err
	}
	scale := Scales(bnorm)
	ScaleColumns(x, scale, false)
	res, err := run(bnorm[0], scale)
	if err != nil {
		return nil, err
	}
	relres, err := TrueRelRes(A, r, b, x, q, bnorm, scale)
	if err != nil {
		return nil, err
	}
	res.RelRes = relres[0]
	ScaleColumns(x, scale, true)
	return []Result{res}, nil
}
