"""Seeded fuzz of every ``econ`` subcommand: no input may end in a Python traceback (issue 12).

Run: ``.venv/bin/python benchmarks/fuzz_cli.py --runs 2000 --seed 12 [--timeout 60] [--report FILE]``

Each run is one ``econ`` command line built from the parser itself (every subcommand and flag, found by
walking ``econ.cli.build_parser()``): a random subset of its flags, each given a valid value or one from
a pool of hostile ones (huge integers, ``1e400``, ``nan``, empty text, 300-character names, Markdown and
formula payloads, control characters, unknown ids, folders where files go, a 5,000-deep TOML, a
decompression-bomb XLSX, corrupted data folders, existing output files without ``--force``), plus now and
then an unknown flag or a missing required one.

The runs execute in a worker subprocess that calls ``econ.cli.main(argv)`` in-process (fast: the imports
happen once) with standard output and error captured; the parent gives each run ``--timeout`` seconds and
restarts the worker if it is killed, times out or dies. Outcomes:

- ``ok``: exit code 0, 2 (``econ``'s own "error: ..." line) or argparse's usage error (exit 2);
- ``traceback``: any other exception escaping ``main`` (its type, message and last frame are recorded);
- ``timeout`` / ``crash``: the worker exceeded the time limit or died (e.g. an allocation abort); these
  are bounded-work findings (issue 12 finding 1, the engine's), reported apart from tracebacks.

``tests/cli/test_fuzz_cli.py`` runs a few hundred of these in CI with the same generator.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
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
        (f / "notzip.xlsx").write_bytes(b"PK\x03\x04garbage")
        (f / "bomb.xlsx").write_bytes(_bomb_xlsx())
        for name, mutate in (("data-bad-bandwidth", lambda d: d.with_columns(
                                  pl.lit("1e-300").alias("hbm_bandwidth_tb_per_s"))),
                             ("data-blank-and-notes", None), ("data-folder-table", None),
                             ("data-nul", lambda d: d.with_columns(pl.lit("a\x00b").alias("display_name")))):
            d = f / name
            d.mkdir(exist_ok=True)
            for fname, _, _ in TABLES.values():
                (d / fname).write_bytes((DEFAULT_DATA_DIR / fname).read_bytes())
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
                                           "empty.csv", "notzip.xlsx", "bomb.xlsx", "a-folder", "missing.toml")]
        self.reads += [str(f / self.long), "", "/dev/null", "/proc/self/status"]
        self.dirs = [str(f / n) for n in ("data-bad-bandwidth", "data-blank-and-notes", "data-folder-table",
                                          "data-nul", "a-folder", "missing-dir", "existing.csv")]
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
        if opt in ("--file",):
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
         scratch: Path | None = None, progress=None) -> list[dict]:
    """Run ``runs`` seeded command lines (or until ``budget_s`` seconds); return one result dict per run."""
    own = scratch is None
    tmp = tempfile.TemporaryDirectory(prefix="econ-fuzz-") if own else None
    scratch = Path(tmp.name) if own else scratch
    fixtures = Fixtures(scratch)
    gen = make_generator(fixtures, seed, weights)
    runner = Runner(scratch, timeout_s)
    results = []
    t0 = time.monotonic()
    try:
        for i in range(runs):
            if budget_s is not None and time.monotonic() - t0 > budget_s:
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
