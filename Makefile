# specedit: two commands on a fresh machine (Python 3.11, pip, make):
#   make demo   set up .venv, pull the default model, rewrite a sample file (diff + speed)
#   make test   set up .venv with the test tools and run the whole test suite
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
LLAMA := llama-cpp-python==0.3.36

.PHONY: setup setup-test demo test lint format bench clean

$(BIN)/python:
	@command -v $(PY) >/dev/null || { echo "need $(PY)"; exit 1; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -U pip setuptools wheel

# llama-cpp-python builds from source (about 5 minutes on 2 cores; pip caches the wheel)
$(VENV)/.core: pyproject.toml scripts/llama-cmake-args.sh scripts/install-llama.sh | $(BIN)/python
	bash scripts/install-llama.sh $(BIN) $(LLAMA)
	$(BIN)/pip install -q -e '.[tui,server,bench]'
	touch $@

# torch goes in first and pinned: a bare `torch` requirement would pull a CUDA build
$(VENV)/.test: $(VENV)/.core
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[tui,server,bench,torch,test]'
	if [ -f plugins/vscode/package.json ]; then cd plugins/vscode && npm ci --no-audit --no-fund && npm run compile; fi
	touch $@

setup: $(VENV)/.core
setup-test: $(VENV)/.test

demo: setup
	$(BIN)/specedit models pull qwen2.5-coder-1.5b
	$(BIN)/specedit rewrite app/samples/inventory.py \
	  -i "Rename the class Inventory to Stock everywhere and add a docstring to total_value."

test: setup-test
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q
	if [ -f plugins/vscode/package.json ]; then cd plugins/vscode && npm test; fi

lint:
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

format:
	$(BIN)/ruff check --fix . && $(BIN)/ruff format .

bench: setup
	$(BIN)/specedit bench

clean:
	rm -rf $(VENV) build *.egg-info
