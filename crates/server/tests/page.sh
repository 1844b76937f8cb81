#!/usr/bin/env bash
# The web page of `plexus serve` in headless Chromium (Debian's `chromium`,
# driven by Playwright for Python): it loads without console errors, lists
# the graphs, plots a graph's degree distribution, and a job submitted
# through the form shows its progress reaching 100 % and its result's
# plot. Installs what it needs when missing (apt-get chromium; a venv with
# playwright under target/page-test/), builds the release `plexus`, serves
# a generated graph from a temporary data directory, and saves a
# screenshot as target/page-test/page.png (an artifact, not committed).
#
#   crates/server/tests/page.sh        (.ci/run runs it with PLEXUS_CI_BROWSER=1)
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=target/page-test
mkdir -p "$out"

chromium_bin=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium_bin" ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    echo "page test: installing chromium (apt-get)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium > /dev/null
    chromium_bin=$(command -v chromium)
fi
venv="$out/venv"
if ! "$venv/bin/python" -c "import playwright" 2> /dev/null; then
    echo "page test: installing playwright into $venv (pip)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q playwright
fi

cargo build --release -q -p plexus-cli
plexus=target/release/plexus
data=$(mktemp -d)
server=""
cleanup() {
    [ -n "$server" ] && kill -TERM "$server" 2> /dev/null && wait "$server" 2> /dev/null
    rm -rf "$data"
}
trap cleanup EXIT
"$plexus" -q --data-dir "$data" generate kron --scale 14 --weighted --name k14 > /dev/null
"$plexus" --data-dir "$data" --threads 2 serve --bind 127.0.0.1:0 2> "$out/serve.log" &
server=$!
addr=""
for _ in $(seq 1 100); do
    addr=$(sed -n 's|^plexus serve: http://\([^/]*\)/.*|\1|p' "$out/serve.log" | head -1)
    [ -n "$addr" ] && break
    sleep 0.1
done
[ -n "$addr" ] || { echo "error: plexus serve did not start:" >&2; cat "$out/serve.log" >&2; exit 1; }
"$venv/bin/python" crates/server/tests/page_test.py --url "http://$addr/" \
    --chromium "$chromium_bin" --graph k14 --screenshot "$out/page.png"
