package problem

import (
	"math"

	"github.com/fsai-dist/fsai-dist/dsmat"
	"github.com/fsai-dist/fsai-dist/internal/parallel"
)

// elasticStream salts the draws of elasticity's layer order, fixed so that
// elasticity:N names one matrix.
const elasticStream = 0x3C6EF372FE94F82B

// nodeGrid is the nodes of elasticity's box of N x N x N elements:
// (N+1)^3 nodes at the coordinates x, y, z in [0, N], of which the free
// ones, z >= z0, are numbered
//
//	node = x + (N+1)*(y + (N+1)*(z - z0)),
//
// and their displacements node*3 + component. z0 is 1 with the bottom face
// clamped (its displacements eliminated), 0 for the whole box.
type nodeGrid struct {
	n  int64 // elements per direction
	z0 int64 // the lowest free layer of nodes
}

// nodeGrid returns the node grid of an elasticity spec.
func (s Spec) nodeGrid() nodeGrid {
	g := nodeGrid{n: int64(s.N), z0: 1}
	if s.unclamped {
		g.z0 = 0
	}
	return g
}

// nodes is the number of free nodes.
func (g nodeGrid) nodes() int64 {
	m := g.n + 1
	return m * m * (m - g.z0)
}

// at returns the coordinates of free node i.
func (g nodeGrid) at(i int64) cell {
	m := g.n + 1
	return cell{i % m, i / m % m, i/(m*m) + g.z0}
}

// index is the number of the free node at c.
func (g nodeGrid) index(c cell) int64 {
	m := g.n + 1
	return c[0] + m*(c[1]+m*(c[2]-g.z0))
}

// span is how many of c-1, c, c+1 lie in [low, N].
func (g nodeGrid) span(c, low int64) int64 {
	s := int64(1)
	if c > low {
		s++
	}
	if c < g.n {
		s++
	}
	return s
}

// rowLen is the number of entries of row i: three per free node within one
// step of i's node along every axis.
func (g nodeGrid) rowLen(i int64) int64 {
	c := g.at(i / 3)
	return 3 * g.span(c[0], 0) * g.span(c[1], 0) * g.span(c[2], g.z0)
}

// hex is the stiffness matrix of one trilinear hexahedral element, rows and
// columns 3a + component for its local nodes a = ax + 2 ay + 4 az (ax, ay,
// az in {0, 1} its corner along each axis).
type hex [24][24]float64

// materials holds the element stiffness of every layer of elements.
type materials struct {
	layer []*hex // layer[ez]: the stiffness of the elements ez <= z <= ez+1
}

// newMaterials computes the element stiffness of each distinct material of
// elasticity spec s once: layer ez has level l = layerLevel (a fixed
// shuffle of 0 to 7 in every group of 8 layers) and Young's modulus
// Contrast^(l/7), so the moduli are log-uniform from 1 to Contrast and
// every complete group of 8 layers spans the whole contrast.
func newMaterials(s Spec) materials {
	var byLevel [layerGroup]*hex
	key := mix64(elasticStream)
	h := 1 / float64(s.N)
	m := materials{layer: make([]*hex, s.N)}
	for ez := range m.layer {
		l := layerLevel(key, int64(ez))
		if byLevel[l] == nil {
			e := math.Pow(s.Contrast, float64(l)/(layerGroup-1))
			byLevel[l] = hexStiffness(e, s.Nu, h)
		}
		m.layer[ez] = byLevel[l]
	}
	return m
}

// hexStiffness is the stiffness of a cube of side h of isotropic material
// with Young's modulus e and Poisson ratio nu, by 2x2x2 Gauss quadrature
// (exact for the cube):
//
//	K_ab,ij = ∫ lambda d_i N_a d_j N_b + mu (d_j N_a d_i N_b + delta_ij grad N_a . grad N_b),
//
// N_a the trilinear shape functions, lambda and mu the Lamé constants. Its
// lower triangle is the mirror of its upper one, so it is symmetric bit for
// bit, and so is the assembled matrix.
func hexStiffness(e, nu, h float64) *hex {
	lambda := e * nu / ((1 + nu) * (1 - 2*nu))
	mu := e / (2 * (1 + nu))
	weight := h * h * h / 8 // det J, the Gauss weights being 1
	gauss := [2]float64{-1 / math.Sqrt(3), 1 / math.Sqrt(3)}
	var k hex
	for _, pz := range gauss {
		for _, py := range gauss {
			for _, px := range gauss {
				grad := shapeGradients(cell3{px, py, pz}, h)
				addPoint(&k, &grad, lambda*weight, mu*weight)
			}
		}
	}
	for p := range k {
		for q := range p {
			k[p][q] = k[q][p]
		}
	}
	return &k
}

// cell3 is a point in the reference cube [-1, 1]^3.
type cell3 [3]float64

// shapeGradients returns the gradients in x, y, z of the eight trilinear
// shape functions at the reference point p of a cube of side h.
func shapeGradients(p cell3, h float64) [8][3]float64 {
	var grad [8][3]float64
	for a := range grad {
		var s cell3 // the corner of node a in the reference cube
		for d := range s {
			s[d] = float64(2*(a>>d&1) - 1)
		}
		for d := range 3 {
			v := s[d] * 2 / h / 8 // d xi / dx = 2/h
			for o := range 3 {
				if o != d {
					v *= 1 + s[o]*p[o]
				}
			}
			grad[a][d] = v
		}
	}
	return grad
}

// addPoint adds one quadrature point's term to the upper triangle of k,
// with lambda and mu already times the point's weight.
func addPoint(k *hex, grad *[8][3]float64, lambda, mu float64) {
	for a := range 8 {
		for b := a; b < 8; b++ {
			ga, gb := grad[a], grad[b]
			dot := ga[0]*gb[0] + ga[1]*gb[1] + ga[2]*gb[2]
			for i := range 3 {
				for j := range 3 {
					if b == a && j < i {
						continue
					}
					v := lambda*ga[i]*gb[j] + mu*ga[j]*gb[i]
					if i == j {
						v += mu * dot
					}
					k[3*a+i][3*b+j] += v
				}
			}
		}
	}
}

// assemble builds the rows [lo, hi) of the elasticity matrix on all cores.
// Each row sums, in a fixed order (the elements around its node in
// ascending z, y, x), the rows of the element matrices of its node and
// component, so a row's value depends on nothing but the row: the stripes
// of any partition concatenate to the same matrix bit for bit.
func (g nodeGrid) assemble(lo, hi int64, mat materials) *dsmat.Rows {
	count := int(hi - lo)
	ptr := make([]int64, count+1)
	parallel.Scan(ptr, func(i int) int64 { return g.rowLen(lo + int64(i)) })
	r := &dsmat.Rows{N: 3 * g.nodes(), First: lo, RowPtr: ptr, Col: make([]int64, ptr[count]), Val: make([]float64, ptr[count])}
	parallel.For(count, func(_, a, b int) {
		var acc neighbours
		for i := a; i < b; i++ {
			k, end := ptr[i], ptr[i+1]
			g.row(lo+int64(i), mat, &acc, r.Col[k:end], r.Val[k:end])
		}
	})
	return r
}

// neighbours accumulates a row's couplings with the three displacements of
// the 27 nodes around its node, (dz+1)*9 + (dy+1)*3 + dx+1 for the node at
// offset dx, dy, dz.
type neighbours [27][3]float64

// row writes row i into col and val, which have its length: the elements
// around its node added into acc, then the free nodes' entries in
// ascending column order.
func (g nodeGrid) row(i int64, mat materials, acc *neighbours, col []int64, val []float64) {
	p := g.at(i / 3)
	comp := i % 3
	*acc = neighbours{}
	for ez := max(p[2]-1, 0); ez <= min(p[2], g.n-1); ez++ {
		ke := mat.layer[ez]
		for ey := max(p[1]-1, 0); ey <= min(p[1], g.n-1); ey++ {
			for ex := max(p[0]-1, 0); ex <= min(p[0], g.n-1); ex++ {
				a := (p[0] - ex) + 2*(p[1]-ey) + 4*(p[2]-ez)
				k := &ke[3*a+comp]
				for b := range int64(8) {
					dx, dy, dz := ex+b&1-p[0], ey+b>>1&1-p[1], ez+b>>2-p[2]
					slot := &acc[(dz+1)*9+(dy+1)*3+dx+1]
					for d := range 3 {
						slot[d] += k[3*b+int64(d)]
					}
				}
			}
		}
	}
	n := 0
	for z := max(p[2]-1, g.z0); z <= min(p[2]+1, g.n); z++ {
		for y := max(p[1]-1, 0); y <= min(p[1]+1, g.n); y++ {
			for x := max(p[0]-1, 0); x <= min(p[0]+1, g.n); x++ {
				q := 3 * g.index(cell{x, y, z})
				slot := acc[(z-p[2]+1)*9+(y-p[1]+1)*3+x-p[0]+1]
				for d := range 3 {
					col[n], val[n] = q+int64(d), slot[d]
					n++
				}
			}
		}
	}
}
