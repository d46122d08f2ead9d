#!/usr/bin/env bash
# Create .venv (if needed) and install econ with its test extras and numba (the optional fused engine kernel,
# econ/engine/fused.py). Idempotent; used by the other scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.econ-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[test,fast]'
  touch "$stamp"
fi
