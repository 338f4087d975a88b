# Two commands: `make book` (the whole book on the default CPU profile) and `make test`.
# Each creates the virtual environment .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PROFILE ?= default
PYTEST_ARGS ?=

.PHONY: book test lab clean distclean env

$(BIN)/medeval: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(BIN)/medeval

env: $(BIN)/medeval

book: env
	$(BIN)/medeval book --profile $(PROFILE)

test: env
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lab: env
	$(BIN)/jupyter lab --notebook-dir=. --ServerApp.open_browser=False

clean:
	rm -rf _build _runs book/_build .pytest_cache .ruff_cache
	find . -name __pycache__ -type d -prune -not -path "./$(VENV)/*" -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
