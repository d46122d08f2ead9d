"""Quotes from LiteLLM's community price table (``model_prices_and_context_window`` JSON; ``econ quotes import``).

LiteLLM's ``model_prices_and_context_window_backup.json`` (in the ``litellm`` PyPI wheel) gives USD per token
per ``"<provider>/<model>"`` key; :func:`import_litellm` reads its ``chat`` entries, maps the names to catalog
models with ``data/model_aliases.csv`` (:func:`load_aliases`), converts the prices to USD per million tokens and
returns quotes validated as a quotes file (:func:`econ.tables.quote_files.validate_quotes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from econ.errors import DataError
from econ.tables.catalog import DEFAULT_DATA_DIR, Catalog, read_raw_csv
from econ.tables.quote_files import REQUIRED_QUOTE_COLUMNS, validate_quotes

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
        A malformed table, or an alias naming a model not in the catalog.
    """
    base = Path(catalog.data_dir) if catalog is not None else DEFAULT_DATA_DIR
    path = base / "model_aliases.csv"
    if not path.is_file():
        path = DEFAULT_DATA_DIR / "model_aliases.csv"
    raw = read_raw_csv(path)
    for c in ("alias", "model"):
        if c not in raw.columns:
            raise DataError(f"{path.name}: missing column {c!r}")
    if catalog is not None:
        bad = sorted(set(raw["model"].drop_nulls()) - set(catalog.models["id"]))
        if bad:
            raise DataError(f"{path.name}: column model: unknown model id(s) {bad[:8]} (see `econ list models`)")
    notes = raw["notes"] if "notes" in raw.columns else pl.Series([None] * raw.height, dtype=pl.String)
    return {a.lower(): (m, n) for a, m, n in zip(raw["alias"], raw["model"], notes) if a and m}


def _slug(text: str) -> str:
    import re
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9.]+", "-", text.lower())).strip("-.")


def _price(entry: dict, field: str, key: str, *, required: bool, positive: bool):
    """(USD per M tokens or None, reason or None) of a per-token price field of a LiteLLM entry."""
    import math
    v = entry.get(field)
    if v is None:
        return None, (f"no {field}" if required else None)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None, f"{field}={v!r} is not a number"
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

    if isinstance(source, (str, Path)):
        path = Path(source)
        name = name or path.name
        try:
            size = path.stat().st_size
            if size > MAX_LITELLM_FILE_BYTES:
                raise DataError(f"{name}: {size / 1e6:,.1f} MB; at most {MAX_LITELLM_FILE_BYTES / 1e6:,.0f} MB")
            if path.is_dir():
                raise DataError(f"{name}: is a folder, not a LiteLLM price JSON file")
            data = path.read_bytes()
            mtime = dt.date.fromtimestamp(path.stat().st_mtime).isoformat()
        except FileNotFoundError:
            raise DataError(f"{name}: file not found") from None
        except OSError as exc:
            from econ.safe_write import describe_os_error
            raise DataError(f"{name}: cannot be read ({describe_os_error(exc)})") from None
    else:
        data = bytes(source)
        name = name or "LiteLLM JSON"
        mtime = dt.date.today().isoformat()
        if len(data) > MAX_LITELLM_FILE_BYTES:
            raise DataError(f"{name}: {len(data) / 1e6:,.1f} MB; at most {MAX_LITELLM_FILE_BYTES / 1e6:,.0f} MB")
    as_of = as_of or mtime
    expected = "expected LiteLLM's model_prices_and_context_window JSON (an object of \"<provider>/<model>\" entries)"
    try:
        table = json.loads(data)
    except UnicodeDecodeError:
        raise DataError(f"{name}: not UTF-8 text; {expected}") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{name}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                        f"{expected}") from None
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
            skipped.append((key, f"the entry is a JSON {type(entry).__name__}, not an object"))
            continue
        if entry.get("mode") != "chat":
            not_chat += 1
            continue
        provider_raw = str(entry.get("litellm_provider") or "")
        short = key[len(provider_raw) + 1:] if provider_raw and key.startswith(provider_raw + "/") else key
        hit = aliases.get(key.lower()) or aliases.get(short.lower())
        if hit is None:
            unmapped.append(key)
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
            skipped.append((key, reason))
            continue
        provider = ("google-vertex" if provider_raw.startswith("vertex_ai")
                    else LITELLM_PROVIDERS.get(provider_raw, provider_raw.replace("_", "-") or "unknown"))
        src = entry.get("source")
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
        quotes = validate_quotes(pl.DataFrame(schema={c: pl.String for c in REQUIRED_QUOTE_COLUMNS}), catalog, name)
    return LitellmImport(quotes=quotes, unmapped=unmapped, skipped=skipped, not_chat=not_chat, entries=entries)
