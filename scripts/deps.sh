#!/usr/bin/env bash
# Installs what fsai-dist needs to build and test, from Debian packages, when
# it is missing: Open MPI (library, headers, mpirun), pkg-config, and NVRTC
# (non-free) so that CI compiles the CUDA kernels without a GPU.
# Usage: scripts/deps.sh [--peers]   (--peers adds PETSc and hypre for benchmarks)
set -euo pipefail

need=()
pkg-config --exists ompi 2>/dev/null || need+=(libopenmpi-dev)
command -v mpirun >/dev/null || need+=(openmpi-bin)
command -v pkg-config >/dev/null || need+=(pkg-config)
ldconfig -p | grep -q 'libnvrtc\.so' || need+=(libnvrtc11.2)
if [ "${1:-}" = --peers ]; then
  dpkg -s libpetsc-real-dev >/dev/null 2>&1 || need+=(libpetsc-real-dev)
  dpkg -s libhypre-dev >/dev/null 2>&1 || need+=(libhypre-dev)
fi

if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  # NVRTC lives in Debian's non-free component
  if ! grep -rqs 'non-free' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    $SUDO tee /etc/apt/sources.list.d/fsai-dist-nonfree.sources >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: contrib non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  echo "installing: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! command -v go >/dev/null; then
  if [ -x /usr/local/go/bin/go ]; then
    echo "go is at /usr/local/go/bin: add it to PATH" >&2
  else
    echo "Go 1.25 or newer is needed: https://go.dev/dl/" >&2
  fi
  exit 1
fi
