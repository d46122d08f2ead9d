"""`econ quotes import --litellm FILE`: LiteLLM's model_prices_and_context_window JSON -> a quotes CSV.

Known answers: per-token prices x 1e6 (LiteLLM's together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo at
1.04e-06 -> $1.04 per M, the Together row of data/quotes.csv); the cached price from
cache_read_input_token_cost; names mapped by data/model_aliases.csv (full key first, then without the
provider prefix, case-insensitive); 'Turbo' -> fp8. Bad entries are skipped with the reason, the output is
written atomically and never over an existing file without --force, and a file that is not the expected JSON
is refused with a clear error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest

from econ.tables.catalog import load_catalog
from econ.cli import main
from econ.errors import DataError
from econ.tables.litellm import import_litellm
from econ.tables.quote_files import QUOTE_SCHEMA, read_quotes

LITELLM = [Path(p) for p in (os.environ.get("LITELLM_PRICES", ""),
                             "/tmp/ll/lib/python3.11/site-packages/litellm/model_prices_and_context_window_backup.json")
           if p]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _entry(inp, out, cached=None, provider="together_ai", mode="chat", **kw):
    e = {"litellm_provider": provider, "mode": mode, "input_cost_per_token": inp, "output_cost_per_token": out, **kw}
    if cached is not None:
        e["cache_read_input_token_cost"] = cached
    return e


SAMPLE = {
    "sample_spec": {"litellm_provider": "one of ...", "input_cost_per_token": 0.0, "output_cost_per_token": 0.0},
    "together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo": _entry(1.04e-06, 1.04e-06,
                                                                   source="https://api.together.ai/v1/models"),
    "deepseek/deepseek-chat": _entry(2.7e-07, 1.1e-06, cached=7e-08, provider="deepseek"),
    "groq/llama-3.3-70b-versatile": _entry(5.9e-07, 7.9e-07, provider="groq"),
    "fireworks_ai/accounts/fireworks/models/deepseek-v3": _entry(9e-07, 9e-07, provider="fireworks_ai"),
    "openai/gpt-4o": _entry(2.5e-06, 1e-05, provider="openai"),  # not a catalog model
    "together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo": _entry(-1e-07, 1.8e-07),  # negative price
    "deepinfra/meta-llama/Llama-3.3-70B-Instruct-Turbo": _entry(1e-07, 3.2e-07, cached=5e-07,
                                                                 provider="deepinfra"),  # cached above input
    "bedrock/meta.llama3-1-70b-instruct-v1:0": _entry("0.72", 7.2e-07, provider="bedrock"),  # text, not a number
    "together_ai/embeddings/m2-bert": _entry(1e-08, 0.0, mode="embedding"),
}


@pytest.fixture()
def sample(tmp_path):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(SAMPLE))
    return path


def test_prices_per_million_cached_price_and_turbo_rule(catalog, sample):
    r = import_litellm(sample, catalog, as_of="2026-11-21")
    q = {row["provider_model_name"]: row for row in r.quotes.iter_rows(named=True)}
    t = q["meta-llama/Llama-3.3-70B-Instruct-Turbo"]
    assert (t["provider"], t["model"], t["usd_per_m_input_tokens"], t["usd_per_m_output_tokens"]) == \
        ("together", "llama-3.3-70b", 1.04, 1.04)
    assert (t["weight_format"], t["weight_format_basis"]) == ("fp8", "slug-turbo")
    assert t["as_of"] == "2026-11-21" and "https://api.together.ai/v1/models" in t["notes"]
    d = q["deepseek-chat"]
    assert (d["model"], d["usd_per_m_input_tokens"], d["usd_per_m_cached_input_tokens"], d["usd_per_m_output_tokens"]) \
        == ("deepseek-v3", 0.27, 0.07, 1.1)
    assert q["llama-3.3-70b-versatile"]["provider"] == "groq"
    assert q["accounts/fireworks/models/deepseek-v3"]["provider"] == "fireworks"
    assert r.quotes.height == 4 and r.not_chat == 1 and r.unmapped == ["openai/gpt-4o"]
    reasons = dict(r.skipped)
    assert reasons["together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo"] == \
        "input_cost_per_token=-1e-07 is outside (0, 0.01] USD per token"
    assert reasons["deepinfra/meta-llama/Llama-3.3-70B-Instruct-Turbo"].startswith(
        "cache_read_input_token_cost=5e-07 is above input_cost_per_token=1e-07")
    assert reasons["bedrock/meta.llama3-1-70b-instruct-v1:0"] == "input_cost_per_token='0.72' is not a number"


def test_cli_writes_a_quotes_csv_the_checker_reads(catalog, sample, tmp_path, capsys):
    out = tmp_path / "fresh.csv"
    assert main(["quotes", "import", "--litellm", str(sample), "-o", str(out), "--as-of", "2026-11"]) == 0
    err = capsys.readouterr().err
    assert "econ quotes import: 4 quote(s) of 2 model(s)" in err and "3 skipped" in err
    assert "skipped together_ai/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo: input_cost_per_token=-1e-07" in err
    assert "not mapped (add them to data/model_aliases.csv if they are catalog models): openai/gpt-4o" in err
    back = read_quotes(out, catalog)
    assert back.height == 4 and pl.read_csv(out, infer_schema=False).columns == list(QUOTE_SCHEMA)
    assert main(["quotes", "check", "--file", str(out), "--format", "csv", "-o", str(tmp_path / "c.csv")]) == 0
    assert pl.read_csv(tmp_path / "c.csv").height == 4


def test_never_overwrites_without_force_and_never_half_writes(sample, tmp_path, capsys):
    out = tmp_path / "fresh.csv"
    out.write_text("mine\n")
    assert main(["quotes", "import", "--litellm", str(sample), "-o", str(out)]) == 2
    assert "exists; not overwriting it (add --force to replace it)" in capsys.readouterr().err
    assert out.read_text() == "mine\n"
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    assert main(["quotes", "import", "--litellm", str(bad), "-o", str(out), "--force"]) == 2
    assert out.read_text() == "mine\n"  # a failed import leaves the old file whole
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".fresh.csv")]  # no temporary left behind
    assert main(["quotes", "import", "--litellm", str(sample), "-o", str(out), "--force"]) == 0
    assert out.read_text().startswith("quote_id,provider,model,")


@pytest.mark.parametrize("text, match", [
    pytest.param("[1, 2]", r"bad\.json: the top level is a JSON list, not an object; expected LiteLLM's "
                           r"model_prices_and_context_window JSON", id="list"),
    pytest.param('{"a": 1', r"bad\.json: not valid JSON \(Expecting .* at line 1, column \d+\)", id="truncated"),
    pytest.param('{"a": {"mode": "chat"}}', r"bad\.json: no entry has litellm_provider, input_cost_per_token and "
                                            r"output_cost_per_token", id="no-prices"),
    pytest.param("", r"bad\.json: not valid JSON", id="empty"),
])
def test_not_the_expected_json(tmp_path, capsys, text, match):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    assert main(["quotes", "import", "--litellm", str(bad)]) == 2
    assert __import__("re").search(match, capsys.readouterr().err)


def test_missing_file_and_bad_as_of(tmp_path, capsys):
    assert main(["quotes", "import", "--litellm", str(tmp_path / "nope.json")]) == 2
    assert "nope.json: file not found" in capsys.readouterr().err
    assert main(["quotes", "import", "--litellm", str(tmp_path / "nope.json"), "--as-of", "yesterday"]) == 2
    assert "--as-of='yesterday' is not a date" in capsys.readouterr().err


def test_binary_file_is_refused(catalog, tmp_path):
    f = tmp_path / "x.json"
    f.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(DataError, match=r"x\.json: not (UTF-8 text|valid JSON)"):
        import_litellm(f, catalog)


@pytest.mark.skipif(not any(p.is_file() for p in LITELLM), reason="no LiteLLM wheel JSON on this machine")
def test_the_real_litellm_table_maps_the_shipped_quotes(catalog):
    path = next(p for p in LITELLM if p.is_file())
    r = import_litellm(path, catalog)
    assert r.quotes.height > 200 and r.quotes["model"].n_unique() >= 15
    turbo = r.quotes.filter(pl.col("provider_model_name") == "meta-llama/Llama-3.3-70B-Instruct-Turbo")
    assert set(turbo["weight_format"]) == {"fp8"}
    shipped = pl.read_csv(Path(__file__).resolve().parents[2] / "data" / "quotes.csv", infer_schema=False)
    t = shipped.filter(pl.col("quote_id") == "together-llama-3.3-70b-turbo").row(0, named=True)
    mine = r.quotes.filter((pl.col("provider") == "together")
                           & (pl.col("provider_model_name") == "meta-llama/Llama-3.3-70B-Instruct-Turbo")).row(0, named=True)
    assert mine["usd_per_m_input_tokens"] == float(t["usd_per_m_input_tokens"])  # the same wheel behind quotes.csv
