# specedit: two commands on a fresh machine (Python 3.11, pip, make):
#   make demo   set up .venv, pull the default model, edit a sample file (a rename by rope,
#               a docstring by the model: each diff, how it was made, the speed)
#   make test   set up .venv with the test tools and run the whole test suite
SHELL := /bin/bash
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
LLAMA := llama-cpp-python==0.3.36

.PHONY: setup setup-test llama llama-server demo test test-long test-clients lint format bench docs-images clean

$(BIN)/python:
	@command -v $(PY) >/dev/null || { echo "need $(PY)"; exit 1; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -U pip setuptools wheel

# llama-cpp-python builds from source for this machine's accelerator (CUDA when nvcc and an
# NVIDIA GPU are there, Metal on Apple silicon, else the CPU; SPECEDIT_GPU=cuda|vulkan|metal|cpu
# overrides): about 5 minutes on 2 cores for the CPU build; pip caches the wheel.
$(VENV)/.core: pyproject.toml | llama
	$(BIN)/pip install -q -e '.[tui,server,bench]'
	touch $@

# every setup checks the installed build against the wanted one (a second of imports) and
# rebuilds only when they differ: an order-only prerequisite of both setups, so it runs on
# each, before their pip installs (which would otherwise pull llama-cpp-python unbuilt for
# this machine), without making them install again
llama: | $(BIN)/python
	@bash scripts/install-llama.sh $(BIN) $(LLAMA)

# the test setup installs the package once, with every extra (not .core's install, then
# this one again); torch goes in first and pinned: a bare `torch` requirement would pull a
# CUDA build
$(VENV)/.test: pyproject.toml | llama
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[tui,server,bench,torch,test]'
	if [ -f plugins/vscode/package.json ]; then cd plugins/vscode && npm ci --no-audit --no-fund && npm run compile; fi
	touch $(VENV)/.core $@

# llama.cpp's own llama-server, the peer of `specedit bench peer` and `bench client`: built
# from the llama.cpp that llama-cpp-python's sdist vendors, for the CPU with the SIMD flags
# above (about 10 minutes on 2 cores), once per machine: it is kept in
# ~/.cache/specedit/llama-server/<version>/ (scripts/build-llama-server.sh); prints its path
llama-server: | $(BIN)/python
	@bash scripts/build-llama-server.sh $(BIN)/python

setup: $(VENV)/.core
setup-test: $(VENV)/.test

demo: setup
	$(BIN)/specedit models pull qwen2.5-coder-1.5b
	bash scripts/demo.sh $(BIN)

test: setup-test
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	# the tests without a model on both cores, then the real-model tests alone: llama.cpp's
	# threads wait for each other by spinning, so anything beside them slows them down
	$(BIN)/python -m pytest -q -m "not model" -n 2 --durations=10
	$(BIN)/python -m pytest -q -m model --durations=25
	if [ -f plugins/vscode/package.json ]; then cd plugins/vscode && npm test; fi

# the nightly run: the default suite's long stress runs at full length (tests/conftest.py)
test-long: setup-test
	SPECEDIT_LONG=1 SPECEDIT_STRESS_REPS=3 $(BIN)/python -m pytest -q -m "long or model"

# clients nobody here wrote against `specedit serve --http` with the 0.5B (tests/test_clients.py):
# the openai SDK from the test venv; aider and litellm from a venv of their own (aider pins
# its own litellm and openai), and Continue's CLI (npm's, where npm is) beside them, made
# once. Not part of `make test`: a few hundred MB of installs. A client whose install fails
# (offline, no npm) is said so here and skipped by its test, with the reason; the next run
# tries the install again.
CLIENTS := .venv-clients
AIDER := aider-chat==0.86.2
CONTINUE_CLI := @continuedev/cli@1.5.47

$(CLIENTS)/.done:
	$(PY) -m venv $(CLIENTS)
	$(CLIENTS)/bin/pip install -q -U pip
	$(CLIENTS)/bin/pip install -q '$(AIDER)'
	touch $@

$(CLIENTS)/node/.done:
	mkdir -p $(CLIENTS)/node
	npm install -q --prefix $(CLIENTS)/node --no-audit --no-fund '$(CONTINUE_CLI)'
	touch $@

test-clients: setup-test
	$(MAKE) $(CLIENTS)/.done || echo "test-clients: aider and litellm not installed: skipped"
	command -v npm >/dev/null && $(MAKE) $(CLIENTS)/node/.done \
		|| echo "test-clients: Continue's CLI not installed: skipped"
	SPECEDIT_CLIENTS=1 SPECEDIT_CLIENTS_VENV=$(CLIENTS) $(BIN)/python -m pytest -q -m clients tests/test_clients.py -s -rsx --durations=10

lint:
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

format:
	$(BIN)/ruff check --fix . && $(BIN)/ruff format .

bench: setup
	$(BIN)/specedit bench

# the README's Neovim and VS Code images, from real runs over the scripted toy model
docs-images: setup-test
	SPECEDIT_DOCS_IMAGES=1 $(BIN)/python -m pytest -q tests/test_docs_images.py

clean:
	rm -rf $(VENV) build *.egg-info
