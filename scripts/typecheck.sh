#!/usr/bin/env bash
# mypy over the public API (srota/__init__.py) and every room (grammar, engine, mappers,
# connectors, service).  The rooms sit at the repository root and install as srota.<room>
# (pyproject package-dir), a mapping mypy cannot read (nor can it follow the editable
# install's import hook); so this script makes a throw-away tree of six links,
# .typecheck/srota/<room> -> <room> (git-ignored, remade on each run), and checks that.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}
mkdir -p .typecheck/srota
ln -sfn ../../srota/__init__.py .typecheck/srota/__init__.py
for room in grammar engine mappers connectors service; do
  ln -sfn "../../$room" ".typecheck/srota/$room"
done
exec "$BIN/mypy" .typecheck/srota/__init__.py .typecheck/srota/grammar .typecheck/srota/engine \
  .typecheck/srota/mappers .typecheck/srota/connectors .typecheck/srota/service "$@"
