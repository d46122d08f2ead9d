"""Issue 19 parts 1 and 4 for quotes: ``econ quotes check`` and ``econ quotes pnl`` take the decoding flags of
``econ cost`` (the same vocabulary fields through ``econ.commands._common.add_decoding_options`` /
``decoding_from``), pass them to the floor search (:func:`econ.analyses.quotes.check_quotes`), say what was used (the
"decoding:" line) and refuse bad values naming the flag, the value and the valid range."""

from __future__ import annotations

import json

import pytest

from econ.analyses.quotes import check_quotes, decoding_notes, single_quote
from econ.assumptions import Decoding
from econ.cli import build_parser, main
from econ.errors import InvalidInputError
from econ.tables.catalog import load_catalog

DECODING_FLAGS = {"--weight-format", "--expert-format", "--kv-format", "--speculation", "--draft-tokens",
                  "--acceptance", "--draft-model"}
BASE = ["quotes", "check", "--model", "llama-3.1-8b", "--input-price", "0.02", "--output-price", "0.05", "--hardware",
        "h100-sxm"]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _json(capsys, words) -> dict:
    assert main(list(words) + ["--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    return out[0] if isinstance(out, list) else out


@pytest.mark.parametrize("words", [("quotes", "check"), ("quotes", "pnl")], ids=" ".join)
def test_quotes_commands_take_the_decoding_flags(words):
    sub = build_parser()._subparser_for(list(words))
    flags = {o for a in sub._actions for o in a.option_strings}
    assert DECODING_FLAGS <= flags, sorted(DECODING_FLAGS - flags)
    # one parser: each flag is the vocabulary field's (its choices are the field's)
    from econ.vocabulary import FIELDS, KV_PRECISIONS
    kv = next(a for a in sub._actions if "--kv-format" in a.option_strings)
    assert kv.dest == "kv_precision" and FIELDS["kv_precision"].choices == KV_PRECISIONS


def test_kv_format_reaches_the_floor_and_is_said(capsys):
    auto = _json(capsys, BASE)
    nvfp4 = _json(capsys, BASE + ["--kv-format", "nvfp4"])
    # a 0.5625-byte KV cache holds ~3.6x the sequences of bf16's: a floor at least as cheap, at a larger batch
    assert nvfp4["floor_usd_per_m_blended_tokens"] <= auto["floor_usd_per_m_blended_tokens"]
    assert nvfp4["floor_batch_size"] >= auto["floor_batch_size"]
    assert main(BASE + ["--kv-format", "nvfp4"]) == 0
    out = capsys.readouterr().out
    line = " ".join(ln for ln in out.splitlines() if ln.startswith("decoding:") or ln.startswith("  "))
    assert "decoding:" in out and "KV cache nvfp4 (set)" in line
    assert main(BASE) == 0
    assert "KV cache bf16 (follows the bf16 matmuls)" in " ".join(capsys.readouterr().out.split())


def test_speculation_set_is_the_only_variant(capsys):
    eagle = _json(capsys, BASE + ["--speed", "300", "--speculation", "eagle", "--draft-tokens", "5",
                                  "--acceptance", "0.8"])
    none = _json(capsys, BASE + ["--speed", "300", "--speculation", "none"])
    assert eagle["floor_spec_method"] == "eagle" and "5 drafted" in eagle["reason"]
    assert none["floor_spec_method"] in (None, "none")
    assert "EAGLE" not in none["reason"]


def test_weight_format_replaces_every_quote_of_a_file(capsys):
    rows = json.loads((lambda: (main(["quotes", "check", "--model", "llama-3.1-8b", "--weight-format", "fp8",
                                      "--hardware", "h100-sxm", "--format", "json"]), capsys.readouterr().out)[1])())
    assert rows and all(r["weight_format"] == "fp8" for r in rows)
    assert all(r["floor_weight_format"] in ("fp8", None) or r["floor_precision"] is None for r in rows)


def test_pnl_takes_the_kv_format(capsys):
    base = ["quotes", "pnl", "--disclosure", "deepseek-v3r1-day6"]
    a = _json(capsys, base)
    b = _json(capsys, base + ["--kv-format", "nvfp4"])
    assert a != b


@pytest.mark.parametrize("words, message", [
    (["--kv-format", "fp6"], r"--kv-format='fp6' is not one of \['bf16', 'fp8', 'int8', 'int4', 'mxfp4', 'nvfp4'\]"),
    (["--acceptance", "1.5"], r"--acceptance=1.5 is outside \[0, 0.999\]"),
    (["--acceptance", "-0.1"], r"--acceptance=-0.1 is outside \[0, 0.999\]"),
    (["--draft-tokens", "40"], r"--draft-tokens=40 is outside \[0, 16\] \(tokens\)"),
    (["--speculation", "none", "--acceptance", "0.5"], r"--acceptance=0.5 needs --speculation mtp\|eagle\|draft"),
], ids=["kv-format", "acceptance-high", "acceptance-negative", "draft-tokens", "acceptance-without-drafting"])
def test_bad_decoding_input_names_flag_value_and_range(capsys, words, message):
    import re

    for cmd in (BASE, ["quotes", "check", "--model", "llama-3.1-8b"]):  # one typed quote and a file
        assert main(cmd + words) == 2
        err = capsys.readouterr().err
        assert err.startswith("econ quotes check: error:") and re.search(message, err), err


def test_check_quotes_api_refuses_a_bad_decoding(catalog):
    q = single_quote(catalog, model="llama-3.1-8b", usd_per_m_input_tokens=0.02, usd_per_m_output_tokens=0.05)
    with pytest.raises(InvalidInputError, match="decoding="):
        check_quotes(q, catalog, hardware=["h100-sxm"], decoding={"kv_precision": "nvfp4"})
    with pytest.raises(InvalidInputError, match="kv_precision"):
        Decoding(kv_precision="fp6")


def test_decoding_notes_name_each_setting(catalog):
    q = single_quote(catalog, model="llama-3.1-8b", usd_per_m_input_tokens=0.02, usd_per_m_output_tokens=0.05)
    d = Decoding(kv_precision="int4")
    r = check_quotes(q, catalog, hardware=["h100-sxm"], decoding=d)
    notes = decoding_notes(r.summary, d, catalog)
    assert len(notes) == 1 and notes[0].startswith("decoding: weights ") and "KV cache int4 (set)" in notes[0]
    assert r.settings["decoding_kv_precision"] == "int4"
    row = next(x for x in r.settings_rows() if x["name"] == "decoding_kv_precision")
    assert row["value"] == "int4" and row["source"].startswith("set for the check (--kv-format)")


def test_slo_percentile_holds_the_quote_speed_at_that_percentile():
    """Issue 19.1: `econ quotes check --slo-percentile` judges the quote's speed at that TPOT percentile: p50 is the
    published (median) speed, so the floor equals the default check's; p99 needs a slower batch, never a cheaper
    floor on the same accelerator; the answer says the percentile; 100 is refused with the field's range."""
    import json
    import subprocess
    import sys

    base = [sys.executable, "-m", "econ.cli", "quotes", "check", "--model", "llama-3.3-70b", "--input-price", "0.6",
            "--output-price", "0.6", "--speed", "60", "--hardware", "h100-sxm", "--format", "json"]

    def floor(*extra):
        out = subprocess.run(base + list(extra), capture_output=True, text=True, check=True).stdout
        row = json.loads(out)
        row = row[0] if isinstance(row, list) else row.get("summary", row)
        row = row[0] if isinstance(row, list) else row
        return row

    mean, p50, p99 = floor(), floor("--slo-percentile", "p50"), floor("--slo-percentile", "99")
    assert p50["floor_usd_per_m_blended_tokens"] == mean["floor_usd_per_m_blended_tokens"]
    assert p99["floor_usd_per_m_blended_tokens"] >= mean["floor_usd_per_m_blended_tokens"]
    if p99["floor_layout"] == mean["floor_layout"]:  # a smaller batch on the same layout; on a wider layout (p99:
        assert p99["floor_batch_size"] <= mean["floor_batch_size"]  # TP8 at 64 against the median's TP4 at 38)
    else:  # the batch per GPU still falls
        assert p99["floor_batch_size"] / p99["floor_num_gpus"] <= mean["floor_batch_size"] / mean["floor_num_gpus"]
    assert "held at p99 TPOT" in p99["floor_assumes"] and "held at" not in mean["floor_assumes"]
    bad = subprocess.run(base + ["--slo-percentile", "100"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--slo-percentile=100 is outside [1, 99.9]" in bad.stderr
