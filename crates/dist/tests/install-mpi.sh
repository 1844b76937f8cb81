#!/usr/bin/env bash
# Installs what `--features mpi` and crates/dist/tests/mpi.sh need on a
# Debian host: OpenMPI (launcher and headers), libclang (rsmpi's bindgen)
# and pkgconf. Idempotent; needs root (or sudo).
set -euo pipefail
pkgs=(openmpi-bin libopenmpi-dev libclang-dev pkgconf)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-mpi: ${pkgs[*]} already installed"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
