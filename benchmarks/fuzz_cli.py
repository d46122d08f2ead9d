"""Seeded fuzz of every ``econ`` subcommand: no input may end in a Python traceback (issue 12).

Run: ``.venv/bin/python benchmarks/fuzz_cli.py --runs 2000 --seed 12 [--timeout 60] [--report FILE]``

Each run is one ``econ`` command line built from the parser itself (every subcommand and flag, found by
walking ``econ.cli.build_parser()``): a random subset of its flags, each given a valid value or one from
a pool of hostile ones (huge integers, ``1e400``, ``nan``, empty text, 300-character names, Markdown and
formula payloads, control characters, unknown ids, folders where files go, a 5,000-deep TOML, a
decompression-bomb XLSX, corrupted data folders, existing output files without ``--force``; issue 21: JSON nested
100,000 deep, 400- and 5,000-digit numbers, lone surrogates, ANSI escapes and a 1 MB name, a list as a provider,
custom accelerators out of range or refused by the catalog's rules, a hardware typo, a FIFO and ``/dev/zero`` where
files go, a data folder breaking the data rules), plus now and then an unknown flag or a missing required one.

The runs execute in a worker subprocess that calls ``econ.cli.main(argv)`` in-process (fast: the imports
happen once) with standard output and error captured; the parent gives each run ``--timeout`` seconds and
restarts the worker if it is killed, times out or dies. Outcomes:

- ``ok``: exit code 0, 2 (``econ``'s own "error: ..." line) or argparse's usage error (exit 2);
- ``violation``: an answer that printed a NaN or infinity, a negative cost, a control character or a line over
  10,000 characters (issue 21: :func:`output_violations`, :func:`terminal_violations`);
- ``traceback``: any other exception escaping ``main`` (its type, message and last frame are recorded);
- ``timeout`` / ``crash``: the worker exceeded the time limit or died (e.g. an allocation abort); these
  are bounded-work findings (issue 12 finding 1, the engine's), reported apart from tracebacks.

``tests/cli/test_fuzz_cli.py`` runs a few hundred of these in CI with the same generator.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import math
import os
import re
import random
import select
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LINK = "[Session expired - click here](http://127.0.0.1:9/x)"
HUGE_INT = str(9 * 10**400)
INTS = ["1", "2", "8", "0", "-1", "64", "4096", "1000000", HUGE_INT, "-" + HUGE_INT, "1e309", "1.5", "nan", "", "x",
        "0x10", "1_000", "9" * 5000, " 7 "]
FLOATS = ["0.5", "1", "0", "-1", "1e-300", "1e400", "-1e400", "nan", "inf", "-inf", "", "x", "1,5", HUGE_INT, "0.999999",
          "1e-9", "3", "100", "25"]
TEXT = ["", " ", "x" * 300, LINK, "![x](http://127.0.0.1:9/t.png)", "=HYPERLINK(\"http://x\")", "+cmd|' /C calc'!A0",
        "a,b,,c", ",", "auto", "all", "\t", "é", "../../etc/passwd", "-", "--", "1:1", "a\x07b", "☃" * 50]
RATIOS = ["3:1", "1:1", "0:1", "1:0", "x:1", "1e400:1", "-1:1", "3-1", "", "nan:1", "1:" + HUGE_INT, "3"]


def walk(parser=None, prefix=()):
    """(subcommand path, parser) of every leaf subcommand of ``econ``."""
    if parser is None:
        from econ.cli import build_parser
        parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, prefix + (name,))
            return
    yield prefix, parser


class Fixtures:
    """Files and folders the fuzz points path flags at, made once in a scratch folder."""

    def __init__(self, folder: Path):
        import polars as pl

        from econ.tables.catalog import DEFAULT_DATA_DIR, TABLES
        from econ.io.scenario import Scenario

        self.folder = folder
        f = folder
        (f / "a-folder").mkdir(exist_ok=True)
        (f / "existing.csv").write_text("keep,me\n1,2\n")
        (f / "existing.xlsx").write_bytes(b"old")
        (f / "good.toml").write_text(Scenario(model="llama-3.1-8b", hardware="h100-sxm").to_toml())
        (f / "deep.toml").write_text("model = " + "[" * 5000 + "]" * 5000 + "\n")
        (f / "huge-int.toml").write_text('model = "llama-3.1-8b"\nhardware = "h100-sxm"\nbatch_size = ' + HUGE_INT + "\n")
        (f / "payload.toml").write_text(f'model = "{LINK}"\n"{LINK}" = 1\ncompare_hardware = ["{LINK}"]\n')
        (f / "binary.toml").write_bytes(bytes(random.Random(1).randrange(256) for _ in range(4096)))
        (f / "big.toml").write_bytes(b"# pad\n" * 200_000)
        (f / "junk.csv").write_text("provider,model\nacme\n\x00,\"unterminated\n")
        (f / "nul.csv").write_bytes(b"provider,model,usd_per_m_input_tokens,usd_per_m_output_tokens\nac\x00me,"
                                    b"llama-3.1-8b,0.1,0.2\n")
        (f / "quotes-ok.csv").write_text("provider,model,usd_per_m_input_tokens,usd_per_m_output_tokens\n"
                                         "acme,llama-3.1-8b,0.1,0.2\n")
        (f / "quotes-formula.csv").write_text("provider,model,usd_per_m_input_tokens,usd_per_m_output_tokens\n"
                                              "=cmd|' /C calc'!A0,llama-3.1-8b,0.1,0.2\n")
        (f / "empty.csv").write_bytes(b"")
        # the hostile corpus of issue 21: deep and huge JSON, lone surrogates, ANSI escapes, a megabyte name
        entry = '{"litellm_provider": %s, "mode": "chat", "input_cost_per_token": %s, "output_cost_per_token": 2e-7}'
        key = '"together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo"'
        (f / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
        (f / "bigprice.json").write_text("{%s: %s}" % (key, entry % ('"together_ai"', "1" + "0" * 400)))
        (f / "bigint.json").write_text("{%s: %s, \"n\": %s}" % (key, entry % ('"together_ai"', "1e-7"), "9" * 5000))
        (f / "surrogate.json").write_text('{"together_ai/ll\\ud800ama": %s, %s: %s}'
                                          % (entry % ('"together_ai"', "1e-7"), key, entry % ('"to\\udc00"', "1e-7")))
        ok_entry = json.loads(entry % ('"x"', "1e-7"))
        (f / "ansi.json").write_text(json.dumps({"\x1b[31mRED\x1b[0m" + "x" * 1_000_000: ok_entry,
                                                 json.loads(key): {**ok_entry, "litellm_provider": "\x1b]0;t\x07"}}))
        (f / "list-provider.json").write_text("{%s: %s}" % (key, entry % ('["groq"]', "1e-7")))
        (f / "litellm-ok.json").write_text("{%s: %s}" % (key, entry % ('"together_ai"', "1e-7")))
        for name, body in (("custom-zero.toml", "custom_hbm_gib = 0"), ("custom-power.toml", "custom_power_w = 1"),
                           ("custom-capex.toml", "custom_capex_usd = 1"), ("custom-nan.toml", "custom_hbm_tb_per_s = nan"),
                           ("custom-text.toml", 'custom_bf16_tflop_per_s = "fast"'),
                           ("custom-link.toml", f'custom_name = "{LINK[:50]}"')):
            (f / name).write_text(f'[scenario]\nmodel = "llama-3.1-8b"\ncustom_accelerator = true\n'
                                  f'hardware = "custom-accelerator"\n{body}\n')
        (f / "typo-hardware.toml").write_text('[scenario]\nmodel = "llama-3.1-8b"\nhardware = "h100-sx"\n')
        fifo = f / "fifo"
        if not fifo.exists():
            os.mkfifo(fifo)
        (f / "notzip.xlsx").write_bytes(b"PK\x03\x04garbage")
        (f / "bomb.xlsx").write_bytes(_bomb_xlsx())
        for name, mutate in (("data-bad-bandwidth", lambda d: d.with_columns(
                                  pl.lit("1e-300").alias("hbm_bandwidth_tb_per_s"))),
                             ("data-blank-and-notes", None), ("data-folder-table", None),
                             ("data-nul", lambda d: d.with_columns(pl.lit("a\x00b").alias("display_name"))),
                             ("data-ansi-name", lambda d: d.with_columns(pl.lit("\x1b[31m" + LINK).alias("display_name"))),
                             ("data-link-name", lambda d: d.with_columns(pl.lit(LINK).alias("display_name"))),
                             ("data-dup-alias", None), ("data-band-order", None), ("data-no-buildout-row", None),
                             ("data-negative-measurement", None)):
            d = f / name
            d.mkdir(exist_ok=True)
            for fname, _, _ in TABLES.values():
                (d / fname).write_bytes((DEFAULT_DATA_DIR / fname).read_bytes())
            # the corruptions of issue 21 part 4, one folder each (a catalog stops at its first bad table)
            if name == "data-dup-alias":
                al = pl.read_csv(DEFAULT_DATA_DIR / "model_aliases.csv", infer_schema=False)
                pl.concat([al, al.head(1)]).write_csv(d / "model_aliases.csv")
            if name == "data-band-order":
                cal = pl.read_csv(DEFAULT_DATA_DIR / "calibration.csv", infer_schema=False)
                cal.with_columns(pl.lit("0.5").alias("log_ratio_p10")).write_csv(d / "calibration.csv")
            if name == "data-no-buildout-row":
                bo = pl.read_csv(DEFAULT_DATA_DIR / "buildout_capex.csv", infer_schema=False)
                bo.filter(pl.col("id") != bo["id"][0]).write_csv(d / "buildout_capex.csv")
            if name == "data-negative-measurement":
                ms = pl.read_csv(DEFAULT_DATA_DIR / "measurements.csv", infer_schema=False)
                ms.with_columns(pl.lit("-5").alias("value")).write_csv(d / "measurements.csv")
            acc = d / "accelerators.csv"
            if mutate is not None:
                mutate(pl.read_csv(acc, infer_schema=False)).write_csv(acc)
            if name == "data-blank-and-notes":
                pl.read_csv(acc, infer_schema=False).with_columns(pl.lit("n").alias("my_notes")).write_csv(acc)
                acc.write_bytes(acc.read_bytes() + b"\n\n")
            if name == "data-folder-table":
                acc.unlink()
                acc.mkdir()
        self.long = "n" * 300 + ".csv"
        self.reads = [str(f / n) for n in ("good.toml", "deep.toml", "huge-int.toml", "payload.toml", "binary.toml",
                                           "big.toml", "junk.csv", "nul.csv", "quotes-ok.csv", "quotes-formula.csv",
                                           "empty.csv", "notzip.xlsx", "bomb.xlsx", "a-folder", "missing.toml",
                                           "deep.json", "bigprice.json", "bigint.json", "surrogate.json", "ansi.json",
                                           "list-provider.json", "litellm-ok.json", "custom-zero.toml",
                                           "custom-power.toml", "custom-capex.toml", "custom-nan.toml",
                                           "custom-text.toml", "custom-link.toml", "typo-hardware.toml", "fifo")]
        self.reads += [str(f / self.long), "", "/dev/null", "/proc/self/status", "/dev/zero"]
        self.dirs = [str(f / n) for n in ("data-bad-bandwidth", "data-blank-and-notes", "data-folder-table",
                                          "data-nul", "data-ansi-name", "data-link-name", "data-dup-alias", "data-band-order",
                                          "data-no-buildout-row", "data-negative-measurement", "a-folder", "missing-dir",
                                          "existing.csv")]
        self.dirs += [str(f / ("d" * 300)), str(DEFAULT_DATA_DIR)]
        self.writes = [str(f / n) for n in ("out.csv", "out.xlsx", "out.parquet", "existing.csv", "existing.xlsx",
                                            "a-folder", "missing/out.csv", "out.txt", "existing.csv/x.csv")]
        self.writes += [str(f / self.long), "", "out.csv", str(f / ("y" * 250 + ".csv"))]


def _bomb_xlsx(rows: int = 2_000_000) -> bytes:
    """A workbook of ``rows`` rows in well under a megabyte (the bounded reader must stop at 10,000)."""
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("xl/workbook.xml", '<workbook><sheets><sheet name="s" sheetId="1" r:id="rId1"/></sheets></workbook>')
        zf.writestr("xl/_rels/workbook.xml.rels", '<Relationships><Relationship Id="rId1" '
                                                  'Target="worksheets/sheet1.xml"/></Relationships>')
        with zf.open("xl/worksheets/sheet1.xml", "w") as fh:
            fh.write(b"<worksheet><sheetData>")
            block = b"<row><c><v>1</v></c></row>" * 40_000
            for _ in range(rows // 40_000):
                fh.write(block)
            fh.write(b"</sheetData></worksheet>")
    return buf.getvalue()


def _ids():
    from econ.tables.catalog import load_catalog
    cat = load_catalog()
    return (cat.models["id"].to_list(), cat.accelerators["id"].to_list(), cat.power_prices["region_id"].to_list(),
            cat.facilities["id"].to_list())


def make_generator(fixtures: Fixtures, seed: int, weights: dict[str, float] | None = None):
    """A function ``next_argv() -> list[str]`` drawing seeded command lines over every leaf subcommand.

    The first ``len(walk())`` draws visit every subcommand once (so a budget-cut run still reaches each, however
    light its weight); later draws follow ``weights``.
    """
    rng = random.Random(seed)
    models, hardware, regions, facilities = _ids()
    leaves = list(walk())
    names = [" ".join(p) for p, _ in leaves]
    w = [(weights or {}).get(n, 1.0) for n in names]
    first_pass = rng.sample(leaves, len(leaves))  # every subcommand once, in a seeded order, before the weighted draws

    def pick(pool):
        return rng.choice(pool)

    def value(action) -> str:
        opt = action.option_strings[0] if action.option_strings else action.dest
        hostile = rng.random() < 0.35
        if action.choices is not None:
            return pick(list(action.choices)) if not hostile else pick(TEXT + ["BF16", "fp16"])
        if opt in ("--scenario",):
            return pick(fixtures.reads)
        if opt in ("--file", "--litellm", "--measurements"):
            return pick(fixtures.reads)
        if opt == "--data-dir":
            return pick(fixtures.dirs)
        if opt in ("--output", "-o"):
            return pick(fixtures.writes)
        if opt == "--model":
            return pick(models) if not hostile else pick(TEXT + [",".join(models[:3]), "llama-3-8b"])
        if opt == "--hardware":
            if hostile:
                return pick(TEXT + ["h100", "h100-sxm,nope"])
            return ",".join(rng.sample(hardware, rng.choice([1, 1, 2, 3])))
        if opt == "--region":
            return pick(regions) if not hostile else pick(TEXT)
        if opt == "--facility":
            return pick(facilities) if not hostile else pick(TEXT)
        if opt in ("--input-output-mix",):
            return pick(RATIOS)
        if opt in ("--batch", "--gpus", "--scale-up-domain", "--precision", "--goodput", "--overheads",
                   "--power-basis", "--provider"):
            pools = {"--precision": ["bf16", "fp8", "fp4", "bf16,fp8", "fp16", ""],
                     "--overheads": ["0.05,0.03,0.1,0.05", "0.5,0.5,0.5,0.5", "1,1", "x", "-1,0,0,0"],
                     "--goodput": ["0.9", "0.05,0.03,0.1,0.05", "2", "x"],
                     "--power-basis": ["all-in", "tdp", "700", "typed", "x", "-1"],
                     "--provider": ["together", "groq,together", "nobody", ""]}
            pool = pools.get(opt, ["auto", "1", "8", "1,8,64", "8,8,8,8,8,8", "0", "-1", HUGE_INT, "1," + HUGE_INT,
                                   "1e9", "x", "", ",", "1024", "65536", "4"])
            return pick(pool + (TEXT if hostile else []))
        if action.type is int:
            return pick(INTS) if hostile else pick(["1", "2", "4", "8", "16", "64", "128", "1024", "4096"])
        if action.type is float:
            return pick(FLOATS) if hostile else pick(["0.5", "0.9", "1", "1.2", "10", "25", "100", "0.1"])
        return pick(TEXT)

    def next_argv() -> list[str]:
        path, parser = first_pass.pop() if first_pass else rng.choices(leaves, weights=w)[0]
        argv = list(path)
        actions = [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
        chosen = [a for a in actions if a.required and rng.random() < 0.93]
        optional = [a for a in actions if not a.required]
        chosen += rng.sample(optional, min(len(optional), rng.choice([0, 1, 2, 3, 4, 5, 6])))
        if "cost" in path and rng.random() < 0.8:  # cost/export need --model/--hardware (unless --scenario)
            chosen += [a for a in actions if a.option_strings and a.option_strings[0] in ("--model", "--hardware")]
        seen = set()
        for a in chosen:
            if id(a) in seen:
                continue
            seen.add(id(a))
            if not a.option_strings:  # positional
                argv.append(value(a))
            elif a.nargs == 0:
                argv.append(a.option_strings[0])
            else:
                v = value(a)
                argv += [f"{a.option_strings[0]}={v}"] if v.startswith("-") else [a.option_strings[0], v]
        if path[0] == "calibrate" and "--write" in argv:  # a fit that completes must never rewrite the shipped tables
            scratch_dir = str(Path(fixtures.dirs[0]).parent / "a-folder")
            argv = [scratch_dir if a == fixtures.dirs[-1] else a for a in argv]  # dirs[-1]: the shipped data
            if "--data-dir" not in argv:
                argv += ["--data-dir", scratch_dir]
        r = rng.random()
        if r < 0.03:
            argv.append("--no-such-flag")
        elif r < 0.05:
            argv.append("stray")
        return argv

    return next_argv


def corpus(fixtures: Fixtures) -> list[list[str]]:
    """The seeded hostile corpus of issue 21, run whole before the random draws: each hostile file through each
    reader that takes it (LiteLLM JSON, quote files, scenario TOML, measurements, data folders), the custom
    accelerators out of range through every subcommand that prices a scenario, in table and JSON formats.

    Deterministic (no draw): whatever the budget, every surface is reached. Returns command lines."""
    f = fixtures.folder
    special = [str(f / "fifo"), "/dev/zero", str(f / "a-folder"), str(f / "empty.csv"), str(f / "binary.toml")]
    jsons = [str(f / n) for n in ("deep.json", "bigprice.json", "bigint.json", "surrogate.json", "ansi.json",
                                  "list-provider.json", "litellm-ok.json")]
    quote_files = [str(f / n) for n in ("junk.csv", "nul.csv", "quotes-formula.csv", "notzip.xlsx", "bomb.xlsx")]
    tomls = [str(f / n) for n in ("deep.toml", "huge-int.toml", "payload.toml", "big.toml", "custom-zero.toml",
                                  "custom-power.toml", "custom-capex.toml", "custom-nan.toml", "custom-text.toml",
                                  "custom-link.toml", "typo-hardware.toml")]
    dirs = [str(f / n) for n in ("data-bad-bandwidth", "data-nul", "data-ansi-name", "data-link-name",
                                 "data-dup-alias", "data-band-order", "data-no-buildout-row",
                                 "data-negative-measurement", "data-folder-table")]
    out: list[list[str]] = []
    for i, path in enumerate(jsons + special):
        out.append(["quotes", "import", "--litellm", path, "--show-unmapped", "3"])
    for i, path in enumerate(quote_files + special + jsons[:2]):
        out.append(["quotes", "check", "--file", path, "--hardware", "h100-sxm",
                    "--format", ("json", "table", "csv")[i % 3]])
    for i, path in enumerate(tomls + special):
        fmt = ("json", "table", "csv")[i % 3]
        out.append(["cost", "--scenario", path, "--format", fmt])
        if "custom" in path or "typo" in path:  # every subcommand that prices a scenario's accelerator
            out += [["cluster", "--scenario", path, "--gpus", "1024", "--format", fmt],
                    ["fleet", "size", "--scenario", path, "--hardware", "custom-accelerator", "--power-mw", "10",
                     "--format", fmt],
                    ["export", "cost", "--scenario", path, "--output", f"corpus-{i}.csv", "--force"]]
    for path in special + [str(f / "junk.csv"), str(f / "nul.csv")]:
        out.append(["calibrate", "--measurements", path, "--check", "--format", "json"])
    for i, d in enumerate(dirs):  # each folder read whole (list), then where its corruption is used
        out.append(["list", "hardware", "--data-dir", d, "--format", ("json", "table")[i % 2]])
    d = dict(zip(("bad-bandwidth", "nul", "ansi", "link", "alias", "band", "buildout", "negative", "folder"), dirs))
    out += [["quotes", "import", "--litellm", str(f / "litellm-ok.json"), "--data-dir", d["alias"]],
            ["fleet", "capex", "--hardware", "h100-sxm", "--gpus", "1024", "--data-dir", d["buildout"]],
            ["cluster", "--hardware", "h100-sxm", "--gpus", "1024", "--data-dir", d["buildout"], "--format", "json"],
            ["calibrate", "--data-dir", d["negative"], "--check", "--format", "json"],
            ["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--data-dir", d["band"]],
            ["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--data-dir", d["link"]],
            ["list", "models", "--data-dir", d["link"]],
            ["quotes", "pnl", "--disclosure", "deepseek-v3r1-day6", "--data-dir", d["link"], "--format", "csv"]]
    out += [["quotes", "check", "--model", "llama-3.3-70b", "--input-price", p, "--output-price", p,
             "--hardware", "h100-sxm", "--format", fmt] for p in ("1e-20", "9999", "1e15", "0") for fmt in ("json", "table")]
    out += [["fleet", "scale", "--hardware", "h100-sxm", "--gpus", "1024", "--goodput", g] for g in ("-1", "0", "1.5",
                                                                                                   "0.5", "nan")]
    return out


# ----------------------------------------------------------------------------------------- output invariants

_COST = re.compile(r"(usd_per_m_|usd_per_gpu_hour|capex|cost_usd|_usd_per_day|usd_per_kwh)")
_SIGNED = re.compile(r"(profit|margin|delta|swing|ratio|answer_at|low_minus|change)")
_NONFINITE = re.compile(r"(?<![\w.])(-?inf|-?infinity|nan)(?![\w.])", re.IGNORECASE)


def _cost_column(name: str) -> bool:
    return bool(_COST.search(name)) and not _SIGNED.search(name)


def output_violations(stdout: str) -> list[str]:
    """What no output may hold (issue 21): a NaN or infinity, or a negative cost ($/M tokens, $/GPU-hour, capex,
    cost per day), in JSON, CSV or the table. Returns one line per violation (empty: none)."""
    bad = []
    text = stdout.strip()
    if not text:
        return bad
    try:
        data = json.loads(text, parse_constant=lambda c: float("nan"))
    except ValueError:
        data = None
    if data is not None:
        def walk(x, key=""):
            if isinstance(x, dict):
                for k, v in x.items():
                    walk(v, str(k))
            elif isinstance(x, list):
                for v in x:
                    walk(v, key)
            elif isinstance(x, float) and not math.isfinite(x):
                bad.append(f"{key}={x} in JSON")
            elif isinstance(x, (int, float)) and not isinstance(x, bool) and x < 0 and _cost_column(key):
                bad.append(f"negative cost {key}={x}")
        walk(data)
        return bad
    lines = text.splitlines()
    if "," in lines[0] and len(lines) > 1:  # CSV
        try:
            rows = list(csv.DictReader(io.StringIO(text)))
        except csv.Error:
            rows = []
        for r in rows:
            for k, v in r.items():
                if k is None or v is None:
                    continue
                if _NONFINITE.fullmatch(v.strip()):
                    bad.append(f"{k}={v} in CSV")
                elif _cost_column(k):
                    try:
                        if float(v) < 0:
                            bad.append(f"negative cost {k}={v}")
                    except ValueError:
                        pass
        if rows:
            return bad
    for m in _NONFINITE.finditer(text):  # a table: no nan/inf cell
        bad.append(f"{m.group(0)!r} in the table")
    return bad


def terminal_violations(text: str) -> list[str]:
    """Control characters (an ANSI escape) or a line over 10,000 characters on the terminal (issue 21)."""
    bad = []
    if re.search(r"[\x00-\x08\x0b\x0e-\x1f\x7f]", text):
        bad.append("a control character reached the terminal")
    if any(len(line) > 10_000 for line in text.splitlines()):
        bad.append("a line over 10,000 characters")
    return bad


# ----------------------------------------------------------------------------------------- worker

def worker(scratch: str) -> None:
    """Read JSON argv lines on stdin, run ``econ.cli.main`` for each, write one JSON result line each."""
    from econ.cli import main
    os.chdir(scratch)
    for line in sys.stdin:
        argv = json.loads(line)
        out, err = io.StringIO(), io.StringIO()
        res = {"argv": argv}
        t0 = time.perf_counter()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
            res.update(outcome="ok", code=code)
        except SystemExit as exc:
            res.update(outcome="ok", code=exc.code if isinstance(exc.code, int) else 2)
        except BaseException as exc:  # noqa: BLE001 - that is what we are hunting
            tb = traceback.extract_tb(exc.__traceback__)
            last = tb[-1] if tb else None
            res.update(outcome="traceback", error=f"{type(exc).__name__}: {str(exc)[:300]}",
                       where=f"{Path(last.filename).name}:{last.lineno} in {last.name}" if last else "",
                       frames=[f"{Path(f.filename).name}:{f.lineno}" for f in tb[-6:]])
        text = err.getvalue() + out.getvalue()
        if res["outcome"] == "ok" and "Traceback (most recent call last)" in text:
            res.update(outcome="traceback", error="a traceback was printed", where="")
        if res["outcome"] == "ok":
            bad = output_violations(out.getvalue()) + terminal_violations(text)
            if bad:
                res.update(outcome="violation", error="; ".join(bad[:3]), where="output")
        res["stderr"] = err.getvalue()[:300]
        res["seconds"] = round(time.perf_counter() - t0, 3)
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()


class Runner:
    """Runs command lines in a worker subprocess with a per-run timeout; restarts the worker when needed."""

    def __init__(self, scratch: Path, timeout_s: float, memory_limit_gb: float | None = 8.0):
        self.scratch, self.timeout_s, self.memory_limit_gb = scratch, timeout_s, memory_limit_gb
        self.proc = None
        self.runs_since_start = 0

    def _start(self):
        self.runs_since_start = 0
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   COLUMNS="120")
        limit = self.memory_limit_gb

        def pre():
            if limit:
                import resource
                b = int(limit * 2**30)
                resource.setrlimit(resource.RLIMIT_AS, (b, b))
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker", str(self.scratch)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                                     cwd=str(self.scratch), preexec_fn=pre)

    def run(self, argv: list[str]) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.proc.stdin.write(json.dumps(argv) + "\n")
        self.proc.stdin.flush()
        grace = 60.0 if self.runs_since_start == 0 else 0.0  # the first run also pays for the imports
        self.runs_since_start += 1
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout_s + grace)
        if ready:
            line = self.proc.stdout.readline()
            if line:
                return json.loads(line)
            self.proc.wait()
            return {"argv": argv, "outcome": "crash", "error": f"worker died (exit {self.proc.returncode})"}
        self.close()
        return {"argv": argv, "outcome": "timeout", "error": f"over {self.timeout_s:g} s"}

    def close(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def fuzz(runs: int, seed: int, timeout_s: float, *, budget_s: float | None = None, weights=None,
         scratch: Path | None = None, progress=None, hostile_corpus: bool = True) -> list[dict]:
    """Run the hostile corpus (:func:`corpus`, whole, whatever the budget; ``hostile_corpus=False`` leaves it out),
    then ``runs`` seeded command lines (or until ``budget_s`` seconds from the start, the first draw of every
    subcommand always made); return one result dict per run (a corpus run carries ``"corpus": True``)."""
    own = scratch is None
    tmp = tempfile.TemporaryDirectory(prefix="econ-fuzz-") if own else None
    scratch = Path(tmp.name) if own else scratch
    fixtures = Fixtures(scratch)
    gen = make_generator(fixtures, seed, weights)
    runner = Runner(scratch, timeout_s)
    results = []
    t0 = time.monotonic()
    try:
        for argv in corpus(fixtures) if hostile_corpus else []:
            res = runner.run(argv)
            res["corpus"] = True
            results.append(res)
            if progress:
                progress(len(results) - 1, res)
        every = len(list(walk()))  # the first draws visit every subcommand once: never cut by the budget
        for i in range(runs):
            if budget_s is not None and time.monotonic() - t0 > budget_s and i >= every:
                break
            res = runner.run(gen())
            results.append(res)
            if progress:
                progress(i, res)
    finally:
        runner.close()
        if tmp is not None:
            tmp.cleanup()
    return results


def command(argv: list[str]) -> str:
    """The subcommand of a command line (``"quotes check"``, ``"cost"``)."""
    nested = ("export", "fleet", "quotes", "sensitivity")
    return " ".join(argv[:2]) if argv and argv[0] in nested else (argv[0] if argv else "")


def summary(results: list[dict]) -> str:
    outcomes = Counter(r["outcome"] for r in results)
    by_cmd = Counter(command(r["argv"]) for r in results)
    lines = [f"{len(results)} runs: " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())),
             "runs per command: " + ", ".join(f"{k} {v}" for k, v in sorted(by_cmd.items()))]
    bad = [r for r in results if r["outcome"] != "ok"]
    groups = Counter((r["outcome"], r.get("where", ""), r.get("error", "")[:120]) for r in bad)
    for (outcome, where, error), n in groups.most_common():
        example = next(r["argv"] for r in bad if (r["outcome"], r.get("where", ""), r.get("error", "")[:120])
                       == (outcome, where, error))
        lines.append(f"  {n} x {outcome} {where} {error}\n      e.g. econ {' '.join(map(repr, example))}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=2000)
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per run before the worker is killed")
    p.add_argument("--report", help="write every result as JSON lines to this file")
    p.add_argument("--worker", metavar="SCRATCH", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    t0 = time.monotonic()

    def progress(i, res):
        if res["outcome"] != "ok" or (i + 1) % 100 == 0:
            print(f"[{i + 1}/{args.runs} {time.monotonic() - t0:6.0f} s] {res['outcome']} "
                  f"econ {' '.join(res['argv'])[:160]} {res.get('error', '')[:160]}", flush=True)
    results = fuzz(args.runs, args.seed, args.timeout, progress=progress)
    if args.report:
        Path(args.report).write_text("".join(json.dumps(r) + "\n" for r in results))
    print(summary(results))
    print(f"tracebacks: {sum(r['outcome'] == 'traceback' for r in results)} of {len(results)} runs "
          f"({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
