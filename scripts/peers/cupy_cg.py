#!/usr/bin/env python3
"""CuPy peer for the GPU benchmarks: cuSPARSE SpMV bandwidth and CuPy's CG or
GMRES with Jacobi on the same matrix fsai-dist solves, on one GPU.

  python3 scripts/peers/cupy_cg.py -problem poisson7:200 -json out.json
  python3 scripts/peers/cupy_cg.py -matrix A.petsc     (fsai-dist -write-matrix A.petsc)
  python3 scripts/peers/cupy_cg.py -matrix A.petsc -method gmres [-restart 30]

b = A*1 (with -random-rhs A*u, u uniform in (0,1], as fsai-dist's second
right-hand side of -nrhs 2), x0 = 0, stop at ||r||/||b|| <= tol (CuPy's
rtol, atol 0): fsai-dist's test.
CuPy's gmres preconditions on the right (x = M y) with classical Gram-Schmidt,
no reorthogonalization, and tests the true residual only at each restart, so
its iteration count is a multiple of the restart length: restarts x restart.
SpMV bandwidth counts the bytes fsai-dist's -bench-spmv counts: 12 per nonzero, the
row pointers, x read and y written once. Prints one JSON object.
"""
import argparse
import json
import sys
import time

import cupy as cp
import numpy as np
import cupyx.scipy.sparse as sp
import cupyx.scipy.sparse.linalg as spla


def poisson7(n):
    """The 7-point Laplacian on an n^3 grid, index x + n*(y + n*z): 6 on the
    diagonal, -1 per neighbour inside the grid (fsai-dist's poisson7:N)."""
    t = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
    i = sp.identity(n, format="csr")
    a = sp.kron(i, sp.kron(i, t)) + sp.kron(i, sp.kron(t, i)) + sp.kron(t, sp.kron(i, i))
    return a.tocsr()


def read_petsc(path):
    """A PETSc binary matrix (big-endian, 32-bit indices) as a CuPy CSR matrix."""
    with open(path, "rb") as f:
        classid, m, n, nz = np.fromfile(f, ">i4", 4)
        if classid != 1211216 or m != n:
            sys.exit(f"cupy_cg: {path}: not a square PETSc binary matrix")
        lens = np.fromfile(f, ">i4", m).astype(np.int32)
        cols = np.fromfile(f, ">i4", nz).astype(np.int32)
        vals = np.fromfile(f, ">f8", nz).astype(np.float64)
    ptr = np.zeros(m + 1, np.int32)
    np.cumsum(lens, out=ptr[1:])
    return sp.csr_matrix((cp.asarray(vals), cp.asarray(cols), cp.asarray(ptr)), shape=(m, n))


def time_spmv(a, reps):
    x = cp.ones(a.shape[0])
    y = a @ x
    cp.cuda.Device().synchronize()
    start = cp.cuda.Event()
    stop = cp.cuda.Event()
    start.record()
    for _ in range(reps):
        y = a @ x
    stop.record()
    stop.synchronize()
    sec = cp.cuda.get_elapsed_time(start, stop) / 1e3 / reps
    n, nnz = a.shape[0], a.nnz
    return sec, (12 * nnz + 4 * (n + 1) + 16 * n) / sec / 1e9


def solve(a, b, tol, maxit, method="cg", restart=30):
    """Solves a x = b from x0 = 0 by CG or GMRES(restart) with Jacobi and
    returns x, CuPy's info and the iterations (GMRES: Arnoldi steps, counted
    by restarts, which is when CuPy's callback runs)."""
    d = a.diagonal()
    inv = 1.0 / d
    m = spla.LinearOperator(a.shape, matvec=lambda r: inv * r, dtype=cp.float64)
    calls = [0]

    def count(_):
        calls[0] += 1

    kw = dict(x0=cp.zeros_like(b), maxiter=maxit, M=m, callback=count, atol=0.0)
    run, step = spla.cg, 1
    if method == "gmres":
        kw.update(restart=restart, callback_type="pr_norm")
        run, step = spla.gmres, restart
    try:
        x, info = run(a, b, rtol=tol, **kw)
    except TypeError:  # CuPy before 13 names it tol
        x, info = run(a, b, tol=tol, **kw)
    return x, info, calls[0] * step


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-problem", help="poisson7:N")
    p.add_argument("-matrix", help="PETSc binary matrix")
    p.add_argument("-tol", type=float, default=1e-8)
    p.add_argument("-maxit", type=int, default=20000)
    p.add_argument("-method", choices=("cg", "gmres"), default="cg")
    p.add_argument("-restart", type=int, default=30, help="GMRES restart length")
    p.add_argument("-random-rhs", action="store_true", help="b = A*u, u uniform in (0,1] (A*1 is a rigid translation of elasticity)")
    p.add_argument("-write-rhs", help="also write b here, Matrix Market array, for fsai-dist's -rhs")
    p.add_argument("-spmv-reps", type=int, default=100)
    p.add_argument("-json")
    o = p.parse_args()
    if o.matrix:
        a, name = read_petsc(o.matrix), o.matrix
    elif o.problem and o.problem.startswith("poisson7:"):
        a, name = poisson7(int(o.problem.split(":")[1])), o.problem
    else:
        sys.exit("cupy_cg: give -problem poisson7:N or -matrix FILE.petsc")
    spmv_s, spmv_gbs = time_spmv(a, o.spmv_reps)
    u = cp.ones(a.shape[0])
    if o.random_rhs:
        u = 1.0 - cp.random.default_rng(1).random(a.shape[0])
    b = a @ u
    if o.write_rhs:
        with open(o.write_rhs, "w") as f:
            f.write("%%%%MatrixMarket matrix array real general\n%d 1\n" % a.shape[0])
            np.savetxt(f, cp.asnumpy(b), fmt="%.17g")
    solve(a, b, o.tol, 2 * o.restart, o.method, o.restart)  # warm-up: kernels compiled and cached
    cp.cuda.Device().synchronize()
    t = time.perf_counter()
    x, info, its = solve(a, b, o.tol, o.maxit, o.method, o.restart)
    cp.cuda.Device().synchronize()
    solve_s = time.perf_counter() - t
    relres = float(cp.linalg.norm(b - a @ x) / cp.linalg.norm(b))
    out = {
        "peer": "cupy", "cupy": cp.__version__, "method": o.method, "matrix": name,
        "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "n": a.shape[0], "nnz": int(a.nnz), "ranks": 1, "tol": o.tol, "rhs": "A*u, u random" if o.random_rhs else "A*1",
        "converged": info == 0, "iterations": its, "relres": relres,
        "solve_s": solve_s, "time_per_iter_s": solve_s / max(its, 1),
        "spmv_s": spmv_s, "spmv_gbs": spmv_gbs,
    }
    if o.method == "gmres":
        out["restart"] = o.restart
    text = json.dumps(out, indent=2)
    print(text)
    if o.json:
        with open(o.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
