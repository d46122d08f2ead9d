"""Text from users, shown on a page, rendered as text: the one escaping helper of the dashboard.

Streamlit renders the body of ``st.markdown``, ``st.caption``, ``st.info``, ``st.warning``,
``st.error`` and ``st.success`` as GitHub-flavoured Markdown (plus LaTeX between ``$`` and
Streamlit's ``:color[...]`` / ``:material/icon:`` directives). A value a user controls (a URL query
parameter, a scenario file, an uploaded table or quotes file, a file name) echoed into such a body
can therefore draw a link (``[Session expired - click here](http://...)``) or make the browser fetch
an image on page load (``![x](http://.../t.png)``). Every page passes such values through
:func:`md` (or shows them with :func:`code` / ``st.text``), so they render as the characters typed.

How: CommonMark lets any ASCII punctuation character be escaped with a backslash, and an escaped
character is always literal text (CommonMark 0.31, section 2.4 "Backslash escapes"). :func:`md`
escapes every one of them, which disarms links, images, autolinks (``<http://...>``), GFM
autolink literals (``http://`` and ``www.`` need an unescaped ``:`` or ``.``), raw HTML, emphasis,
code spans, tables, headings, lists, LaTeX (``$``) and directives (``:``). Control characters are
replaced by U+FFFD. ``tests/test_reliability_text.py`` checks pages with link and image payloads
render no ``<a>`` or ``<img>`` (Markdown rendered by markdown-it-py, and in Chromium).
"""

from __future__ import annotations

import re
import string

_PUNCT = re.compile("([" + re.escape(string.punctuation) + "])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_UNESCAPE = re.compile(r"\\([" + re.escape(string.punctuation) + "])")


def md(text, *, inline: bool = False) -> str:
    """``text`` escaped for a Streamlit Markdown body: renders as the same characters, never as markup.

    Parameters
    ----------
    text : object
        Any value; ``str(text)`` is escaped (None gives ``""``).
    inline : bool
        Also fold line breaks into spaces (for a value inside a sentence or a list item).

    Returns
    -------
    str
        Markdown whose rendering is the literal text.
    """
    if text is None:
        return ""
    s = _CONTROL.sub("\ufffd", str(text))
    if inline:
        s = re.sub(r"\s*[\r\n]+\s*", " ", s)
    return _PUNCT.sub(r"\\\1", s)


def code(text) -> str:
    """``text`` as an inline code span (Markdown), safe whatever backticks it holds."""
    s = _CONTROL.sub("\ufffd", "" if text is None else str(text))
    s = re.sub(r"[\r\n]+", " ", s)
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s.strip() else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def unescape(markdown: str) -> str:
    """The text :func:`md` escaped (for tests that read a message back from the page)."""
    return _UNESCAPE.sub(r"\1", markdown)


__all__ = ["md", "code", "unescape"]
