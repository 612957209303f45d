# The README's two commands: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

# Debian packages Qt needs (installed by apt-get when run as root; see docs/INSTALL.md).
# Even the offscreen platform links the X/GL client libraries:
APT_QT := libglib2.0-0 libegl1 libgl1 libx11-6 libdbus-1-3 libfontconfig1 libfreetype6 libxkbcommon0
# A window on a real X display: every library of Qt's xcb platform plugin (read with ldd
# from libqxcb.so, libQt6XcbQpa.so.6 and the xcb GL integrations; impactgui/display_check.py):
APT_XCB := libx11-xcb1 libxcb1 libxcb-cursor0 libxcb-glx0 libxcb-icccm4 libxcb-image0 \
  libxcb-keysyms1 libxcb-randr0 libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 \
  libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1 libxkbcommon-x11-0
# The tests also start the app on a virtual X display (xvfb-run needs xauth):
APT_TEST := xvfb xauth

.PHONY: run test lint bench clean

# apt_install: install Debian packages when root with apt-get; otherwise say what is needed.
define apt_install
if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null; then \
  echo "installing Debian packages: $(1)"; \
  DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(1) >/dev/null; \
else \
  echo "not root: if the window or the tests fail for a missing library, install: $(1)"; \
fi
endef

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) pyproject.toml Makefile
	@$(call apt_install,$(APT_QT) $(APT_XCB))
	$(PY) -m pip install -q -e .
	$(PY) -m solver compile
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	@$(call apt_install,$(APT_TEST))
	$(PY) -m pip install -q -e ".[test,cluster]"
	touch $(TEST_STAMP)

run: $(STAMP)
	$(PY) -m impactgui

test: $(TEST_STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

lint: $(TEST_STAMP)
	$(PY) -m ruff check solver impactgui tests bench

bench: $(STAMP)
	$(PY) -m pip install -q -e ".[bench]"
	$(PY) bench/peer.py
	$(PY) bench/impact_chain.py
	$(PY) bench/engine.py
	QT_QPA_PLATFORM=offscreen $(PY) bench/gui.py

clean:
	rm -rf $(VENV) build *.egg-info
