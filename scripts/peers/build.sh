#!/usr/bin/env bash
# build.sh: compile the CPU peer drivers petsc_cg, hypre_fsai and
# hypre_parasails with mpicc.
#
#   scripts/peers/build.sh [OUTDIR]     (default: bin/peers, relative to the current directory)
#
# PETSc is found with pkg-config (module PETSc or petsc) or, failing that, under
# $PETSC_DIR or /usr/lib/petsc; hypre under $HYPRE_DIR or /usr (include/hypre,
# libHYPRE). Debian: apt-get install libpetsc-real-dev libhypre-dev libopenmpi-dev.
# CC overrides the compiler (default mpicc), CFLAGS the optimisation flags.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-bin/peers}
cc=${CC:-mpicc}
cflags=${CFLAGS:--O2 -g}
warn="-std=gnu11 -Wall -Wextra -Wno-unused-parameter"

die() { echo "build.sh: $*" >&2; exit 1; }

command -v "$cc" >/dev/null || die "$cc not found (install libopenmpi-dev, or set CC)"

# PETSc: pkg-config first, then a PETSc directory with include/petsc.h and lib/libpetsc*.
petsc_flags() {
  local mod dir
  for mod in PETSc petsc; do
    if pkg-config --exists "$mod" 2>/dev/null; then
      echo "$(pkg-config --cflags "$mod") $(pkg-config --libs "$mod") -Wl,-rpath,$(pkg-config --variable=libdir "$mod")"
      return
    fi
  done
  for dir in ${PETSC_DIR:-} /usr/lib/petsc; do
    if [[ -n $dir && -f $dir/include/petsc.h ]] && compgen -G "$dir/lib/libpetsc*.so" >/dev/null; then
      local lib
      lib=$(basename "$(compgen -G "$dir/lib/libpetsc*.so" | head -n1)" .so)
      echo "-I$dir/include -L$dir/lib -Wl,-rpath,$dir/lib -l${lib#lib}"
      return
    fi
  done
  return 1
}

# hypre: headers in <prefix>/include/hypre (Debian) or <prefix>/include, and libHYPRE.
hypre_flags() {
  local dir inc libdir
  for dir in ${HYPRE_DIR:-} /usr; do
    [[ -n $dir ]] || continue
    for inc in "$dir/include/hypre" "$dir/include"; do
      [[ -f $inc/HYPRE_parcsr_ls.h && -f $inc/_hypre_parcsr_ls.h ]] || continue
      for libdir in "$dir/lib" "$dir/lib/x86_64-linux-gnu" "$dir/lib64"; do
        if compgen -G "$libdir/libHYPRE.so*" >/dev/null || [[ -f $libdir/libHYPRE.a ]]; then
          echo "-I$inc -L$libdir -lHYPRE -lm"
          return
        fi
      done
    done
  done
  return 1
}

petsc=$(petsc_flags) || die "PETSc not found: no pkg-config module PETSc/petsc and no include/petsc.h under \$PETSC_DIR or /usr/lib/petsc (Debian: apt-get install libpetsc-real-dev)"
hypre=$(hypre_flags) || die "hypre not found: no HYPRE_parcsr_ls.h and libHYPRE under \$HYPRE_DIR or /usr (Debian: apt-get install libhypre-dev)"

mkdir -p "$out"
# shellcheck disable=SC2086 # the flag strings are meant to split
$cc $cflags $warn -o "$out/petsc_cg" "$here/petsc_cg.c" "$here/peers_common.c" $petsc -lm ||
  die "compiling petsc_cg failed"
for prog in hypre_fsai hypre_parasails; do
  # shellcheck disable=SC2086
  $cc $cflags $warn -o "$out/$prog" "$here/$prog.c" "$here/hypre_common.c" "$here/peers_common.c" $hypre ||
    die "compiling $prog failed"
done
echo "built $out/petsc_cg $out/hypre_fsai $out/hypre_parasails"
