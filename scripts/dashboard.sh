#!/usr/bin/env bash
# Set up (first run only) and open the econ dashboard at http://localhost:${PORT:-8501}
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Streamlit asks for an e-mail on its very first run; answer it once (empty) so the command never blocks.
if [ ! -f "$HOME/.streamlit/credentials.toml" ]; then
  mkdir -p "$HOME/.streamlit" && printf '[general]\nemail = ""\n' > "$HOME/.streamlit/credentials.toml"
fi
headless=()
# No display (a server, a container): serve without trying to open a browser.
if [ -z "${DISPLAY:-}" ] && [ "$(uname)" != "Darwin" ]; then headless=(--server.headless true); fi
echo "econ dashboard: http://localhost:${PORT:-8501}"
exec .venv/bin/streamlit run streamlit_app.py --server.port "${PORT:-8501}" --browser.gatherUsageStats false "${headless[@]}" "$@"
