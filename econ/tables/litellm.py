"""Quotes from LiteLLM's community price table (``model_prices_and_context_window`` JSON; ``econ quotes import``).

LiteLLM's ``model_prices_and_context_window_backup.json`` (in the ``litellm`` PyPI wheel) gives USD per token
per ``"<provider>/<model>"`` key; :func:`import_litellm` reads its ``chat`` entries, maps the names to catalog
models with ``data/model_aliases.csv`` (:func:`load_aliases`), converts the prices to USD per million tokens and
returns quotes validated as a quotes file (:func:`econ.tables.quote_files.validate_quotes`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from econ.errors import DataError
from econ.tables.catalog import ALIAS_SCHEMA, DEFAULT_DATA_DIR, Catalog, read_raw_csv, validate_table
from econ.tables.rules import format_problems
from econ.tables.quote_files import validate_quotes

MAX_LITELLM_FILE_BYTES = 64_000_000
"""Largest LiteLLM price JSON read (the litellm 1.109.1 file is 3.2 MB). [B]"""

LITELLM_PROVIDERS: dict[str, str] = {
    "together_ai": "together", "fireworks_ai": "fireworks", "bedrock": "aws-bedrock", "bedrock_converse": "aws-bedrock",
    "bedrock_mantle": "aws-bedrock", "azure_ai": "azure-ai", "lambda_ai": "lambda",
}
"""LiteLLM ``litellm_provider`` -> the ``quotes.csv`` provider name (``vertex_ai-*`` -> ``google-vertex``; any other
name with ``_`` turned into ``-``)."""


@dataclass(frozen=True)
class LitellmImport:
    """Result of :func:`import_litellm`.

    Attributes
    ----------
    quotes : pl.DataFrame, validated quotes (:func:`econ.tables.quote_files.validate_quotes`), one per mapped chat entry
    unmapped : list of str, chat-model keys no alias maps to a catalog model
    skipped : list of (key, reason), mapped entries left out (a bad or missing price), with the field and value
    not_chat : int, entries of another mode (embedding, image, audio, ...), left out
    entries : int, entries read
    """

    quotes: pl.DataFrame
    unmapped: list
    skipped: list
    not_chat: int
    entries: int


def load_aliases(catalog: Catalog | None = None) -> dict[str, tuple[str, str | None]]:
    """``model_aliases.csv`` as {lowercased alias: (catalog model id, notes)} (data folder, else the shipped file).

    Raises
    ------
    DataError
        A malformed table (every bad cell named by file, row and column: an empty ``source``, a ``kind`` outside
        :data:`econ.tables.catalog.ALIAS_KINDS`), an alias given twice (compared case-insensitively: the later row
        would silently win), or an alias naming a model not in the catalog.
    """
    base = Path(catalog.data_dir) if catalog is not None else DEFAULT_DATA_DIR
    path = base / "model_aliases.csv"
    if not path.is_file():
        path = DEFAULT_DATA_DIR / "model_aliases.csv"
    table = validate_table(read_raw_csv(path), ALIAS_SCHEMA, "alias", path.name, kebab_ids=False)
    problems = []
    first: dict[str, str] = {}
    for a in table["alias"].to_list():  # aliases are matched case-insensitively: one row per name
        key = a.lower()
        if key in first and first[key] != a:
            problems.append(f"{path.name}, row {a}, column alias: the same name as row {first[key]} (aliases are "
                            f"matched case-insensitively; the last would win) [rule: each alias once]")
        first.setdefault(key, a)
    if catalog is not None:
        known = set(catalog.models["id"])
        for a, m in zip(table["alias"], table["model"]):
            if m not in known:
                problems.append(f"{path.name}, row {a}, column model: unknown model id {m!r} (see `econ list "
                                f"models`) [rule: model is a catalog id]")
    if problems:
        raise DataError(format_problems(path.name, problems))
    return {a.lower(): (m, n) for a, m, n in zip(table["alias"], table["model"], table["notes"])}


MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays and objects read (LiteLLM's table nests 3): a deeper document is refused before
:mod:`json` parses it recursively (a few thousand levels raise RecursionError)."""
MAX_INT_DIGITS = 30
"""Longest integer literal read as a number; a longer one (Python refuses 4,300+ digits, and a 400-digit price
overflows a float) is kept as :class:`_HugeInt` and refused by the field that reads it."""
MAX_NAME_CHARS = 300
"""Longest model key or provider name imported (LiteLLM's longest is under 120 characters)."""


class _HugeInt(str):
    """An integer literal of more than :data:`MAX_INT_DIGITS` digits, kept as its digit count (never converted)."""

    def __str__(self) -> str:
        return f"a {len(self.lstrip('-')):,}-digit integer"

    __repr__ = __str__


def _int_or_huge(text: str):
    return _HugeInt(text) if len(text.lstrip("-")) > MAX_INT_DIGITS else int(text)


def _constant(text: str):
    """NaN, Infinity, -Infinity (JSON extensions Python accepts): kept as floats, refused where a price is read."""
    return float(text)


def json_nesting_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` in a JSON text, outside strings (a linear scan, no recursion)."""
    depth = best = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "[{":
            depth += 1
            best = max(best, depth)
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return best


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _text_problem(field: str, text: str) -> str | None:
    """Why a name read from the JSON is refused (control characters such as ANSI escapes, a lone surrogate, more
    than :data:`MAX_NAME_CHARS` characters), or None."""
    if _SURROGATE.search(text):
        return f"{field} holds a lone surrogate (not Unicode text)"
    if _CONTROL.search(text):
        return f"{field} holds control characters"
    if len(text) > MAX_NAME_CHARS:
        return f"{field} is {len(text):,} characters long; at most {MAX_NAME_CHARS}"
    return None


def _clean(text: str, limit: int = 120) -> str:
    """A name for a message or a list on a terminal: control characters and lone surrogates escaped, cut to
    ``limit`` characters with the length said."""
    t = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text))
    t = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", t)
    return t if len(t) <= limit else t[:limit] + f"... ({len(text):,} characters)"


def _shown(value) -> str:
    from econ.vocabulary import show
    return _clean(show(value))


def _slug(text: str) -> str:
    import re
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9.]+", "-", text.lower())).strip("-.")


def _price(entry: dict, field: str, key: str, *, required: bool, positive: bool):
    """(USD per M tokens or None, reason or None) of a per-token price field of a LiteLLM entry."""
    import math
    v = entry.get(field)
    if v is None:
        return None, (f"no {field}" if required else None)
    if isinstance(v, _HugeInt):
        return None, f"{field}={v} is outside {'(0' if positive else '[0'}, 0.01] USD per token"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None, f"{field}={_shown(v)} is not a number"
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        return None, f"{field}={v!r} is outside {'(0' if positive else '[0'}, 0.01] USD per token"
    per_m = float(f"{v * 1e6:.10g}")
    if per_m > 1e4:
        return None, f"{field}={v!r} is outside {'(0' if positive else '[0'}, 0.01] USD per token"
    return per_m, None


def import_litellm(source, catalog: Catalog, *, name: str | None = None, as_of: str | None = None) -> LitellmImport:
    """Quotes from a LiteLLM ``model_prices_and_context_window`` JSON (the community price table quotes.csv cites).

    Parameters
    ----------
    source : str, Path or bytes
        The JSON file (from the installed ``litellm`` package, ``model_prices_and_context_window_backup.json``,
        or a download): an object of ``"<provider>/<model>": {"litellm_provider", "mode",
        "input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost", ...}``.
    catalog : Catalog
    name : str, optional, the file name in messages and in each quote's ``source``
    as_of : str, optional, ISO date of the snapshot (default: the file's modification date; today for bytes)

    Returns
    -------
    LitellmImport. Only ``chat`` entries are read. Names are mapped by ``model_aliases.csv`` (case-insensitive):
    the full key first, then the key without its ``<litellm_provider>/`` prefix. Prices per million tokens =
    per token x 1e6; the cached-input price is ``cache_read_input_token_cost``; the weight format follows
    :func:`econ.tables.quote_files.weight_format_rule` ("Turbo"/"fp8" in the name -> fp8). Entries with a missing,
    non-numeric, negative or zero input/output price, or a cached price above the input price, are skipped with
    the reason.

    Raises
    ------
    DataError
        The file is missing, too large, not valid JSON, not an object of model entries, or has no LiteLLM
        price entry at all (``litellm_provider`` with ``input_cost_per_token`` and ``output_cost_per_token``).
    """
    import datetime as dt
    import json

    from econ.tables.uploads import read_file_bytes

    if isinstance(source, (str, Path)):
        path = Path(source)
        name = name or _clean(path.name)
        data = read_file_bytes(path, MAX_LITELLM_FILE_BYTES, what="a LiteLLM price JSON file")
        try:
            mtime = dt.date.fromtimestamp(path.stat().st_mtime).isoformat()
        except (OSError, ValueError, OverflowError):
            mtime = dt.date.today().isoformat()
    else:
        data = bytes(source)
        name = name or "LiteLLM JSON"
        mtime = dt.date.today().isoformat()
        if len(data) > MAX_LITELLM_FILE_BYTES:
            raise DataError(f"{name}: {len(data) / 1e6:,.1f} MB; at most {MAX_LITELLM_FILE_BYTES / 1e6:,.0f} MB")
    as_of = as_of or mtime
    expected = "expected LiteLLM's model_prices_and_context_window JSON (an object of \"<provider>/<model>\" entries)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{name}: not UTF-8 text; {expected}") from None
    depth = json_nesting_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise DataError(f"{name}: nests arrays/objects {depth:,} deep; at most {MAX_JSON_DEPTH} (LiteLLM's table "
                        f"nests 3); {expected}")
    try:
        table = json.loads(text, parse_int=_int_or_huge, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise DataError(f"{name}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                        f"{expected}") from None
    except (RecursionError, ValueError, OverflowError) as exc:  # pragma: no cover - the depth scan refuses first
        raise DataError(f"{name}: a JSON value this reader refuses ({type(exc).__name__}); {expected}") from None
    if not isinstance(table, dict):
        raise DataError(f"{name}: the top level is a JSON {type(table).__name__}, not an object; {expected}")
    priced = [k for k, v in table.items() if isinstance(v, dict) and "litellm_provider" in v
              and "input_cost_per_token" in v and "output_cost_per_token" in v]
    if not priced:
        raise DataError(f"{name}: no entry has litellm_provider, input_cost_per_token and output_cost_per_token; "
                        f"{expected}")
    aliases = load_aliases(catalog)
    rows, unmapped, skipped, not_chat, entries = [], [], [], 0, 0
    for key, entry in table.items():
        if key == "sample_spec":  # LiteLLM's schema description, not a model
            continue
        entries += 1
        if not isinstance(entry, dict):
            skipped.append((_clean(key), f"the entry is a JSON {type(entry).__name__}, not an object"))
            continue
        if entry.get("mode") != "chat":
            not_chat += 1
            continue
        provider_raw = entry.get("litellm_provider")
        bad_text = _text_problem("the name", key) or (
            f"litellm_provider={_shown(provider_raw)} is not text (a provider name)"
            if provider_raw is not None and not isinstance(provider_raw, str)
            else _text_problem("litellm_provider", provider_raw or ""))
        if bad_text:
            skipped.append((_clean(key), bad_text))
            continue
        provider_raw = provider_raw or ""
        short = key[len(provider_raw) + 1:] if provider_raw and key.startswith(provider_raw + "/") else key
        hit = aliases.get(key.lower()) or aliases.get(short.lower())
        if hit is None:
            unmapped.append(_clean(key))
            continue
        model, alias_note = hit
        p_in, r1 = _price(entry, "input_cost_per_token", key, required=True, positive=True)
        p_out, r2 = _price(entry, "output_cost_per_token", key, required=True, positive=True)
        p_c, r3 = _price(entry, "cache_read_input_token_cost", key, required=False, positive=False)
        reason = r1 or r2 or r3
        if reason is None and p_c is not None and p_c > p_in:
            reason = (f"cache_read_input_token_cost={entry['cache_read_input_token_cost']!r} is above "
                      f"input_cost_per_token={entry['input_cost_per_token']!r}")
        if reason is not None:
            skipped.append((_clean(key), reason))
            continue
        provider = ("google-vertex" if provider_raw.startswith("vertex_ai")
                    else LITELLM_PROVIDERS.get(provider_raw, provider_raw.replace("_", "-") or "unknown"))
        src = entry.get("source")
        src = src if isinstance(src, str) and not _text_problem("source", src) else None
        notes = "; ".join(x for x in (
            f"imported by econ quotes import from {name}; per-token JSON prices converted to per-million (x1e6)",
            f'litellm key "{key}"', f"entry source: {src}" if isinstance(src, str) and src else None,
            f"alias note: {alias_note}" if alias_note else None) if x)
        rows.append({"quote_id": _slug(f"{provider}-{short}"), "provider": provider, "model": model,
                     "provider_model_name": short, "usd_per_m_input_tokens": repr(p_in),
                     "usd_per_m_cached_input_tokens": None if p_c is None else repr(p_c),
                     "usd_per_m_output_tokens": repr(p_out),
                     "source": f"LiteLLM model_prices_and_context_window JSON ({name})", "as_of": as_of,
                     "notes": notes})
    if rows:
        raw = pl.DataFrame(rows, schema={c: pl.String for c in rows[0]})
        seen = raw.with_columns(pl.int_range(pl.len()).over("quote_id").alias("_n"))
        raw = seen.with_columns(pl.when(pl.col("_n") > 0).then(pl.format("{}-{}", pl.col("quote_id"), pl.col("_n") + 1))
                                .otherwise(pl.col("quote_id")).alias("quote_id")).drop("_n")
        while raw["quote_id"].is_duplicated().any():  # a suffixed id that collides with a real one
            raw = raw.with_columns(pl.when(pl.col("quote_id").is_duplicated() & (pl.int_range(pl.len()).over("quote_id") > 0))
                                   .then(pl.col("quote_id") + "-x").otherwise(pl.col("quote_id")).alias("quote_id"))
        quotes = validate_quotes(raw, catalog, name)
    else:
        reasons = "; ".join(f"{k}: {r}" for k, r in skipped[:5]) + (f" (+{len(skipped) - 5:,} more)"
                                                                      if len(skipped) > 5 else "")
        raise DataError(f"{name}: no usable quote: {entries:,} entries read, {not_chat:,} not chat models, "
                        f"{len(unmapped):,} chat models not in model_aliases.csv, {len(skipped):,} skipped"
                        + (f" ({reasons})" if skipped else ""))
    return LitellmImport(quotes=quotes, unmapped=unmapped, skipped=skipped, not_chat=not_chat, entries=entries)
