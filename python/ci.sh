#!/usr/bin/env bash
# Builds the plexus Python package into a fresh virtualenv (what a user's
# `pip install ./python` does) and runs its tests, the doc examples and
# mypy. Called by .ci/run; run it from anywhere.
#   PLEXUS_PY_VENV  the virtualenv to (re)use (default: target/py-venv)
#   NX_SUITE=1      also run NetworkX's own test suite through the backend
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${PLEXUS_PY_VENV:-$PWD/target/py-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
# The native crate is a workspace of its own: its format and lints here.
cargo fmt --manifest-path python/Cargo.toml -- --check
CARGO_TARGET_DIR="$PWD/target" cargo clippy -q --manifest-path python/Cargo.toml --release -- -D warnings
"$py" -m pip install -q --upgrade pip
"$py" -m pip install -q maturin numpy pandas pyarrow networkx scipy pytest mypy igraph tqdm
# The package's own build (maturin through pip), sharing the workspace's
# target directory so the engine's crates are not compiled twice.
CARGO_TARGET_DIR="$PWD/target" "$py" -m pip install -q --force-reinstall --no-deps ./python
# The installed package is what is tested: from a directory of its own, so
# that `import plexus` cannot find the source tree (which has no native
# module after a plain `pip install`).
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r python/tests "$work/"
# The client tests start the server binary (built by the workspace's tests).
cargo build --release -q -p plexus-cli
export PLEXUS_BIN="$PWD/target/release/plexus"
(cd "$work" && "$py" -m pytest -q -p no:cacheprovider -p tests.plexus_test_names tests)
(cd "$work" && "$py" -m pytest -q -p no:cacheprovider -p tests.plexus_test_names \
  --doctest-modules --pyargs plexus)
(cd python && "$py" -m mypy plexus/__init__.py plexus/backend.py plexus/client.py plexus/_plexus.pyi)
if [ "${NX_SUITE:-0}" = 1 ]; then
  PYTHON="$py" python/tests/run_networkx_suite.sh
fi
