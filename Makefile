# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench lint check clean deps difftest soak

# (engine/_speedups.c: the install compiles it where a C compiler is; see docs/performance.md)
$(STAMP): pyproject.toml tests/extension_example/pyproject.toml engine/_speedups.c
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,spark,rdbms,js,avro]' -e tests/extension_example
	touch $(STAMP)

deps: $(STAMP)
	@bash scripts/system-deps.sh
	@bash scripts/siddhi-deps.sh

run: $(STAMP)
	$(BIN)/srota run --config config/demo.yaml

# The suite on both engines (issue 44): first on the compiled module (engine/_speedups.c), the
# engine's and the differential tests with the columnar path taking every chunk it can
# (engine/columnar.py; by default it takes chunks of 32 events or more), with coverage; then
# the rest on the compiled module, with coverage, and at the same time the whole suite again on
# the pure-Python engine (SROTA_PURE_PYTHON=1), which a machine without a C compiler gets
# (scripts/test-both-engines.sh: the two runs mostly wait on servers, so they share the cores).
test: deps
	SROTA_COLUMNAR_MIN_CHUNK=1 $(BIN)/python -m pytest -q -p no:cacheprovider --cov --cov-report= \
		tests/engine tests/differential
	BIN=$(BIN) bash scripts/test-both-engines.sh

# Random apps on real Siddhi 5.1.33 and on Srota, compared (tests/differential): make difftest N=2000 SEED=7
N ?= 400
SEED ?= 1
difftest: deps
	$(BIN)/python -m tests.differential --n $(N) --seed $(SEED)

# The chaos soak (tests/soak, docs/delivery.md): make soak SOAK_S=600 SOAK_SEED=7
SOAK_S ?= 600
SOAK_SEED ?=
soak: deps
	$(BIN)/python -m tests.soak --seconds $(SOAK_S) $(if $(SOAK_SEED),--seed $(SOAK_SEED))

bench: $(STAMP)
	@PY=$(PY) bash scripts/bench-env.sh
	$(BIN)/python -m tests.bench

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python scripts/typecheck.py

check: lint  # the same checks, by the name the issues use

clean:
	rm -rf $(VENV) .pytest_cache
