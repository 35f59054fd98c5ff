package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// writeView writes the resolved configuration of a run once its set-up is
// done (-view): the ranks and the backend, the matrix and how its values
// are stored, the method with its stopping tests, the preconditioner with
// its parameters and its density, and the halo exchanges.
func writeView(w io.Writer, rep *report) error {
	opt := rep.Options
	input := rep.Problem
	if rep.Matrix != "" {
		input = rep.Matrix
	}
	divtol, stagnation := opt["divtol"], opt["stagnation"]
	if divtol == "0" {
		divtol = "0 (the method's default)"
	}
	if stagnation == "0" {
		stagnation = "off"
	}
	method := fmt.Sprintf("%s: tol %s, maxit %s, divtol %s, stagnation %s", rep.Solver, opt["tol"], opt["maxit"], divtol, stagnation)
	switch {
	case rep.Solver == "gmres":
		method += ", restart " + opt["gmres.restart"]
	case rep.Solver == "cg" && opt["pcg.single-reduction"] == "true":
		method += ", single reduction"
	}
	lines := [][2]string{
		{"ranks", fmt.Sprintf("%d, backend %s, rank 0 on %s", rep.Ranks, rep.Backend, rep.Device)},
		{"matrix", fmt.Sprintf("%s: %d rows, %d nonzeros, values stored %s, partition %s", input, rep.N, rep.NNZ, rep.MatrixValues, rep.Partition)},
		{"method", method},
		{"preconditioner", rep.Prec},
	}
	for _, p := range slices.Collect(slices.Chunk(precParams(rep.Prec, rep.PrecParams), 4)) {
		lines = append(lines, [2]string{"", strings.Join(p, ", ")})
	}
	if rep.PrecNNZ > 0 {
		name := "G"
		if rep.Prec == "spai" {
			name = "M"
		}
		lines = append(lines, [2]string{"", fmt.Sprintf("%s: %d nonzeros, density %.3f of A", name, rep.PrecNNZ, rep.PrecDensity)})
	}
	if c := rep.Coarse; c != nil {
		lines = append(lines, [2]string{"coarse space", fmt.Sprintf("%d unknowns on %d^3 boxes (%d dependent modes dropped), set up in %.3g s", c.Size, c.Boxes, c.Dropped, c.SetupS)})
	}
	lines = append(lines, [2]string{"halos", fmt.Sprintf("%d exchanges device to device, %d through the host", rep.HaloDeviceLinks, rep.HaloHostLinks)})
	var b strings.Builder
	b.WriteString("fsai-dist view:\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "  %-15s %s\n", l[0], l[1])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// adaptiveOnly are the FSAI parameters that static FSAI does not use.
var adaptiveOnly = []string{"afsai.steps", "afsai.step-size", "afsai.eps", "afsai.stall", "afsai.scaled"}

// precParams writes the parameters of preconditioner prec as "name value",
// sorted by name: of values, those prec uses.
func precParams(prec string, values map[string]string) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(values)) {
		unused := prec == "afsai" && strings.HasPrefix(name, "fsai.") || prec == "fsai" && slices.Contains(adaptiveOnly, name)
		if !unused {
			out = append(out, name+" "+values[name])
		}
	}
	return out
}
