"""Write the speed and stated-format columns of data/quotes.csv from data/provider_speeds.csv.

Usage::

    .venv/bin/python scripts/update_quote_speeds.py            # rewrite data/quotes.csv in place
    .venv/bin/python scripts/update_quote_speeds.py --check    # exit 1 and list the quotes that differ

``data/provider_speeds.csv`` is the sourced table of provider output speeds, times to first token and stated
serving formats (data/README.md "provider_speeds.csv"); for every quote it lists, this script writes
``output_tokens_per_s_per_user``, ``ttft_s``, ``speed_source`` (``<speed_kind>: <source>``) and ``speed_as_of``
(cleared when the row has no speed), and, where the row states a format, ``weight_format`` with
``weight_format_basis = provider-stated`` (:func:`econ.tables.quote_files.speeds_into_quotes`). Every other cell is
kept. ``tests/tables/test_quote_files.py`` fails when the two files disagree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from econ.safe_write import write_bytes  # noqa: E402
from econ.tables.catalog import DEFAULT_DATA_DIR  # noqa: E402
from econ.tables.quote_files import load_provider_speeds, speeds_into_quotes  # noqa: E402


def updated(data_dir: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(quotes.csv as read, quotes.csv with the table's columns written in), every cell text."""
    raw = pl.read_csv(data_dir / "quotes.csv", infer_schema_length=0)
    return raw, speeds_into_quotes(raw, load_provider_speeds(data_dir))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when quotes.csv differs from the table")
    ap.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR))
    args = ap.parse_args(argv)
    data_dir = Path(args.data_dir)
    raw, new = updated(data_dir)
    diff = raw.with_row_index("_i").join(new.with_row_index("_i"), on="_i", suffix="_new")
    changed = [r["quote_id"] for r in diff.iter_rows(named=True)
               if any(r[c] != r[f"{c}_new"] for c in raw.columns if c != "quote_id")]
    if args.check:
        if changed:
            print(f"quotes.csv differs from provider_speeds.csv for {len(changed)} quote(s): {', '.join(changed)}")
            return 1
        return 0
    write_bytes(new.write_csv().encode(), data_dir / "quotes.csv", force=True)  # polars keeps the file's quoting
    print(f"{data_dir / 'quotes.csv'}: {len(changed)} quote(s) updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
