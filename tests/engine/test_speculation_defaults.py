"""Speculative decoding by model (issue 17.8): MTP where the vendor ships it and runs it in production, published
EAGLE-3 heads for gpt-oss and Llama, shown in every cost answer; bad speculation inputs name the field, the value and
the valid range.

Known answers (models.csv): DeepSeek-V3/R1 MTP, one drafted token, acceptance 0.85 (DeepSeek-V3 report sec. 5.4.3:
85-90%); gpt-oss-120b EAGLE-3, 3 drafted tokens, 2.41 accepted per step (huggingface.co/Dogacel/
specdrift-gpt-oss-120b-eagle3) -> a = 0.667; Llama-3.3-70B EAGLE-3 2.88 per step at 7 drafted (RedHat head, Nebius
table) -> a = 0.666, 2.41 per step at the default 3.
"""

from __future__ import annotations

import json

import polars as pl
import pytest

from econ.cli import main
from econ.engine import evaluate
from econ.engine.frame import available_speculation
from econ.errors import InvalidInputError
from econ.physics.performance import accepted_tokens_per_step
from econ.tables.catalog import load_catalog

COLS = ("spec_method", "spec_draft_tokens", "spec_acceptance", "accepted_tokens_per_step", "tokens_per_s_per_user")


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _spec(catalog, **row):
    base = dict(hardware="h200-sxm", precision="fp8", batch_size=1)
    return evaluate(pl.DataFrame([base | row]), catalog, columns=COLS).row(0, named=True)


def test_mtp_is_on_by_default_where_the_vendor_runs_it(catalog):
    r = _spec(catalog, model="deepseek-r1", num_gpus=8)
    assert (r["spec_method"], r["spec_draft_tokens"], r["spec_acceptance"]) == ("mtp", 1, 0.85)
    assert r["accepted_tokens_per_step"] == pytest.approx(1.85)
    for model in ("gpt-oss-120b", "llama-3.3-70b", "glm-4.5"):  # EAGLE heads exist, no engine turns them on
        assert _spec(catalog, model=model, num_gpus=8)["spec_method"] == "none"


@pytest.mark.parametrize("model, k, a, per_step", [
    pytest.param("gpt-oss-120b", 3, 0.667, 2.41, id="gpt-oss-120b EAGLE-3: 2.41 tokens per step at 3 drafted"),
    pytest.param("llama-3.3-70b", 3, 0.666, 2.41, id="llama-3.3-70b EAGLE-3: 2.88 at 7 drafted -> 2.41 at 3"),
    pytest.param("llama-3.1-8b", 3, 0.651, 2.35, id="llama-3.1-8b EAGLE-3: 2.77 at 7 drafted -> 2.35 at 3"),
])
def test_eagle_uses_the_published_head(catalog, model, k, a, per_step):
    plain = _spec(catalog, model=model, num_gpus=8, spec_method="none")
    eagle = _spec(catalog, model=model, num_gpus=8, spec_method="eagle")
    assert (eagle["spec_method"], eagle["spec_draft_tokens"], eagle["spec_acceptance"]) == ("eagle", k, a)
    assert eagle["accepted_tokens_per_step"] == pytest.approx(per_step, abs=0.01)
    assert accepted_tokens_per_step(a, 7) == pytest.approx({0.667: 2.93, 0.666: 2.88, 0.651: 2.77}[a], abs=0.06)
    assert eagle["tokens_per_s_per_user"] > 1.3 * plain["tokens_per_s_per_user"]


def test_available_speculation_by_model(catalog):
    assert available_speculation(catalog, "deepseek-r1") == ("none", "mtp", "draft")
    assert available_speculation(catalog, "gpt-oss-120b") == ("none", "eagle", "draft")
    assert available_speculation(catalog, "mixtral-8x7b") == ("none", "draft")


def test_a_kind_the_model_has_no_head_for_is_refused(catalog):
    with pytest.raises(InvalidInputError, match=r"spec_method='mtp' is not available for llama-3.1-8b: it ships no "
                                                r"multi-token-prediction module \(valid: none, eagle, draft\)"):
        _spec(catalog, model="llama-3.1-8b", spec_method="mtp")
    with pytest.raises(InvalidInputError, match=r"spec_method='eagle' needs spec_acceptance for mixtral-8x7b: no "
                                                r"published head .*\(valid: none, draft, or give spec_acceptance in "
                                                r"\[0, 1\)\)"):
        _spec(catalog, model="mixtral-8x7b", num_gpus=2, spec_method="eagle")
    # with an acceptance of one's own, any model may run an EAGLE head
    assert _spec(catalog, model="mixtral-8x7b", num_gpus=2, spec_method="eagle",
                 spec_acceptance=0.7)["spec_method"] == "eagle"


@pytest.mark.parametrize("a", [1.0, -0.1, 1.5])
def test_acceptance_outside_zero_one_is_refused(catalog, a):
    with pytest.raises(InvalidInputError, match=rf"spec_acceptance={a:g} is outside \[0, 1\)"):
        _spec(catalog, model="deepseek-r1", num_gpus=8, spec_method="mtp", spec_acceptance=a)


def test_every_cost_answer_shows_its_speculation(capsys):
    assert main(["cost", "--model", "deepseek-r1", "--hardware", "h200-sxm", "--precision", "fp8", "--batch", "64",
                 "--format", "json"]) == 0
    row = json.loads(capsys.readouterr().out)  # one row: an object
    assert (row["spec_method"], row["spec_draft_tokens"]) == ("mtp", 1)
    assert row["accepted_tokens_per_step"] == pytest.approx(1.85)
