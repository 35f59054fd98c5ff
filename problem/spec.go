package problem

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// MaxN is the largest grid size a Spec accepts: N^3 = 1e15 rows still fits
// an int64 with room to spare, far beyond any machine.
const MaxN = 100000

// anisoZ is the z coefficient of aniso (x and y have 1).
const anisoZ = 1e-3

// DefaultSeed is the seed of "diffusion:N" when the spec gives none.
const DefaultSeed = 1

// DefaultPeclet is the Peclet number of "convdiff:N" when the spec gives
// none.
const DefaultPeclet = 10

// MaxPeclet is the largest Peclet number a Spec accepts: far into
// convection-dominated flow, with the matrix's entries still far from
// float64's range.
const MaxPeclet = 1e9

// DefaultContrast and DefaultNu are the stiffness contrast and Poisson
// ratio of "elasticity:N" when the spec omits them.
const (
	DefaultContrast = 1e3
	DefaultNu       = 0.3
)

// MaxContrast is the largest stiffness contrast a Spec accepts: twelve
// decades between the softest and the stiffest layer, beyond which the
// soft layers' entries drown in the stiff ones' rounding.
const MaxContrast = 1e12

// Spec is a parsed problem description such as "poisson7:64",
// "diffusion:100:7", "convdiff:64:100" or "elasticity:32:1e3:0.3". Seed is
// used by diffusion only, Peclet by convdiff only, Contrast and Nu by
// elasticity only; Parse sets them to their defaults when the spec omits
// them.
type Spec struct {
	Kind     string  // poisson7, poisson27, diffusion, aniso, convdiff or elasticity
	N        int     // grid points per direction; elasticity: elements per direction
	Seed     int64   // diffusion only
	Peclet   float64 // convdiff only: the Peclet number of the wind, >= 0
	Contrast float64 // elasticity only: stiffest over softest layer's Young's modulus, >= 1
	Nu       float64 // elasticity only: Poisson ratio, -1 < Nu < 0.5

	// unclamped keeps elasticity's bottom nodes free: the operator of the
	// whole box, singular, whose null space the tests check.
	unclamped bool
}

// kind describes one problem family for parsing and error messages.
type kind struct {
	name   string
	extras []string // the names of its optional fields after N, in order
}

var kinds = []kind{
	{"poisson7", nil},
	{"poisson27", nil},
	{"diffusion", []string{"seed"}},
	{"aniso", nil},
	{"convdiff", []string{"peclet"}},
	{"elasticity", []string{"contrast", "nu"}},
}

// form is the spec form of k: "elasticity:N[:contrast[:nu]]".
func (k kind) form() string {
	return k.name + ":N" + optional(k.extras)
}

// optional nests the names of optional fields: [:a[:b]].
func optional(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "[:" + names[0] + optional(names[1:]) + "]"
}

// validForms lists every accepted spec form, for error messages.
func validForms() string {
	forms := make([]string, len(kinds))
	for i, k := range kinds {
		forms[i] = k.form()
	}
	return "valid forms: " + strings.Join(forms, ", ") + fmt.Sprintf(" (1 <= N <= %d)", MaxN)
}

func lookup(name string) (kind, bool) {
	for _, k := range kinds {
		if k.name == name {
			return k, true
		}
	}
	return kind{}, false
}

// Parse reads a spec of the form kind:N, diffusion:N:seed,
// convdiff:N:peclet or elasticity:N:contrast:nu (the fields after N
// optional). Errors say what is wrong and list the valid forms.
func Parse(s string) (Spec, error) {
	fail := func(format string, args ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("problem: parse %q: %s; %s", s, fmt.Sprintf(format, args...), validForms())
	}
	fields := strings.Split(s, ":")
	k, ok := lookup(fields[0])
	if !ok {
		return fail("unknown problem %q", fields[0])
	}
	if len(fields) < 2 || fields[1] == "" {
		return fail("missing grid size N")
	}
	if len(fields) > 2+len(k.extras) {
		return fail("too many fields for %s (form %s)", k.name, k.form())
	}
	n, err := strconv.Atoi(fields[1])
	if err != nil {
		return fail("grid size %q is not an integer", fields[1])
	}
	spec := Spec{Kind: k.name, N: n}
	switch k.name {
	case "diffusion":
		spec.Seed = DefaultSeed
	case "convdiff":
		spec.Peclet = DefaultPeclet
	case "elasticity":
		spec.Contrast, spec.Nu = DefaultContrast, DefaultNu
	}
	for f, name := range k.extras[:len(fields)-2] {
		if err := spec.setField(name, fields[2+f]); err != nil {
			return fail("%v", err)
		}
	}
	if err := spec.check(); err != nil {
		return fail("%v", err)
	}
	return spec, nil
}

// setField sets the optional field name from its text.
func (s *Spec) setField(name, text string) error {
	var err error
	switch name {
	case "seed":
		if s.Seed, err = strconv.ParseInt(text, 10, 64); err != nil {
			return fmt.Errorf("seed %q is not an integer", text)
		}
		return nil
	case "peclet":
		s.Peclet, err = strconv.ParseFloat(text, 64)
	case "contrast":
		s.Contrast, err = strconv.ParseFloat(text, 64)
	case "nu":
		s.Nu, err = strconv.ParseFloat(text, 64)
	}
	if err != nil {
		return fmt.Errorf("%s %q is not a number", name, text)
	}
	return nil
}

// check validates a Spec, which may also have been built without Parse.
func (s Spec) check() error {
	if _, ok := lookup(s.Kind); !ok {
		return fmt.Errorf("unknown problem %q", s.Kind)
	}
	if s.N < 1 || s.N > MaxN {
		return fmt.Errorf("grid size %d out of range [1, %d]", s.N, MaxN)
	}
	if s.Kind == "convdiff" && !(s.Peclet >= 0 && s.Peclet <= MaxPeclet) {
		return fmt.Errorf("peclet %g out of range [0, %g]", s.Peclet, float64(MaxPeclet))
	}
	if s.Kind == "elasticity" {
		if !(s.Contrast >= 1 && s.Contrast <= MaxContrast) {
			return fmt.Errorf("contrast %g out of range [1, %g]", s.Contrast, float64(MaxContrast))
		}
		if !(s.Nu > -1 && s.Nu < 0.5) {
			return fmt.Errorf("nu %g out of range (-1, 0.5)", s.Nu)
		}
	}
	return nil
}

// String returns the spec in the form Parse reads; diffusion always shows
// its seed, convdiff its Peclet number, elasticity its contrast and Poisson
// ratio (numbers in the shortest form that reads back exactly).
func (s Spec) String() string {
	switch s.Kind {
	case "diffusion":
		return fmt.Sprintf("%s:%d:%d", s.Kind, s.N, s.Seed)
	case "convdiff":
		return fmt.Sprintf("%s:%d:%s", s.Kind, s.N, number(s.Peclet))
	case "elasticity":
		return fmt.Sprintf("%s:%d:%s:%s", s.Kind, s.N, number(s.Contrast), number(s.Nu))
	}
	return fmt.Sprintf("%s:%d", s.Kind, s.N)
}

// number formats x in the shortest form that parses back to it.
func number(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Symmetric reports whether the problem's matrix is symmetric: every
// problem but convdiff (with a Peclet number above 0) is SPD.
func (s Spec) Symmetric() bool { return s.Kind != "convdiff" || s.Peclet == 0 }

// Rows is the global dimension of the matrix: N^3, and for elasticity
// 3 N (N+1)^2, three displacements at each of the (N+1)^3 nodes but the
// (N+1)^2 clamped ones.
func (s Spec) Rows() int64 {
	n := int64(s.N)
	if s.Kind == "elasticity" {
		return 3 * s.nodeGrid().nodes()
	}
	return n * n * n
}

// MaxNNZ bounds the matrix's stored entries: its rows times the points of
// the stencil (27 for poisson27, 81 for elasticity, 7 for the others).
func (s Spec) MaxNNZ() int64 {
	switch s.Kind {
	case "poisson27":
		return 27 * s.Rows()
	case "elasticity":
		return 81 * s.Rows()
	}
	return 7 * s.Rows()
}

// All parses spec and returns every row of its matrix: for tests and
// serial checks of problems that fit one process.
func All(spec string) (*dsmat.Rows, error) {
	s, err := Parse(spec)
	if err != nil {
		return nil, err
	}
	return s.Generate(0, s.Rows())
}

// Generate returns the rows [lo, hi) of the global matrix, with columns
// sorted ascending in each row. It touches only what those rows need, so
// each rank can generate its own stripe of a matrix too large for one node.
func (s Spec) Generate(lo, hi int64) (*dsmat.Rows, error) {
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("problem: generate %v: %w", s, err)
	}
	if lo < 0 || lo > hi || hi > s.Rows() {
		return nil, fmt.Errorf("problem: generate %v: rows [%d,%d) not within [0,%d)", s, lo, hi, s.Rows())
	}
	g := grid{n: int64(s.N)}
	switch s.Kind {
	case "poisson7":
		return g.assemble7(lo, hi, constFaces{1, 1, 1}), nil
	case "poisson27":
		return g.assemble27(lo, hi), nil
	case "aniso":
		return g.assemble7(lo, hi, constFaces{1, 1, anisoZ}), nil
	case "convdiff":
		return g.convdiff(lo, hi, s.Peclet), nil
	case "elasticity":
		return s.nodeGrid().assemble(lo, hi, newMaterials(s)), nil
	default: // diffusion
		return g.assemble7(lo, hi, newPermeability(g, uint64(s.Seed), lo, hi)), nil
	}
}

// Geometry returns the coordinates of the nodes of the rows [lo, hi) (x, y
// and z of each row's node, three values a row) and the unknowns per node,
// for the coarse space of a two-level preconditioner (package twolevel):
// elasticity's nodes at their grid points with three displacements each,
// the grid points of the other problems with one unknown each. ok is false
// for rows outside the matrix.
func (s Spec) Geometry(lo, hi int64) (coords []float64, blockSize int, ok bool) {
	if lo < 0 || lo > hi || hi > s.Rows() {
		return nil, 0, false
	}
	point, blockSize := grid{n: int64(s.N)}.at, 1
	if s.Kind == "elasticity" {
		g := s.nodeGrid()
		point, blockSize = func(i int64) cell { return g.at(i / 3) }, 3
	}
	coords = make([]float64, 3*(hi-lo))
	parallel.For(int(hi-lo), func(_, a, b int) {
		for i := a; i < b; i++ {
			c := point(lo + int64(i))
			coords[3*i], coords[3*i+1], coords[3*i+2] = float64(c[0]), float64(c[1]), float64(c[2])
		}
	})
	return coords, blockSize, true
}
