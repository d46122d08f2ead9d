"""Number formats an analyst expects, for metrics and tables: the dashboard's name for :mod:`econ.formatting`.

One formatting module serves the dashboard and the CLI (``econ/commands/_common.py``); it lives in the
installed package so the ``econ`` console script has it too. Pages call ``fmt.usd(...)``,
``fmt.flops(...)``, ``fmt.cell(column, value)`` etc. from here.
"""

from __future__ import annotations

from econ.formatting import *  # noqa: F401,F403
from econ.formatting import __all__  # noqa: F401
