"""Write the on-demand tier rates of data/accelerators.csv from data/rental_rates.csv, by the documented rule.

Usage::

    .venv/bin/python scripts/update_rental_tiers.py            # rewrite data/accelerators.csv in place
    .venv/bin/python scripts/update_rental_tiers.py --check    # exit 1 and list the cells that differ

The rule (:mod:`econ.tables.rental_rates`, data/README.md "rental_rates.csv"): each on-demand column is the median
of the providers' latest offers of its kind (hyperscaler, GPU cloud) within a year of the newest one. This script
writes, per accelerator:

- ``rental_on_demand_hyperscaler_usd_per_hour`` and ``rental_on_demand_neocloud_usd_per_hour`` (empty where no
  offer of that kind exists: never another kind's or chip's rate);
- ``rental_tiers_basis`` (the offers that voted), ``source_rental_tiers`` (this table; a committed-use source
  after ``; contract: `` is kept) and ``as_of_rental_tiers`` (the newest offer that voted);
- the legacy ``rental_usd_per_hour`` / ``rental_tier`` / ``rental_basis``: the GPU-cloud on-demand median,
  else SemiAnalysis's 3-year rental (``rental_3yr_usd_per_hour``), else the hyperscaler on-demand median, else
  what the row had (a derived estimate); empty when none exists.

``tests/tables/test_rental_rates.py`` fails when accelerators.csv and this rule disagree.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from econ.tables.catalog import DEFAULT_DATA_DIR, load_catalog  # noqa: E402
from econ.tables.rental_rates import RULE_COLUMNS, load_rental_rates, tier_rates_from_rows  # noqa: E402

CONTRACT_MARK = "; contract: "
SOURCE = "data/rental_rates.csv (on-demand columns: median rule of econ.tables.rental_rates, data/README.md)"


def number(x: float | None) -> str:
    """A rate as the CSV writes it: up to 4 decimals, no trailing zeros."""
    return "" if x is None else f"{x:.4f}".rstrip("0").rstrip(".")


def updated_rows(data_dir: Path) -> tuple[list[str], list[list[str]]]:
    """accelerators.csv (header, rows) with the rule's rates written in."""
    catalog = load_catalog(data_dir)
    rates = tier_rates_from_rows(load_rental_rates(data_dir, catalog.accelerators["id"]))
    by = {(r["accelerator"], r["column"]): r for r in rates.iter_rows(named=True)}
    with open(data_dir / "accelerators.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    col = {c: i for i, c in enumerate(header)}
    for row in body:
        acc = row[col["id"]]
        got = {c: by.get((acc, c)) for c in RULE_COLUMNS}
        for c, r in got.items():
            row[col[c]] = number(r["usd_per_gpu_hour"]) if r else ""
        used = [r for r in got.values() if r]
        kinds = {"rental_on_demand_hyperscaler_usd_per_hour": "hyperscaler",
                 "rental_on_demand_neocloud_usd_per_hour": "GPU cloud"}
        old_source = row[col["source_rental_tiers"]]
        contract = old_source.split(CONTRACT_MARK, 1)[1] if CONTRACT_MARK in old_source else ""
        if used:
            row[col["rental_tiers_basis"]] = "; ".join(
                f"{kinds[c]}: {r['basis']}" for c, r in got.items() if r)
            row[col["source_rental_tiers"]] = SOURCE + (CONTRACT_MARK + contract if contract else "")
            row[col["as_of_rental_tiers"]] = max((r["as_of"] for r in used), key=lambda a: a.lstrip("~"))
        elif not row[col["rental_contract_usd_per_hour"]]:
            for c in ("rental_tiers_basis", "source_rental_tiers", "as_of_rental_tiers"):
                row[col[c]] = ""
        neo, hyp = got["rental_on_demand_neocloud_usd_per_hour"], got["rental_on_demand_hyperscaler_usd_per_hour"]
        three = row[col["rental_3yr_usd_per_hour"]]
        if neo:
            legacy = (number(neo["usd_per_gpu_hour"]), "on-demand-neocloud", f"GPU-cloud on-demand {neo['basis']}")
        elif three:
            legacy = (three, "rental-3yr", "SemiAnalysis 3-year rental (rental_3yr_usd_per_hour; no GPU-cloud "
                                           "on-demand offer in data/rental_rates.csv)")
        elif hyp:
            legacy = (number(hyp["usd_per_gpu_hour"]), "on-demand-hyperscaler",
                      f"hyperscaler on-demand {hyp['basis']} (no GPU-cloud offer)")
        else:
            legacy = (row[col["rental_usd_per_hour"]], row[col["rental_tier"]], row[col["rental_basis"]])
        row[col["rental_usd_per_hour"]], row[col["rental_tier"]], row[col["rental_basis"]] = legacy
    return header, body


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when accelerators.csv differs from the rule")
    ap.add_argument("--data-dir", default=str(DEFAULT_DATA_DIR), help="folder of accelerators.csv and rental_rates.csv")
    args = ap.parse_args(argv)
    data_dir = Path(args.data_dir)
    header, body = updated_rows(data_dir)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([header, *body])
    path = data_dir / "accelerators.csv"
    old = path.read_text()
    if args.check:
        if out.getvalue() != old:
            print(f"{path} differs from the rental-rate rule; run scripts/update_rental_tiers.py", file=sys.stderr)
            return 1
        return 0
    if out.getvalue() != old:
        path.write_text(out.getvalue())
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
