# hetero-tutorial: `make lab` to learn, `make test` to check. `make help` lists every target.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
QUICK_ENV := HETERO_TUTORIAL_QUICK=1

.DEFAULT_GOAL := help
.PHONY: help setup lab test lint unit notebooks run run-quick doctor format lock gpu-wheels gpu-wheels-check clean

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

test: setup lint unit notebooks ## lint, unit tests, every notebook under nbmake (quick mode), its outputs checked

lint: setup ## ruff lint and format check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: setup ## unit tests (quick mode; the notebook-quality checks run in `make notebooks`)
	$(QUICK_ENV) $(BIN)/python -m pytest -q tests --ignore=tests/test_notebook_quality.py

# nbmake executes copies in build/nbmake/ (--overwrite fills the copies, never the stored
# notebooks); the quality test then reads those outputs instead of executing them again.
notebooks: setup ## every notebook under nbmake (quick mode), then check what they printed
	rm -rf build/nbmake && mkdir -p build/nbmake && cp notebooks/[0-9][0-9]_*.ipynb build/nbmake/
	$(QUICK_ENV) $(BIN)/python -m pytest -q -p no:cacheprovider --nbmake --nbmake-timeout=600 \
		--overwrite build/nbmake
	HETERO_TUTORIAL_EXECUTED=build/nbmake $(BIN)/python -m pytest -q tests/test_notebook_quality.py

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

gpu-wheels: setup ## download the wheels the GPU machine's image lacks (CPython 3.12, manylinux x86-64) to build/gpu-wheels/
	rm -rf build/gpu-wheels
	$(BIN)/python benchmarks/gpu_wheels.py build/gpu-wheels --python-version 3.12

gpu-wheels-check: setup ## prove build/gpu-wheels: resolved for cp312 with the image declared present, then the dry run in a fresh venv like the image
	$(BIN)/python benchmarks/gpu_wheels.py build/gpu-wheels-check --check --bundle build/gpu-wheels

clean: ## remove the virtual environment and build output
	rm -rf $(VENV) build
