package solver

import "testing"

// TestNeedsSPD: CG, afsai and fsai need an SPD matrix; bicgstab, gmres,
// jacobi and none do not.
func TestNeedsSPD(t *testing.T) {
	for _, prec := range Precs {
		if !NeedsSPD("cg", prec) {
			t.Errorf("NeedsSPD(cg, %s) = false", prec)
		}
	}
	for _, method := range Methods {
		for _, prec := range Precs {
			want := method == "cg" || prec == "afsai" || prec == "fsai"
			if got := NeedsSPD(method, prec); got != want {
				t.Errorf("NeedsSPD(%s, %s) = %v, want %v", method, prec, got, want)
			}
		}
	}
	if NeedsSPD("", "jacobi") || NeedsSPD("", "none") || !NeedsSPD("", "afsai") || !NeedsSPD("", "fsai") {
		t.Error("the preconditioners' entries: jacobi and none need no SPD matrix, afsai and fsai do")
	}
}
