#!/usr/bin/env bash
# mypy over the public API (srota/__init__.py) and the engine core (srota.engine, srota.grammar).
# The rooms sit at the repository root and install as srota.<room> (pyproject package-dir),
# a mapping mypy cannot read; so it checks a tree of links, .typecheck/srota/<room> -> <room>.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
mkdir -p .typecheck/srota
ln -sfn ../../srota/__init__.py .typecheck/srota/__init__.py
for room in grammar engine mappers connectors service; do
  ln -sfn "../../$room" ".typecheck/srota/$room"
done
exec "$BIN/mypy" .typecheck/srota/__init__.py .typecheck/srota/engine .typecheck/srota/grammar "$@"
