package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Return codes as C sees them (include/fsai.h).
const (
	ok          = 0
	notOK       = 1 // testdata/misuse.c's own verdict
	errInput    = -1
	errPeer     = -2
	errHandle   = -4
	peerMessage = "comm: another rank failed"
)

// Which ranks find a case's error; the others return FSAI_ERR_PEER.
type finders int

const (
	every finders = iota // every rank makes the mistake
	rank0                // only rank 0 does
	last                 // the last rank's rows show it
	owner                // the rank holding global row 5
	some                 // the ranks whose local system holds global row 5
)

// misuseC is a case of testdata/misuse.c: its code and a part of its
// message on the ranks that found the error.
type misuseC struct {
	name string
	code int
	who  finders
	want string
}

// misuseCases lists testdata/misuse.c's cases in its order. Rows and
// columns in fsai_matrix_create's messages count from the caller's base;
// the set-up names the entry A(I,I) counting from 1.
var misuseCases = []misuseC{
	{"before_init", errHandle, every, "fsai: the library is not initialized: fsai_init has not been called"},
	{"init", ok, every, ""},
	{"init_twice", errInput, every, "fsai: fsai_init called twice"},
	{"rowptr_huge", errInput, every, "= 1000000000000: a row holds 0 to 12 entries"},
	{"rowptr_negative", errInput, every, "row_ptr[0] = 0 and row_ptr[1] = -5: a row holds 0 to 12 entries"},
	{"rowptr_decreasing", errInput, every, "and row_ptr[2] = 1: a row holds 0 to 12 entries"},
	{"rowptr_base", errInput, every, "fsai: matrix_create: row_ptr[0] = 1, want the index base 0"},
	{"rowptr_beyond_memory", errInput, every, "1000000000000 entries of 16 bytes are more than this node's memory"},
	{"column_n", errInput, every, "column 12 is not within [0,11]"},
	{"column_negative", errInput, every, "column -1 is not within [0,11]"},
	{"column_0_base1", errInput, every, "column 0 is not within [1,12]"},
	{"column_rank0", errInput, rank0, "column 12 is not within [0,11]"},
	{"value_nan", errInput, every, "solver: value 0 of the stripe is NaN"},
	{"nlocal_0", errInput, every, "fsai: matrix_create: 0 local rows: every rank needs at least one"},
	{"nlocal_above_n", errInput, every, "fsai: matrix_create: 13 local rows, more than the matrix's 12"},
	{"n_0", errInput, every, "fsai: matrix_create: matrix dimension 0"},
	{"rows_short_of_n", errInput, last, "solver: the rows of the last rank end at 12, but the matrix has dimension 13"},
	{"base_2", errInput, every, "fsai: matrix_create: index base 2 is not 0 or 1"},
	{"row_ptr_null", errInput, every, "fsai: row_ptr is NULL"},
	{"cols_null", errInput, every, "fsai: cols is NULL"},
	{"vals_null", errInput, every, "fsai: vals is NULL"},
	{"out_null", errInput, every, "fsai: matrix_create: the output handle is NULL"},
	{"matrix_create", ok, every, ""},
	{"matrix_create_base1", ok, every, ""},
	{"matrix_free_base1", ok, every, ""},
	{"geometry_matrix_freed", errHandle, every, "is not a matrix handle: not made by this library, or freed"},
	{"geometry_block_2", errInput, every, "twolevel: block size 2: the coarse space knows 1 (a scalar field) and 3 (displacements)"},
	{"geometry_coords_null", errInput, every, "fsai: coords is NULL"},
	{"geometry_null_rank0", errInput, rank0, "fsai: coords is NULL"},
	{"geometry_none_coarse_on", errInput, every, "solver: coarse space: the matrix has no geometry"},
	{"solver_matrix_0", errHandle, every, "fsai: 0 is not a matrix handle: not made by this library, or freed"},
	{"solver_matrix_freed", errHandle, every, "is not a matrix handle: not made by this library, or freed"},
	{"solver_prec_ilu", errInput, every, `solver: preconditioner "ilu" is not one of [afsai fsai jacobi none spai]`},
	{"solver_tol_2", errInput, every, "solver: tolerance 2 is not in (0,1)"},
	{"solver_backend_gpu", errInput, every, `solver: backend "gpu" is not one of [auto cpu cuda]`},
	{"solver_out_null", errInput, every, "fsai: solver_create: the output handle is NULL"},
	{"matrix_not_spd", ok, every, ""},
	{"not_spd_afsai", errInput, some, "afsai: diagonal entry A(6,6) = -1 is not positive and finite: the matrix is not SPD"},
	{"not_spd_fsai", errInput, some, "afsai: diagonal entry A(6,6) = -1 is not positive and finite: the matrix is not SPD"},
	{"not_spd_jacobi", errInput, owner, "jacobi: diagonal entry -1 at row 6 is not positive: the matrix is not SPD"},
	{"matrix_free_not_spd", ok, every, ""},
	{"solver_create", ok, every, ""},
	{"solve", ok, every, ""},
	{"solver_create_gmres", ok, every, ""},
	{"solve_gmres", ok, every, ""},
	{"solve_many_gmres", errInput, every, "solver: solve many: bad input: 2 right-hand sides, but gmres solves one at a time"},
	{"gmres_gives_cg_iterate", ok, every, ""},
	{"solver_free_gmres", ok, every, ""},
	{"solver_create_spai", ok, every, ""},
	{"solve_spai", ok, every, ""},
	{"solver_free_spai", ok, every, ""},
	{"solver_cg_spai", errInput, every, "solver: preconditioner spai is not symmetric, which cg needs: use bicgstab or gmres"},
	{"solver_method_minres", errInput, every, `solver: method "minres" is not one of [bicgstab cg gmres]`},
	{"solve_handle_0", errHandle, every, "fsai: 0 is not a solver handle"},
	{"solve_matrix_handle", errHandle, every, "is not a solver handle"},
	{"solve_b_null", errInput, every, "fsai: b is NULL"},
	{"solve_many_k_0", errInput, every, "fsai: solve many: 0 right-hand sides; need at least 1"},
	{"update_not_spd", errInput, owner, "solver: diagonal entry A(6,6) = -1 is not positive and finite: the matrix is not SPD"},
	{"update_nan", errInput, every, "of the stripe is NaN"},
	{"update_vals_null", errInput, every, "fsai: vals is NULL"},
	{"solve_after_failed_updates", ok, every, ""},
	{"matrix_free", ok, every, ""},
	{"matrix_free_twice", errHandle, every, "is not a matrix handle: not made by this library, or freed"},
	{"solver_matrix_after_free", errHandle, every, "is not a matrix handle"},
	{"solve_after_matrix_free", ok, every, ""},
	{"solver_free", ok, every, ""},
	{"solver_free_twice", errHandle, every, "is not a solver handle: not made by this library, or freed"},
	{"solve_after_free", errHandle, every, "is not a solver handle"},
	{"update_after_free", errHandle, every, "is not a solver handle"},
	{"set_values_after_free", errHandle, every, "is not a solver handle"},
	{"rebuild_after_free", errHandle, every, "is not a solver handle"},
	{"finalize", ok, every, ""},
	{"after_finalize", errHandle, every, "fsai: the library is not initialized: fsai_init has not been called, or fsai_finalize has"},
	{"finalize_twice", errHandle, every, "fsai: the library is not initialized"},
}

// outcome is one rank's answer to one case.
type outcome struct {
	code int
	msg  string
}

// TestMisuseC runs testdata/misuse.c at 1 and 3 ranks and checks every
// rank's return code and message of every case against misuseCases: bad
// CSR arrays (row_ptr[nlocal] = 1e12, negative or decreasing row
// pointers, columns out of range, sizes that do not match), NULL and freed
// handles, geometries refused (block size 2, NULL coordinates) that leave
// the matrix without one, a matrix the set-up refuses, failed updates that
// leave the solver solving the old system, and calls before fsai_init and
// after fsai_finalize. None may abort the program, hang or return
// FSAI_ERR_FAILURE.
func TestMisuseC(t *testing.T) {
	dir := t.TempDir()
	exe := compileC(t, dir, "testdata/misuse.c")
	for _, np := range []int{1, 3} {
		t.Run(fmt.Sprintf("np%d", np), func(t *testing.T) {
			run(t, dir, "mpirun", "-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none", "./"+exe)
			var out strings.Builder
			for r := range np {
				b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("misuse.%d.out", r)))
				if err != nil {
					t.Fatal(err)
				}
				out.Write(b)
			}
			got := parseMisuse(t, out.String(), np)
			found := make(map[string]int) // ranks that described each case's error
			for _, tc := range misuseCases {
				for r := range np {
					o, seen := got[r][tc.name]
					finder := tc.who.holds(r, np)
					switch {
					case !seen:
						t.Errorf("%s: rank %d printed no outcome", tc.name, r)
					case tc.who == some && o.code == errPeer && o.msg == peerMessage:
					case finder || tc.who == some:
						if o.code != tc.code || !strings.Contains(o.msg, tc.want) {
							t.Errorf("%s: rank %d returned %d %q, want %d and %q", tc.name, r, o.code, o.msg, tc.code, tc.want)
						}
						found[tc.name]++
					case o.code != errPeer || o.msg != peerMessage:
						t.Errorf("%s: rank %d returned %d %q, want FSAI_ERR_PEER", tc.name, r, o.code, o.msg)
					}
				}
				if found[tc.name] == 0 {
					t.Errorf("%s: no rank described the error", tc.name)
				}
			}
		})
	}
}

// holds reports whether rank r of np is among the finders.
func (w finders) holds(r, np int) bool {
	switch w {
	case rank0:
		return r == 0
	case last:
		return r == np-1
	case owner:
		return r == 5/(12/np)
	}
	return w == every
}

// parseMisuse reads misuse.c's lines "RANK CASE CODE MESSAGE" into each
// rank's outcomes by case.
func parseMisuse(t *testing.T, out string, np int) []map[string]outcome {
	t.Helper()
	got := make([]map[string]outcome, np)
	for r := range got {
		got[r] = make(map[string]outcome)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) < 3 {
			continue // Open MPI's notes
		}
		r, err1 := strconv.Atoi(f[0])
		code, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || r < 0 || r >= np {
			continue
		}
		var msg string
		if len(f) == 4 {
			msg = f[3]
		}
		got[r][f[1]] = outcome{code, msg}
	}
	return got
}
