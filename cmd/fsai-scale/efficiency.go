package main

import "math"

// efficiency is the parallel efficiency of a run relative to the reference
// run (the smallest rank count that reported), for the total time Tt and
// for each of its parts; NaN where it cannot be computed.
type efficiency struct {
	total, setup, solve, iter float64
}

// times returns the four times an efficiency is computed from, in the order
// of efficiency's fields.
func (r *report) times() [4]float64 {
	return [4]float64{r.tt(), r.SetupS, r.SolveS, r.IterS}
}

// setEfficiency fills recs[i].eff. Strong scaling (fixed problem) expects
// the time to fall as 1/ranks: E = T(r0)*r0 / (T(N)*N). Weak scaling (fixed
// rows per rank) expects it to stay constant: E = T(r0) / T(N). r0 is the
// smallest rank count with a report; records are in increasing rank order.
func setEfficiency(recs []record, weak bool) {
	ref := -1
	for i := range recs {
		if recs[i].rep != nil {
			ref = i
			break
		}
	}
	for i := range recs {
		e := [4]float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
		if ref >= 0 && recs[i].rep != nil {
			t0, t := recs[ref].rep.times(), recs[i].rep.times()
			scale := 1.0
			if !weak {
				scale = float64(recs[ref].ranks) / float64(recs[i].ranks)
			}
			for k := range e {
				if t0[k] > 0 && t[k] > 0 {
					e[k] = scale * t0[k] / t[k]
				}
			}
		}
		recs[i].eff = efficiency{total: e[0], setup: e[1], solve: e[2], iter: e[3]}
	}
}
