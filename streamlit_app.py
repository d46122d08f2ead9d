"""Entry point of the econ dashboard: ``streamlit run streamlit_app.py`` (what ``scripts/dashboard.sh`` runs).

It lives at the repository root, away from ``dashboards/pages/``: Streamlit treats a ``pages/`` folder
beside the main script as an old-style multipage app and, on a fresh server, would answer a deep link
such as ``/hardware-comparison`` with a "Page not found" pop-up before ``st.navigation`` takes over.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dashboards.app import main  # noqa: E402

main()
