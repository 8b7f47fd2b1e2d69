# Lomote: `make run` serves the studio with its workers; `make test` runs lint (incl. import contracts) and the whole suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint fmt bench soak clean

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# `make run PORT=8001 HOST=0.0.0.0` serves elsewhere (add the host to ALLOWED_HOSTS when it is not local).
HOST ?= 127.0.0.1
PORT ?= 8000
run: $(STAMP)
	$(PY) manage.py migrate --noinput
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py bootstrap_demo --url http://$(HOST):$(PORT)/
	$(PY) manage.py runstudio --host $(HOST) --port $(PORT)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

fmt: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# DATABASE_URL if set, else local PostgreSQL if reachable, else SQLite (PostgreSQL-only tests skipped).
# pytest prints the 25 slowest setups, calls and teardowns last, to show where the suite's time goes.
test: lint
	$(PY) manage.py makemigrations --check --dry-run
	@export DATABASE_URL="$$($(PY) tests/support/choose_db.py)"; \
	$(PY) -m pytest --durations=25 $(PYTEST_ARGS); status=$$?; \
	cat var/test-summary.txt 2>/dev/null; exit $$status

$(VENV)/.bench-installed: $(STAMP) requirements-bench.txt
	$(PY) -m pip install --quiet -r requirements-bench.txt
	touch $@

# The runtime's cost per step beside a raw commit and LangGraph, then workers held while generation jobs wait and
# callback throughput (PostgreSQL only; see README "Bench"). Each creates and drops its own database: the one
# DATABASE_URL names if the name contains "bench", else lomote_bench; the generation bench adds "_gen" to it.
# Every part runs, even after one misses a target or fails; a summary of every target closes, and the exit
# status is non-zero if any target was missed or any part failed (bench/runner.py).
bench: $(VENV)/.bench-installed
	BENCH_ARGS="$(BENCH_ARGS)" GEN_BENCH_ARGS="$(GEN_BENCH_ARGS)" CTX_BENCH_ARGS="$(CTX_BENCH_ARGS)" \
	MEM_BENCH_ARGS="$(MEM_BENCH_ARGS)" SEARCH_BENCH_ARGS="$(SEARCH_BENCH_ARGS)" \
	ROUTING_BENCH_ARGS="$(ROUTING_BENCH_ARGS)" UNDERSTANDING_BENCH_ARGS="$(UNDERSTANDING_BENCH_ARGS)" \
	LOAD_BENCH_ARGS="$(LOAD_BENCH_ARGS)" $(PY) -m bench $(BENCH_PARTS)

# The chaos soak (README "Scale-out"): the Procfile.cluster processes, 100 tasks, random SIGKILLs, one PostgreSQL
# and one Redis restart (where this machine allows it), then the invariants. Its own database, lomote_soak, on the
# DATABASE_URL server; Redis at REDIS_URL (default local). `make soak SOAK_SECONDS=60` for a short one.
SOAK_SECONDS ?= 300
soak: $(STAMP)
	$(PY) -m tests.soak --seconds $(SOAK_SECONDS) $(SOAK_ARGS)

clean:
	rm -rf $(VENV) var/staticfiles var/test.sqlite3
