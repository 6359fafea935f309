#!/usr/bin/env bash
# The benchmark environment for the peers (tests/bench/peers.py): a venv of its own, so that
# their dependencies never meet the project's.  Idempotent; `make bench` calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-python3}"
VENV="${BENCH_VENV:-.venv-bench}"
STAMP="$VENV/.installed"
PEERS=("bytewax==0.21.1" "quixstreams>=3,<4" "pathway" "orjson" "py-spy" "pyinstrument")
if [[ -f "$STAMP" ]]; then
    exit 0
fi
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
# Each peer on its own: one that does not install here is left out of the table, not fatal.
for peer in "${PEERS[@]}"; do
    "$VENV/bin/pip" install -q "$peer" || echo "bench-env: could not install $peer; it is left out" >&2
done
touch "$STAMP"
