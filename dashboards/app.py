"""econ dashboard: ``streamlit run streamlit_app.py`` (``bash scripts/dashboard.sh``).

The entry point is the repository's ``streamlit_app.py``, which calls :func:`main`. Not this file:
Streamlit treats a ``pages/`` folder beside the main script as an old-style (v1) multipage app, and
on a fresh server its first run resolves the URL against that folder before ``st.navigation`` takes
over, so a deep link (``/hardware-comparison``) popped up "Page not found" (streamlit#9624).
``streamlit run dashboards/app.py`` still works (the ``__main__`` guard), with that pop-up on a
server's first deep link.

A multipage app with one shared sidebar (the scenario). Pages are discovered in ``dashboards/pages/``:
each module defines ``TITLE``, ``ICON`` and ``ORDER`` and either a ``render()`` function or is a
plain Streamlit script; a new file there appears in the navigation without editing this one. Pages
get the scenario with ``dashboards.components.scenario_sidebar.current()``. A module with
``render()`` and an ``if __name__ == "__main__": render()`` guard runs as a file page (so it also runs
alone, e.g. under AppTest); one with ``render()`` and no guard is called as a function.
"""

from __future__ import annotations

import ast
import importlib
import sys
from dataclasses import dataclass
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import streamlit as st  # noqa: E402

from dashboards.components import scenario_sidebar, state  # noqa: E402

PAGES_DIR = Path(__file__).resolve().parent / "pages"


@dataclass(frozen=True)
class PageSpec:
    """A page file's metadata, read without running it."""

    path: Path
    title: str
    icon: str | None
    order: float
    has_render: bool
    runs_as_script: bool

    @property
    def url_path(self) -> str:
        return self.path.stem.replace("_", "-")


def read_spec(path: Path) -> PageSpec:
    """TITLE, ICON, ORDER and whether ``render`` is defined, from the module's syntax tree (nothing runs)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    consts: dict = {}
    has_render = False
    main_guard = False
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in ("TITLE", "ICON", "ORDER"):
                try:
                    consts[name] = ast.literal_eval(node.value)
                except ValueError:
                    pass
        elif isinstance(node, ast.FunctionDef) and node.name == "render":
            has_render = True
        elif isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test):
            main_guard = True
    title = consts.get("TITLE") or path.stem.replace("_", " ").capitalize()
    order = consts.get("ORDER", 1000)
    return PageSpec(path, str(title), consts.get("ICON"), float(order) if isinstance(order, (int, float)) else 1000.0,
                    has_render, main_guard or not has_render)


def discover(pages_dir: Path = PAGES_DIR) -> list[PageSpec]:
    """Every ``*.py`` in ``pages_dir`` (not starting with ``_``), by ORDER then title."""
    specs = [read_spec(p) for p in pages_dir.glob("*.py") if not p.name.startswith("_")]
    return sorted(specs, key=lambda s: (s.order, s.title))


def to_page(spec: PageSpec, default: bool, *, visibility: str = "visible", url_path: str | None = None) -> st.Page:
    """An ``st.Page``: the file run as a script (a script, or a module whose ``__main__`` guard calls
    ``render()``), else the module's ``render`` function."""
    kw = dict(title=spec.title, icon=spec.icon, url_path=url_path or spec.url_path, default=default,
              visibility=visibility)
    if not spec.runs_as_script:
        module = importlib.import_module(f"dashboards.pages.{spec.path.stem}")
        return st.Page(module.render, **kw)
    return st.Page(spec.path, **kw)


STYLE = """<style>
/* KPI tiles: values and labels wrap instead of being cut ("1.01 EFLO..."), and scale with the window */
[data-testid="stMetricValue"] { font-size: clamp(1.3rem, 0.9rem + 1.1vw, 2.1rem); }
[data-testid="stMetricValue"] > div { white-space: normal; overflow: visible; text-overflow: clip;
  overflow-wrap: anywhere; line-height: 1.2; }
[data-testid="stMetricLabel"] p, [data-testid="stMetricLabel"] div { white-space: normal; overflow: visible;
  text-overflow: clip; }
/* wide charts scroll sideways on a phone instead of being cut at the screen's edge */
[data-testid="stVegaLiteChart"] { overflow-x: auto; }
</style>"""
"""Page CSS (sent once per run with ``st.html``): presentation only."""


def main() -> None:
    """Draw the app: page config, navigation, the shared sidebar, then the page in view."""
    st.set_page_config(page_title="econ: LLM inference economics", page_icon=":material/calculate:", layout="wide")
    st.html(STYLE)
    specs = discover()
    # the default page is served at "/" but still reserves a url_path; it takes "<path>-home" so that a hidden twin
    # can answer its own path (/cost-explorer): a typed or shared link to it opens the page, no "Page not found"
    pages = [to_page(s, i == 0, url_path=f"{s.url_path}-home" if i == 0 else None) for i, s in enumerate(specs)]
    alias = to_page(specs[0], False, visibility="hidden")
    nav = st.navigation(pages + [alias])
    shown = next((s for s, p in zip(specs + specs[:1], pages + [alias]) if p is nav), specs[0])
    state.set_page(shown.path.stem)  # page-local widget values follow the page in view
    st.session_state[state.APP_FLAG] = True  # pages use this run's sidebar instead of drawing their own
    try:
        scenario_sidebar.show("sidebar")
        scenario_sidebar.show_warnings()
        if scenario_sidebar.gate():  # an accelerator that cannot be used as linked: the page waits for the user
            nav.run()
    finally:
        st.session_state[state.APP_FLAG] = False
    st.sidebar.caption("econ: roofline cost model of LLM inference. Numbers are estimates; every assumption is on "
                       "the Assumptions page.")


if __name__ == "__main__":
    main()
