# The README's two commands: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

# Qt's offscreen platform still links the X/GL client libraries (GUI-STACK.md).
APT_QT := libglib2.0-0 libegl1 libgl1 libx11-6 libdbus-1-3 libfontconfig1 libfreetype6 libxkbcommon0

.PHONY: run test lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) pyproject.toml
	@if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
	  echo "installing Qt runtime libraries (apt-get)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(APT_QT) >/dev/null; \
	fi
	$(PY) -m pip install -q -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install -q -e ".[test]"
	touch $(TEST_STAMP)

run: $(STAMP)
	$(PY) -m impactgui

test: $(TEST_STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

lint: $(TEST_STAMP)
	$(PY) -m ruff check solver impactgui tests bench

bench: $(STAMP)
	$(PY) bench/impact_chain.py
	$(PY) bench/engine.py
	QT_QPA_PLATFORM=offscreen $(PY) bench/gui.py

clean:
	rm -rf $(VENV) build *.egg-info
