"""Hostile files and extreme values end in a named error, never a traceback or a hang (issue 21, part 5).

Every reader is bounded and refuses what is not a regular file (``econ.tables.uploads.read_file_bytes``: the
LiteLLM JSON, CSV tables and quote files, the scenario TOML); the LiteLLM reader bounds nesting and number sizes and
refuses names that are not text; prices and margins stay finite at every magnitude inside their ranges; a data
folder missing a build-out row, or a build-out price at its own minimum, is a named error; terminal output has no
control characters and no megabyte lines. FIFOs and devices run in a subprocess with a timeout (a regression would
hang, not fail).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from econ.cli import main
from econ.errors import DataError, InvalidInputError
from econ.tables.catalog import DEFAULT_DATA_DIR, load_catalog
from econ.tables.litellm import import_litellm

ROOT = Path(__file__).resolve().parents[2]
ALIAS = "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo"


def _entry(**kw):
    return {"litellm_provider": "together_ai", "mode": "chat", "input_cost_per_token": 1e-7,
            "output_cost_per_token": 2e-7, **kw}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _econ(*argv, timeout=120):
    """``econ argv`` in a subprocess: (exit code, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "econ.cli", *argv], capture_output=True, timeout=timeout, env=env,
                       cwd=ROOT)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


# ----------------------------------------------------------------------------------------- LiteLLM JSON

@pytest.mark.parametrize("text, pattern", [
    ("[" * 100_000 + "]" * 100_000, r"nests arrays/objects 100,000 deep; at most 64"),
    ('{"%s": {"litellm_provider": "together_ai", "mode": "chat", "input_cost_per_token": 1%s, '
     '"output_cost_per_token": 2e-7}}' % (ALIAS, "0" * 400), r"input_cost_per_token=a 401-digit integer is outside"),
    ('{"%s": {"litellm_provider": "together_ai", "mode": "chat", "input_cost_per_token": 1e-7, '
     '"output_cost_per_token": 2e-7, "max_tokens": 1%s}, "x": 1%s}' % (ALIAS, "0" * 5000, "0" * 5000), None),
    ('{"%s": %s}' % (ALIAS, json.dumps(_entry(input_cost_per_token="1e999"))),
     r"input_cost_per_token='1e999' is not a number"),
])
def test_deep_or_huge_json_is_a_named_error(catalog, text, pattern):
    if pattern is None:  # a 5,000-digit integer where no price is read: read and ignored
        assert import_litellm(text.encode(), catalog).quotes.height == 1
        return
    with pytest.raises(DataError, match=pattern):
        import_litellm(text.encode(), catalog)


def test_names_that_are_not_text_are_skipped_with_the_reason(catalog):
    table = {ALIAS: _entry(),
             "together_ai/ll\ud800ama": _entry(),
             "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo-2": _entry(litellm_provider="to\ud800gether"),
             "groq/llama-3.3-70b-versatile": _entry(litellm_provider=["groq"]),
             "\x1b[31mred\x1b[0m" + "x" * 1_000_000: _entry()}
    data = json.dumps(table).encode()  # JSON escapes keep the lone surrogates as \ud800
    r = import_litellm(data, catalog)
    assert r.quotes["provider"].to_list() == ["together"]
    reasons = dict(r.skipped)
    assert "together_ai/ll\\ud800ama" in reasons and "lone surrogate" in reasons["together_ai/ll\\ud800ama"]
    assert "litellm_provider=<list of 1 item(s)> is not text" in reasons["groq/llama-3.3-70b-versatile"]
    long = next(k for k in reasons if k.startswith("\\x1b"))
    assert len(long) < 200 and "\x1b" not in long and long.endswith(",012 characters)")


def test_a_list_provider_is_never_the_provider_text(catalog):
    r = import_litellm(json.dumps({"groq/llama-3.3-70b-versatile": _entry(litellm_provider=["groq"]),
                                   ALIAS: _entry()}).encode(), catalog)
    assert "['groq']" not in r.quotes["provider"].to_list()


def test_nothing_usable_lists_the_skipped_reasons(tmp_path, capsys):
    js = tmp_path / "bad.json"
    js.write_text(json.dumps({ALIAS: _entry(input_cost_per_token=-1)}))
    assert main(["quotes", "import", "--litellm", str(js)]) == 2
    err = capsys.readouterr().err
    assert "no usable quote" in err and "input_cost_per_token=-1 is outside" in err


def test_ansi_and_megabyte_names_never_reach_the_terminal(tmp_path):
    js = tmp_path / "ansi.json"
    js.write_text(json.dumps({ALIAS: _entry(), "\x1b[31mRED\x1b[0m" + "x" * 1_000_000: _entry(litellm_provider="x"),
                              "\x1b]0;title\x07" + "y" * 300: _entry(mode="chat", litellm_provider="y")}))
    code, out, err = _econ("quotes", "import", "--litellm", str(js))
    assert code == 0, err
    assert "\x1b" not in err and "\x07" not in err and "\x1b" not in out
    assert len(err) < 5_000


@pytest.mark.parametrize("make", ["fifo", "dev-zero", "folder"])
@pytest.mark.parametrize("argv", [("quotes", "import", "--litellm", "{path}"), ("cost", "--scenario", "{path}"),
                                  ("quotes", "check", "--file", "{path}"),
                                  ("sensitivity", "quote", "--quote", "x", "--file", "{path}")])
def test_special_files_are_refused_without_blocking(tmp_path, make, argv):
    if make == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
    elif make == "dev-zero":
        path = Path("/dev/zero")
    else:
        path = tmp_path / "folder.json"
        path.mkdir()
    code, out, err = _econ(*(a.format(path=path) for a in argv), timeout=60)
    assert code == 2, err
    assert "Traceback" not in err
    assert any(w in err for w in ("pipe (FIFO)", "a device", "a folder")), err


def test_a_growing_or_mislabelled_file_is_read_bounded(tmp_path, monkeypatch):
    """The size the file system states is not trusted: /proc files state 0 bytes; the read stops at the limit."""
    from econ.tables import uploads
    big = tmp_path / "big.csv"
    big.write_bytes(b"a,b\n" + b"1,2\n" * 400_000)
    real_fstat = os.fstat

    class Lying:
        def __init__(self, st):
            self.st_mode, self.st_size = st.st_mode, 0

    monkeypatch.setattr(os, "fstat", lambda fd: Lying(real_fstat(fd)))
    with pytest.raises(DataError, match="more than 1 MB; at most 1 MB"):
        uploads.read_file_bytes(big, 1_000_000)


# ----------------------------------------------------------------------------------------- values at the range ends

@pytest.mark.parametrize("price", ["1e-20", "10000"])
def test_quote_prices_at_the_ends_of_their_range_give_finite_margins(capsys, price):
    code = main(["quotes", "check", "--model", "llama-3.3-70b", "--input-price", price, "--output-price", price,
                 "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    row = json.loads(out.out)
    for k, v in row.items():
        if isinstance(v, float):
            assert math.isfinite(v), (k, v)
    assert "reason" in row and "e+" not in row["reason"]


def test_a_missing_buildout_row_is_named(tmp_path, capsys):
    df = pl.read_csv(DEFAULT_DATA_DIR / "buildout_capex.csv", infer_schema=False)
    df.filter(pl.col("id") != "network-switch-radix").write_csv(tmp_path / "buildout_capex.csv")
    assert main(["fleet", "capex", "--hardware", "h100-sxm", "--gpus", "1024", "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "buildout_capex.csv: no row 'network-switch-radix'" in err


def test_a_buildout_price_at_its_minimum_is_refused_by_its_range(catalog, capsys):
    from econ.economics.buildout import buildout_prices
    with pytest.raises(InvalidInputError, match=r"accelerator_usd_per_gpu=0 is outside \(0, 10000000\] \(USD\)"):
        buildout_prices(catalog, "h100-sxm", basis="itemized", accelerator_usd_per_gpu=0.0)
    assert main(["fleet", "capex", "--hardware", "h100-sxm", "--gpus", "64", "--accelerator-usd", "0"]) == 2
    err = capsys.readouterr().err
    assert "--accelerator-usd=0 is outside (0, 10000000] (USD)" in err and "neither" not in err


def test_the_cluster_page_accelerator_price_starts_above_zero_and_its_minimum_computes():
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "dashboards" / "pages" / "cluster.py"), default_timeout=180)
    at.run()
    assert not at.exception
    at.checkbox(key="fl.capex.allin.on").uncheck().run()
    acc = at.number_input(key="fl.capex.accelerator_usd_per_gpu")
    assert acc.min > 0
    acc.set_value(acc.min).run()
    assert not at.exception, [e.message for e in at.exception]
    assert not [e for e in at.error if "neither purchase_price_usd" in e.value]
