# hetero-tutorial: `make lab` to learn, `make test` to check. `make help` lists every target.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
QUICK_ENV := HETERO_TUTORIAL_QUICK=1

.DEFAULT_GOAL := help
.PHONY: help setup lab test lint unit notebooks run run-quick doctor format lock clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: $(STAMP) ## create .venv and install the pinned dependencies (only when missing or stale)

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "hetero-tutorial needs Python 3.10 or newer; run: make PYTHON=python3.11 ...")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[dev,atari,ray]"
	$(BIN)/python -m ipykernel install --user --name hetero-tutorial --display-name "Python (hetero-tutorial)"
	touch $(STAMP)

# Containers often run as root, which Jupyter refuses unless told.
lab: setup ## open JupyterLab on notebooks/
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/

test: setup lint unit notebooks ## lint, unit tests, and every notebook under nbmake in quick mode

lint: setup ## ruff lint and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: setup ## unit tests (quick mode)
	$(QUICK_ENV) $(BIN)/python -m pytest -q tests

notebooks: setup ## execute every notebook with nbmake (quick mode)
	$(QUICK_ENV) $(BIN)/python -m pytest -q --nbmake --nbmake-timeout=600 notebooks

run: setup ## execute every notebook headless in full mode (build/notebooks/), write the run record
	$(BIN)/python -m hetero_tutorial run

run-quick: setup ## the same, in quick mode
	$(BIN)/python -m hetero_tutorial run --quick

doctor: setup ## pre-flight check for this machine
	$(BIN)/python -m hetero_tutorial doctor

format: setup ## apply ruff's formatting and safe fixes
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

lock: ## regenerate constraints.txt from a clean virtual environment (torch pinned to 2.13.0)
	rm -rf build/lock-venv
	$(PYTHON) -m venv build/lock-venv
	build/lock-venv/bin/python -m pip install --quiet "torch==2.13.0" -e ".[dev,atari,ray]"
	{ echo "# Exact versions for the set-up (make setup). Regenerate with: make lock"; \
	  build/lock-venv/bin/python -m pip freeze --exclude-editable | sed 's/+cpu$$//'; } > constraints.txt
	rm -rf build/lock-venv

clean: ## remove the virtual environment and build output
	rm -rf $(VENV) build
