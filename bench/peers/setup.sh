#!/usr/bin/env bash
# Creates (idempotently) the Python venv for bench/peers/peers.py and installs the pinned
# peer libraries from requirements.txt beside this script.
#   venv: $PEERS_VENV, default bench/out/peers-venv (relative to the repository root)
#   interpreter: $PYTHON, default python3
# graph_mate is installed separately: if it cannot be installed here, a warning is printed and
# peers.py records status "error" (not installable) for it instead of failing.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${PEERS_VENV:-$root/bench/out/peers-venv}
python=${PYTHON:-python3}
req=$here/requirements.txt
stamp=$venv/.peers-requirements.sha256

if [ ! -x "$venv/bin/python" ]; then
    echo "peers setup: creating venv $venv" >&2
    "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check --quiet)
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    "${pip[@]}" install -r <(grep -iv '^graph[_-]mate==' "$req")
    if ! "${pip[@]}" install "$(grep -i '^graph[_-]mate==' "$req")"; then
        echo "peers setup: WARNING: graph_mate could not be installed for $("$venv/bin/python" -V);" \
             "peers.py will record it as not installable" >&2
    fi
    echo "$want" > "$stamp"
fi
"$venv/bin/python" - <<'PY'
from importlib import metadata
import sys
print(f"peers venv: {sys.prefix} (Python {sys.version.split()[0]})")
for dist in ("networkit", "igraph", "python-graphblas", "suitesparse-graphblas", "graphblas-algorithms",
             "rustworkx", "graph_mate", "numpy", "scipy"):
    try:
        print(f"  {dist} {metadata.version(dist)}")
    except metadata.PackageNotFoundError:
        print(f"  {dist} NOT INSTALLED")
PY
