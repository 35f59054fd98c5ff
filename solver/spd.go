package solver

// methodNeedsSPD says which Krylov methods of the registry methods need a
// symmetric positive definite matrix: CG does; a method for general
// nonsingular matrices (BiCGSTAB, GMRES) is entered here as false. Every
// name of methods has an entry (TestEveryMethodSaysSPD).
var methodNeedsSPD = map[string]bool{
	"cg": true,
}

// NeedsSPD reports whether solving with the Krylov method and the
// preconditioner named needs a symmetric positive definite matrix: CG,
// afsai and fsai do; jacobi and none do not. The command line checks a
// matrix file's symmetry and positive diagonal only when it does
// (-check-symmetry), and Jacobi asks for a positive diagonal only then.
// Unknown names need nothing: Options' check refuses them.
func NeedsSPD(method, prec string) bool {
	return methodNeedsSPD[method] || precs[prec].spd
}
