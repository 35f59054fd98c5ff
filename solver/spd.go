package solver

// NeedsSPD reports whether solving with the Krylov method and the
// preconditioner named needs a symmetric positive definite matrix: CG,
// afsai and fsai do; bicgstab, gmres, jacobi and none do not (the spd
// fields of their registry entries). The command line checks a matrix
// file's symmetry and positive diagonal only when it does
// (-check-symmetry), and Jacobi asks for a positive diagonal only then.
// Unknown names need nothing: Options' check refuses them.
func NeedsSPD(method, prec string) bool {
	return MethodNeedsSPD(method) || PrecNeedsSPD(prec)
}
