// Package problem generates the built-in test matrices of fsai-dist and
// parses the specs that name them ("poisson7:64", "diffusion:100:7",
// "convdiff:64:100", "elasticity:32").
//
// Every problem but elasticity lives on the unit cube discretised by an
// N x N x N grid of unknowns, numbered in natural ordering
//
//	idx = x + N*(y + N*z),   0 <= x, y, z < N,
//
// so the matrix has N^3 rows. Dirichlet boundary values are eliminated, which
// leaves every matrix weakly diagonally dominant with strictly dominant rows
// at the boundary, and irreducible: nonsingular. All but convdiff are
// symmetric positive definite; convdiff is a nonsymmetric M-matrix
// (Spec.Symmetric).
// Columns are sorted ascending in every row. Spec.Generate(lo, hi) builds the
// rows [lo, hi) only, touching nothing outside what those rows need, so each
// MPI rank generates its own stripe of a matrix no single node could hold.
//
// # Problems
//
// poisson7:N — 7-point Laplacian, not scaled by h^2:
//
//	a_ii = 6,  a_ij = -1 for each of the (up to 6) face neighbours j inside the grid.
//
// A point on the boundary keeps 6 on its diagonal (the eliminated neighbour is
// a zero boundary value one grid step away). nnz = 7N^3 - 6N^2. A PETSc peer
// driver generates exactly this matrix for comparisons, so it must not change.
//
// poisson27:N — 27-point stencil:
//
//	a_ii = 26,  a_ij = -1 for each of the (up to 26) neighbours j with
//	|dx|, |dy|, |dz| <= 1 inside the grid.
//
// nnz = (3N-2)^3.
//
// aniso:N — grid-aligned anisotropic diffusion -(u_xx + u_yy + eps u_zz),
// eps = 1e-3, 7-point, not scaled by h^2:
//
//	a_ij = -1 for x and y neighbours, -1e-3 for z neighbours,  a_ii = 2(1 + 1 + 1e-3) = 4.002,
//
// the diagonal being the sum of the off-diagonal magnitudes plus the
// coefficients of eliminated boundary neighbours, as in poisson7. The strong
// x-y coupling and weak z coupling make the planes z = const nearly
// decoupled: hard for preconditioners that ignore the anisotropy.
// nnz = 7N^3 - 6N^2.
//
// diffusion:N[:seed] — 3D heterogeneous diffusion -div(k grad u) with a
// layered, log-normal coefficient like reservoir permeability, discretised
// by cell-centred two-point-flux finite volumes (cells of width h = 1/N,
// the matrix scaled by 1/h). The seed is any int64, default 1. Per cell:
//
//	log10 k = m(z) + 0.5 g,   g standard normal, independent per cell;
//	m(z): layers z = 8q..8q+7 take, in a seeded random order, the 8 levels
//	      -3, -3+6/7, ..., +3 (each group of 8 layers is one shuffle),
//
// so layers differ by up to 6 decades and cells scatter half a decade about
// their layer. The matrix is
//
//	a_ij = -T_ij,  T_ij = 2 k_i k_j / (k_i + k_j)   (harmonic mean) for face neighbours i, j,
//	a_ii = sum_j T_ij + 2 k_i per boundary face of cell i
//
// (the boundary term is the half-cell transmissibility to a zero Dirichlet
// value on the face). With k = 1 the interior rows would equal poisson7.
// The contrast max(k)/min(k) is at least 1e6 for every N >= 8: the first 8
// layers hold both levels -3 and +3, so the contrast is 10^(6 + M - m) with M
// the largest noise term 0.5 g of the top-level layer and m the smallest of
// the bottom-level one, and M < m only if all N^2 draws of one layer fall
// below all N^2 of another (probability 1/C(2N^2, N^2) < 1e-37 at N = 8).
// Observed contrasts: about 2e8 at N = 8, 1e9 at N = 16, 1e10 at N = 64,
// 3e10 at N = 128. For N < 8 the missing levels may lower it.
//
// Each g is computed from (seed, idx) alone by a counter-based generator
// (splitmix64 of a seed-derived key and the cell index, then Box-Muller), so
// every rank evaluates k on exactly the cells its rows couple to and all
// ranks agree on every value: the stripes of any partition concatenate to
// the same global matrix, bit for bit, and a_ij == a_ji exactly.
//
// convdiff:N[:peclet] — 3D convection-diffusion -Δu + w·∇u on the unit
// cube, with the constant wind w = peclet·(1,1,1)/√3 (the diagonal of the
// cube) and peclet >= 0 any number up to 1e9, default 10: the Peclet number
// |w|·L/ν of the flow, L = 1 the cube's side and ν = 1 the diffusivity. The
// unknowns are the interior vertices of a grid of step h = 1/(N+1);
// diffusion is the 7-point stencil and convection first-order upwind
// (w_a (u_i - u_{i-e_a})/h along each axis a, the upwind neighbour being the
// one below, as every component of w is positive), the whole scaled by h^2
// like poisson7. With c = peclet·h/√3 (the wind's component times h):
//
//	a_ii = 6 + 3c,  a_ij = -(1 + c) for the neighbour j below i along an axis,
//	a_ij = -1 for the neighbour above,  both only for neighbours inside the grid.
//
// The cell Peclet number |w|·h/2 = peclet·h/2 says how strongly convection
// dominates on the grid (upwinding keeps the matrix an M-matrix however large
// it is). Interior rows sum to 0; a boundary row to the couplings of its
// eliminated neighbours. a_ij - a_ji = -c for j below i: the asymmetry grows
// with peclet/N. peclet 0 gives poisson7 exactly. nnz = 7N^3 - 6N^2.
//
// elasticity:N[:contrast[:nu]] — 3D linear elasticity, -div sigma(u) = f
// with sigma = lambda tr(eps) I + 2 mu eps, on the unit cube meshed by
// N x N x N trilinear hexahedral (Q1) elements of side h = 1/N. The
// unknowns are the three displacements of the (N+1)^3 nodes but the
// (N+1)^2 on the bottom face z = 0, which is clamped (their displacements
// are zero and eliminated); the other faces are free. A free node at
// x, y, z (integers in [0, N], z >= 1) is node = x + (N+1)(y + (N+1)(z-1))
// and its displacement along axis c is row 3 node + c, so
//
//	rows = 3 N (N+1)^2,   nnz = 9 (3N+1)^2 (3N-2),
//
// 81 entries in a row whose node has all 26 neighbours (3 for each of the
// 27 nodes within one element's reach), about 81 per row for large N.
// Young's modulus is constant in each layer of elements ez <= z <= ez+1:
// layer ez has level l, 0 to 7, a fixed shuffle of the 8 levels in every
// group of 8 layers (the draw of diffusion's layer means, from a fixed
// seed), and modulus contrast^(l/7), so the moduli are log-uniform from 1
// to contrast (default 1e3, from 1 to 1e12) and every N >= 8 spans the
// whole contrast. The Poisson ratio nu (default 0.3, -1 < nu < 0.5) is the
// same everywhere; towards 0.5 the material is nearly incompressible and
// the matrix harder. The element stiffness, by 2x2x2 Gauss quadrature, is
// computed once per material and is symmetric bit for bit; each row adds
// the element rows of its node in a fixed order (the elements around the
// node in ascending z, y, x), so a_ij == a_ji exactly and every stripe is
// the same bit for bit whatever the partition. Before clamping the six
// rigid-body motions span the operator's null space; with the bottom
// clamped the matrix is symmetric positive definite.
package problem
