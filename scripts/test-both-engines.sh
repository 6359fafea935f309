#!/usr/bin/env bash
# The suite beyond the engine's and the differential tests on the compiled module (with
# coverage, printed as it goes), and at the same time the whole suite on the pure-Python engine
# (SROTA_PURE_PYTHON=1, printed when it ends).  Called by `make test` (see the Makefile).
#
# Why at the same time: the two runs wait on their servers, brokers and subprocesses most of
# the time (about a quarter of a core each, measured), so together they take the time of the
# longer one instead of the sum (about 20 minutes instead of 37 here).  Each pytest starts its
# own servers on free loopback ports and keeps its temporary files apart (--basetemp).
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.venv/bin}

work=$(mktemp -d "${TMPDIR:-/tmp}/srota-test-XXXXXX")
pure_log="$work/pure.log"
SROTA_PURE_PYTHON=1 "$BIN/python" -m pytest -q -p no:cacheprovider --basetemp="$work/pure" \
    >"$pure_log" 2>&1 &
pure=$!
# (a Ctrl-C or a kill of make stops the background run too; its SIGTERM ends it as Ctrl-C would,
# with its servers torn down: tests/sigterm_plugin.py)
trap 'kill "$pure" 2>/dev/null; wait "$pure" 2>/dev/null; rm -rf "$work"; exit 130' INT TERM

echo "== compiled module: the rest of the suite (the pure-Python run goes on beside it) =="
"$BIN/python" -m pytest -q -p no:cacheprovider --cov --cov-append --cov-report=term \
    --ignore=tests/engine --ignore=tests/differential
compiled_rc=$?

echo "== pure-Python engine (SROTA_PURE_PYTHON=1): the whole suite =="
wait "$pure"
pure_rc=$?
cat "$pure_log"
rm -rf "$work"
trap - INT TERM

if [ "$compiled_rc" -ne 0 ] || [ "$pure_rc" -ne 0 ]; then
    echo "FAILED: compiled-module run exit $compiled_rc, pure-Python run exit $pure_rc" >&2
    exit 1
fi
