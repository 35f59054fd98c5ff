package solver

import "testing"

// TestNeedsSPD: CG, afsai and fsai need an SPD matrix, jacobi and none do
// not, and a method for general matrices with jacobi or none needs none.
func TestNeedsSPD(t *testing.T) {
	for _, prec := range Precs {
		if !NeedsSPD("cg", prec) {
			t.Errorf("NeedsSPD(cg, %s) = false", prec)
		}
	}
	for _, method := range Methods {
		for _, prec := range Precs {
			want := methodNeedsSPD[method] || prec == "afsai" || prec == "fsai"
			if got := NeedsSPD(method, prec); got != want {
				t.Errorf("NeedsSPD(%s, %s) = %v, want %v", method, prec, got, want)
			}
		}
	}
	if NeedsSPD("", "jacobi") || NeedsSPD("", "none") || !NeedsSPD("", "afsai") || !NeedsSPD("", "fsai") {
		t.Error("the preconditioners' entries: jacobi and none need no SPD matrix, afsai and fsai do")
	}
}

// TestEveryMethodSaysSPD: every registered method says whether it needs an
// SPD matrix, so that the command line knows when to check symmetry.
func TestEveryMethodSaysSPD(t *testing.T) {
	for _, m := range Methods {
		if _, ok := methodNeedsSPD[m]; !ok {
			t.Errorf("method %q has no entry in methodNeedsSPD (solver/spd.go)", m)
		}
	}
	for m := range methodNeedsSPD {
		if methods[m] == nil {
			t.Errorf("methodNeedsSPD names %q, which is not a method", m)
		}
	}
}
