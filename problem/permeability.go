package problem

import (
	"math"

	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// The coefficient field of diffusion:
//
//	log10 k(x,y,z) = layerMean(z) + cellSigma * g(idx)
//
// with g(idx) a standard normal computed from (seed, idx) alone by a
// counter-based generator, so a rank evaluates k on the cells its rows touch
// without generating the rest of the field.
const (
	layerGroup = 8   // consecutive layers whose means are one shuffle of the levels
	layerSpan  = 3.0 // layer means are layerGroup levels evenly spaced over [-layerSpan, layerSpan] (log10)
	cellSigma  = 0.5 // standard deviation of log10 k about its layer mean

	golden      = 0x9E3779B97F4A7C15 // splitmix64 increment
	cellStream  = 0x6A09E667F3BCC908 // seed salts for independent draws per cell
	layerStream = 0xBB67AE8584CAA73B // and per layer group
)

// mix64 is the splitmix64 output function, a bijection that scrambles all bits.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// draw is output number i of the splitmix64 generator seeded with key,
// computed directly from i.
func draw(key, i uint64) uint64 { return mix64(key + (i+1)*golden) }

// uniform maps a draw to (0, 1], so that its logarithm is finite.
func uniform(h uint64) float64 { return float64(h>>11+1) * 0x1p-53 }

// Uniform is number i, in (0, 1], of the counter-based uniform stream key:
// the same on any number of ranks, since it depends on (key, i) alone. The
// program's generated right-hand sides use it.
func Uniform(key, i uint64) float64 { return uniform(draw(key, i)) }

// normal is standard normal number i of stream key: Box-Muller on draws 2i
// and 2i+1.
func normal(key, i uint64) float64 {
	u1, u2 := uniform(draw(key, 2*i)), uniform(draw(key, 2*i+1))
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// field is the seeded coefficient field on a grid.
type field struct {
	g                 grid
	cellKey, layerKey uint64
}

func newField(g grid, seed uint64) field {
	return field{g: g, cellKey: mix64(seed ^ cellStream), layerKey: mix64(seed ^ layerStream)}
}

// layerMean is the mean log10 k of layer z: its level (layerLevel) spread
// evenly over [-layerSpan, layerSpan], so every complete group of layers
// holds both extremes.
func (f field) layerMean(z int64) float64 {
	return -layerSpan + 2*layerSpan*float64(layerLevel(f.layerKey, z))/(layerGroup-1)
}

// layerLevel is the level, 0 to layerGroup-1, of layer z in the layered
// fields of stream key: the layers come in groups of layerGroup, each
// group a shuffle (Fisher-Yates) of the levels, so every complete group
// holds each level once.
func layerLevel(key uint64, z int64) int {
	var perm [layerGroup]int
	for i := range perm {
		perm[i] = i
	}
	first := uint64(z / layerGroup * layerGroup)
	for j := layerGroup - 1; j > 0; j-- {
		r := draw(key, first+uint64(j)) % uint64(j+1)
		perm[j], perm[r] = perm[r], perm[j]
	}
	return perm[z%layerGroup]
}

// logK fills out with log10 k of the cells a, a+1, ...
func (f field) logK(a int64, out []float64) {
	nn := f.g.n * f.g.n
	z := a / nn
	mean, next := f.layerMean(z), (z+1)*nn
	for i := range out {
		c := a + int64(i)
		if c == next {
			z++
			mean, next = f.layerMean(z), next+nn
		}
		out[i] = mean + cellSigma*normal(f.cellKey, uint64(c))
	}
}

// window holds k on the cells [first, first+len(k)).
type window struct {
	first int64
	k     []float64
}

func (w window) at(c int64) float64 { return w.k[c-w.first] }

// window evaluates k on the cells [a, b) clipped to the grid.
func (f field) window(a, b int64) window {
	a, b = max(a, 0), min(b, f.g.n*f.g.n*f.g.n)
	w := window{first: a, k: make([]float64, max(b-a, 0))}
	parallel.For(len(w.k), func(_, lo, hi int) {
		k := w.k[lo:hi]
		f.logK(a+int64(lo), k)
		for i, l := range k {
			k[i] = math.Exp(math.Ln10 * l)
		}
	})
	return w
}

// permeability is the faces of diffusion for the rows [lo, hi): k on the
// cells those rows touch, held in three windows (the rows widened by one
// line for x and y neighbours, and the planes below and above for z
// neighbours) or, for stripes of a plane or more, in one window covering
// all three.
type permeability struct{ below, mid, above window }

func newPermeability(g grid, seed uint64, lo, hi int64) *permeability {
	f := newField(g, seed)
	nn := g.n * g.n
	if hi-lo >= nn {
		w := f.window(lo-nn, hi+nn)
		return &permeability{w, w, w}
	}
	return &permeability{
		below: f.window(lo-nn, hi-nn),
		mid:   f.window(lo-g.n, hi+g.n),
		above: f.window(lo+nn, hi+nn),
	}
}

// face is the harmonic mean 2 ki kj / (ki + kj), written so that swapping
// i and j gives the same bits.
func (p *permeability) face(i, j int64, axis int) float64 {
	w := p.mid
	if axis == 2 {
		if j < i {
			w = p.below
		} else {
			w = p.above
		}
	}
	ki, kj := p.mid.at(i), w.at(j)
	return 2 * (ki * kj) / (ki + kj)
}

// boundary is the half-cell transmissibility 2 ki to the boundary value.
func (p *permeability) boundary(i int64, _ int, _ bool) float64 { return 2 * p.mid.at(i) }
