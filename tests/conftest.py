"""Test-suite settings shared by every module.

Hypothesis: no per-example deadline. A property that takes 150 ms on an idle machine can take 400 ms
on a loaded 2-core CI runner, and Hypothesis' default 200 ms deadline then fails a correct test
(issue 11). Each property still bounds its own work with ``max_examples``; speed is measured in
benchmarks/, never asserted in tests (GUIDE.md). The ``ci`` profile (CI=true) also prints the
statistics that show which property is slow.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("econ", deadline=None, max_examples=100,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", parent=settings.get_profile("econ"), print_blob=True)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "econ")
