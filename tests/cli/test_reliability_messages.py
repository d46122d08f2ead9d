"""Messages that name the real source, formats that hold, writers that check first (issue 21, part 6).

- a bad provider_disclosures.csv row is named by file, row and column, never blamed on a flag the user did not type;
- ``--format json`` is JSON (and csv is CSV) on every subcommand, ``calibrate --check`` included;
- ``--as-of 0000-01-01`` is refused by the tables' own date rule;
- writers check the target before the work: ``calibrate --write`` into a folder that takes no file fails before the
  fit; ``--output ''`` is refused everywhere (never standard output, never the shipped calibration table);
- temporary files a killed writer left are removed on the next run, whether that run writes or is refused.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from econ import safe_write
from econ.cli import main
from econ.tables.catalog import DEFAULT_DATA_DIR

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_bases import BASES, leaves, tiny_measurements as write_tiny_measurements  # noqa: E402  (the cheapest command line of each subcommand)


def test_a_bad_disclosure_row_is_named_not_blamed_on_a_flag(tmp_path, capsys):
    d = pl.read_csv(DEFAULT_DATA_DIR / "provider_disclosures.csv", infer_schema=False)
    d.with_columns(pl.when(pl.col("item") == "gpu_lease_usd_per_gpu_hour").then(pl.lit("0")).otherwise(pl.col("value"))
                   .alias("value")).write_csv(tmp_path / "provider_disclosures.csv")
    assert main(["quotes", "pnl", "--disclosure", "deepseek-v3r1-day6", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert ("provider_disclosures.csv, row deepseek-v3r1-day6-gpu-lease-usd-per-gpu-hour, column value: "
            "usd_per_gpu_hour=0 is outside") in err
    assert "--usd-per-gpu-hour" not in err


def test_as_of_outside_the_calendar_rule_is_refused(tmp_path, capsys):
    js = tmp_path / "l.json"
    js.write_text(json.dumps({"together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo": {
        "litellm_provider": "together_ai", "mode": "chat", "input_cost_per_token": 1e-7,
        "output_cost_per_token": 2e-7}}))
    for bad in ("0000-01-01", "2024-02-30", "yesterday"):
        assert main(["quotes", "import", "--litellm", str(js), "--as-of", bad]) == 2
        assert "is not a date" in capsys.readouterr().err
    assert main(["quotes", "import", "--litellm", str(js), "--as-of", "2025-01-02"]) == 0


@pytest.fixture(scope="module")
def tiny_measurements(tmp_path_factory):
    return write_tiny_measurements(tmp_path_factory.mktemp("meas") / "m.csv")


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_every_subcommand_keeps_its_format(tmp_path, monkeypatch, tiny_measurements, fmt):
    """stdout of each subcommand's base command line parses as the format asked for (exit 1 of calibrate --check
    included: a drift is data too)."""
    monkeypatch.chdir(tmp_path)
    files = {"tiny_measurements": str(tiny_measurements), "litellm": "", "quote_id": "together-llama-3-1-8b"}
    for cmd, parser in leaves():
        if "--format" not in parser.option_strings() or cmd in ("quotes import", "export cost"):
            continue
        fmts = next(a.choices for a in parser._actions if "--format" in a.option_strings)
        if fmt not in fmts:
            continue
        base = [w.format(**files) if "{" in w else w for w in BASES[cmd]]
        base = [w for i, w in enumerate(base) if not (w == "--format" or (i and base[i - 1] == "--format"))]
        if cmd == "calibrate":
            base = ["--measurements", str(tiny_measurements), "--check"]
        if cmd == "sensitivity quote":
            base = ["--quote", _a_gpu_quote(), "--samples", "0"]
        out = io.StringIO()
        monkeypatch.setattr(sys, "stdout", out)
        code = main(cmd.split() + base + ["--format", fmt])
        monkeypatch.undo()
        monkeypatch.chdir(tmp_path)
        assert code in ((0, 1) if cmd == "calibrate" else (0,)), cmd
        text = out.getvalue()
        if fmt == "json":
            json.loads(text)
        else:
            rows = list(csv.reader(io.StringIO(text)))
            assert rows and len({len(r) for r in rows}) == 1, (cmd, text[:300])


def _a_gpu_quote() -> str:
    q = pl.read_csv(DEFAULT_DATA_DIR / "quotes.csv", infer_schema=False)
    return q.filter(pl.col("model") == "llama-3.1-8b")["quote_id"][0]


def test_calibrate_check_json_is_json_even_on_drift(tiny_measurements, capsys):
    code = main(["calibrate", "--measurements", str(tiny_measurements), "--check", "--format", "json"])
    out = capsys.readouterr().out
    assert code == 1
    rows = json.loads(out)
    assert rows and {"kind", "profile", "parameter", "committed", "refit", "tolerance"} <= set(rows[0])


def _no_fit(monkeypatch):
    from econ.analyses import calibration as cal

    def refuse(*a, **k):
        raise AssertionError("the fit ran before the target was checked")
    monkeypatch.setattr(cal, "fit", refuse)


def test_calibrate_write_into_a_folder_that_takes_no_file_fails_before_the_fit(tmp_path, monkeypatch, capsys):
    _no_fit(monkeypatch)
    ro = tmp_path / "ro"
    ro.mkdir()
    real_open = os.open

    def read_only(path, flags, *a, **k):  # a read-only file system (EROFS): no file can be created there
        if flags & os.O_CREAT and Path(path).parent == ro:
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *a, **k)
    monkeypatch.setattr(safe_write.os, "open", read_only)
    assert main(["calibrate", "--write", "--output", str(ro / "cal.csv")]) == 2
    assert "the file system is read-only" in capsys.readouterr().err
    assert main(["calibrate", "--write", "--output", str(tmp_path / "missing" / "cal.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def _output_commands():
    for cmd, parser in leaves():
        if "--output" in parser.option_strings():
            yield cmd


@pytest.mark.parametrize("cmd", list(_output_commands()))
def test_an_empty_output_name_is_refused(cmd, capsys):
    shipped = (DEFAULT_DATA_DIR / "calibration.csv").read_bytes()
    extra = {"calibrate": ["--write"], "quotes import": ["--litellm", "x.json"]}.get(cmd, [])
    with pytest.raises(SystemExit) as exc:
        main(cmd.split() + extra + ["--output", ""])
    assert exc.value.code == 2
    cap = capsys.readouterr()
    assert "--output needs a file or folder name" in cap.err and cap.out == ""
    assert (DEFAULT_DATA_DIR / "calibration.csv").read_bytes() == shipped


_KILLED = """
import os, sys, time
from econ import safe_write
def fsync(fd):
    print("fsync", flush=True)
    time.sleep(60)
safe_write.os.fsync = fsync
safe_write.write_bytes(b"N" * 4096, sys.argv[1], force=True)
"""


def _killed_writer(target: Path) -> int:
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, str(target)], stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.stdout.readline().strip() == "fsync"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return proc.pid


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_a_killed_writers_temp_file_goes_on_the_next_run_even_a_refused_one(tmp_path, capsys):
    target = tmp_path / "out.csv"
    target.write_bytes(b"previous")
    _killed_writer(target)
    assert len(_temps(tmp_path)) == 1
    # the next run is refused (the file exists, no --force): the dead writer's file still goes
    assert main(["quotes", "import", "--litellm", str(tmp_path / "none.json"), "--output", str(target)]) == 2
    assert _temps(tmp_path) == []
    capsys.readouterr()


def test_a_killed_writers_temp_file_goes_when_another_file_is_written_beside_it(tmp_path):
    _killed_writer(tmp_path / "a.xlsx")
    assert len(_temps(tmp_path)) == 1
    safe_write.write_bytes(b"x", tmp_path / "b.csv")
    assert _temps(tmp_path) == []
