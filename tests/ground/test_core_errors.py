"""Bad input: every error names the field or flag, the value and the valid range."""

import polars as pl
import pytest

from econ.tables.catalog import load_catalog
from econ.cli import main
from econ.errors import DoesNotFitError, InvalidInputError, UnknownIdError, UnsupportedPrecisionError
from econ.engine import evaluate
from econ.analyses.sweep import cost_table


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _pts(**kw):
    base = dict(model="llama-3.1-8b", hardware="h100-sxm", precision="bf16", batch_size=1)
    base.update(kw)
    return pl.DataFrame([base])


def test_unknown_ids_list_closest(catalog):
    with pytest.raises(UnknownIdError, match=r"unknown model id 'llama-3.1-8'.*closest: .*llama-3.1-8b"):
        evaluate(_pts(model="llama-3.1-8"), catalog)
    with pytest.raises(UnknownIdError, match=r"unknown hardware id 'h100'.*closest: .*h100-sxm"):
        evaluate(_pts(hardware="h100"), catalog)


@pytest.mark.parametrize("kw, pattern", [
    ({"batch_size": 0}, r"batch_size=0 is outside \[1, 1048576\] \(sequences\)"),
    ({"batch_size": -3}, r"batch_size=-3 is outside"),
    ({"context_tokens": 0}, r"context_tokens=0 is outside \[1, "),
    ({"input_len": 0}, r"input_len=0 is outside"),
    ({"pue": 0.9}, r"pue=0.9 is outside \[1, 3\]"),
    ({"usd_per_kwh": -0.1}, r"usd_per_kwh=-0.1 is outside \[0, 10\]"),
    ({"precision": "int3"}, r"precision='int3' is not one of"),
    ({"num_gpus": 3, "tp": 2, "pp": 2}, r"num_gpus=3 must equal tp x dp x pp = 2 x 1 x 2"),
    ({"num_gpus": 16, "tp": 8, "pp": 2, "model": "llama-3.1-8b", "batch_size": 0}, r"batch_size=0"),
    ({"num_gpus": 16, "tp": 16}, r"tp=16 exceeds the scale-up domain of 8 accelerators \(valid: 1-8"),
    ({"model": "deepseek-v3", "precision": "fp8", "num_gpus": 8, "tp": 1, "dp": 8, "ep": 3},
     r"ep=3 does not divide the 256 routed experts of deepseek-v3"),
    ({"model": "deepseek-v3", "precision": "fp8", "num_gpus": 8, "tp": 1, "dp": 8, "ep": 512},
     r"ep=512 does not divide the 256 routed experts"),
    ({"input_len": 100000, "output_len": 100000, "model": "llama-2-70b"},
     r"input_len \+ output_len = 200,000 tokens exceeds the maximum context of llama-2-70b \(4,096 tokens"),
])
def test_bad_values(catalog, kw, pattern):
    with pytest.raises(InvalidInputError, match=pattern):
        evaluate(_pts(**kw), catalog)


def test_fp4_on_h100_is_an_error(catalog):
    with pytest.raises(UnsupportedPrecisionError, match=r"fp4.*h100-sxm"):
        evaluate(_pts(precision="fp4"), catalog)
    # non-strict marks the row instead, for catalog-wide comparisons
    r = evaluate(_pts(precision="fp4"), catalog, strict=False).row(0, named=True)
    assert not r["feasible"] and r["infeasible_reason"] == "precision not supported by hardware"


def test_does_not_fit(catalog):
    with pytest.raises(DoesNotFitError, match=r"llama-3.1-405b bf16 needs .* GB of weights.*8 x h100-sxm hold 618 GB usable"):
        cost_table(catalog, model="llama-3.1-405b", hardware="h100-sxm", precision="bf16", num_gpus=8)


@pytest.mark.parametrize("argv, pattern", [
    (["--batch", "0"], r"--batch=0 is outside \[1, 1048576\]"),
    (["--batch", "1,x"], r"--batch='x' is not a whole number"),
    (["--context", "0"], r"--context=0 is outside \[1, "),
    (["--pue", "0.5"], r"--pue=0.5 is outside \[1, 3\]"),
    (["--usd-per-kwh", "-1"], r"--usd-per-kwh=-1 is outside \[0, 10\]"),
    (["--precision", "fp4"], r"fp4.*not supported in hardware by h100-sxm"),
    (["--region", "atlantis"], r"unknown region id 'atlantis'"),
])
def test_cli_errors(capsys, argv, pattern):
    code = main(["cost", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", *argv])
    assert code == 2
    assert __import__("re").search(pattern, capsys.readouterr().err)


def test_cli_unknown_model(capsys):
    assert main(["cost", "--model", "lama-3.1-70b", "--hardware", "h100-sxm"]) == 2
    assert "closest: llama-3.1-70b" in capsys.readouterr().err
