#!/usr/bin/env bash
# Installs what fsai-dist needs and is missing, from Debian packages: Open MPI
# (library, headers, mpirun) and pkg-config to build and run; with --tests
# also NVRTC (non-free), with which the tests compile the CUDA kernels
# without a GPU; with --peers PETSc and hypre for the benchmarks.
# Nothing is installed when nothing is missing, so a user without root or
# sudo whose Go, gcc and Open MPI come from elsewhere (modules) runs it as
# is. When something is missing and cannot be installed, it says what in one
# line: a missing optional package (NVRTC, whose tests then skip) is only
# noted; a missing required one ends it with status 1.
# Usage: scripts/deps.sh [--tests] [--peers]
set -euo pipefail

tests=false peers=false
for arg in "$@"; do
  case $arg in
    --tests) tests=true ;;
    --peers) peers=true ;;
    *) echo "usage: scripts/deps.sh [--tests] [--peers]" >&2; exit 2 ;;
  esac
done

need=() optional=()
pkg-config --exists ompi 2>/dev/null || need+=(libopenmpi-dev)
command -v mpirun >/dev/null || need+=(openmpi-bin)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v gcc >/dev/null || need+=(gcc)
if $tests; then
  # ldconfig's whole output first: grep -q leaving early would give it a
  # SIGPIPE, which pipefail reports as a failure (a present NVRTC "missing")
  libs=$(ldconfig -p 2>/dev/null || true)
  grep -q 'libnvrtc\.so' <<<"$libs" || optional+=(libnvrtc11.2)
fi
if $peers; then
  dpkg -s libpetsc-real-dev >/dev/null 2>&1 || need+=(libpetsc-real-dev)
  dpkg -s libhypre-dev >/dev/null 2>&1 || need+=(libhypre-dev)
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    SUDO=none
  fi
fi
if [ $((${#need[@]} + ${#optional[@]})) -gt 0 ] && { [ "$SUDO" = none ] || ! command -v apt-get >/dev/null; }; then
  if [ ${#need[@]} -gt 0 ]; then
    echo "deps.sh: missing ${need[*]}${optional[*]:+ (and optional ${optional[*]})}, and no root, sudo or apt-get to install them: install them or put them on PATH (module load openmpi)" >&2
    exit 1
  fi
  echo "deps.sh: optional ${optional[*]} missing (tests that compile CUDA kernels skip), and no root, sudo or apt-get to install it" >&2
  optional=()
fi
[ "$SUDO" = none ] && SUDO=""

install=("${need[@]}" "${optional[@]}")
if [ ${#install[@]} -gt 0 ]; then
  # NVRTC lives in Debian's non-free component
  if [ ${#optional[@]} -gt 0 ] && ! grep -rqs 'non-free' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    $SUDO tee /etc/apt/sources.list.d/fsai-dist-nonfree.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: contrib non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  echo "installing: ${install[*]}"
  # wait up to 5 minutes for another apt-get or dpkg (unattended upgrades,
  # a second checkout's tests) to let go of the package manager's lock
  lock=(-o DPkg::Lock::Timeout=300)
  $SUDO apt-get "${lock[@]}" update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get "${lock[@]}" install -y -qq "${install[@]}" >/dev/null
fi

if ! command -v go >/dev/null; then
  if [ -x /usr/local/go/bin/go ]; then
    echo "go is at /usr/local/go/bin: add it to PATH" >&2
  else
    echo "Go 1.25 or newer is needed: https://go.dev/dl/" >&2
  fi
  exit 1
fi
