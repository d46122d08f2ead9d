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
escapes every one of them, which disarms links, images, autolinks (``<http://...>``), raw HTML,
emphasis, code spans, tables, headings, lists, LaTeX (``$``) and directives (``:``). GFM *autolink
literals* (a bare ``http://...``, ``www....`` or ``name@host.tld``) are different: Streamlit's
renderer (remark-gfm, mdast-util-gfm-autolink-literal) finds them in the text *after* escapes are
resolved, so escaping cannot stop them; :func:`md` puts each such run in an inline code span
instead (code is never linked), which shows it verbatim in monospace. Control characters are
replaced by U+FFFD. ``tests/dashboards/test_reliability_text.py`` checks pages with link and image payloads
render no link to the payload and no ``<img>`` (Markdown rendered by markdown-it-py, and in Chromium).
"""

from __future__ import annotations

import re
import string

_PUNCT = re.compile("([" + re.escape(string.punctuation) + "])")
# what GFM turns into links on its own (mdast-util-gfm-autolink-literal: protocol, www., e-mail), to the next blank
_AUTOLINKABLE = re.compile(r"(?i)(?:\b(?:https?|ftp|mailto|xmpp)\:|\bwww\.)\S*|[-.\w+]+@[-\w]+(?:\.[-\w]+)+\S*")
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
    out, pos = [], 0
    for m in _AUTOLINKABLE.finditer(s):
        out.append(_PUNCT.sub(r"\\\1", s[pos:m.start()]))
        out.append(code(m.group(0)))
        pos = m.end()
    out.append(_PUNCT.sub(r"\\\1", s[pos:]))
    return "".join(out)


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
    parts = re.split(r"(?<!\\)(`+)( ?)(.*?)\2\1(?!`)", markdown)  # code spans: text, fence, pad, content, text, ...
    out = []
    for i in range(0, len(parts), 4):
        out.append(_UNESCAPE.sub(r"\1", parts[i]))
        if i + 3 < len(parts):
            out.append(parts[i + 3])
    return "".join(out)


__all__ = ["md", "code", "unescape"]


def error(exc: BaseException) -> str:
    """A failed answer as an analyst reads it, escaped: econ's own errors (bad input, unknown id, data) by their
    message alone ("hardware=mi355x has no capex ..."); anything else says it is unexpected and names its kind."""
    from econ.errors import EconError

    if isinstance(exc, EconError):
        return md(f"Cannot compute this: {exc}")
    return md(f"Unexpected error ({type(exc).__name__}): {exc}")
