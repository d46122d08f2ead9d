"""Workload presets and the one default speed floor, shared by every CLI command and dashboard page.

Workloads
---------
Three request shapes cover most of what analysts compare, and they are the three sequence-length
sweeps of SemiAnalysis InferenceX (formerly InferenceMAX), the public cost-vs-interactivity benchmark
analysts already read: 1k/1k, 1k/8k and 8k/1k input/output tokens (workflows ``1k1k-sweep.yml``,
``1k8k-sweep.yml`` and ``8k1k-sweep.yml`` of github.com/SemiAnalysisAI/InferenceX; "1k" = 1,024
tokens). The names follow issue 11 and the common reading of those shapes:

- ``chat``: 1,024 in / 1,024 out (a conversational turn; decode and prefill both matter);
- ``reasoning``: 1,024 in / 8,192 out (a long chain of thought: decode-bound, the KV cache grows to 9k);
- ``summarization``: 8,192 in / 1,024 out (a long document in, a short answer out: prefill-heavy);
- ``custom``: whatever input and output lengths the user sets.

Speed floor
-----------
:data:`DEFAULT_MIN_TOKENS_PER_S_PER_USER` is the one default interactivity floor (output tokens/s
per user) of every command and page that needs one: ``econ cost`` (the automatic batch),
``econ optimize`` and ``econ frontier`` (the SLO), ``econ cluster`` and ``econ fleet size``
(serving), ``econ compare``, the dashboard's scenario, and the quote checker's floor for quotes
that publish no speed (``econ quotes check``, :func:`econ.analyses.quotes.check_quotes`; a test keeps every
default equal to it).

:data:`INTERACTIVITY_LEVELS` are the default interactivity levels at which the cost-vs-interactivity
tables read the frontier (issue 11: "$ per M tokens at 20 / 50 / 100 tok/s per user").
"""

from __future__ import annotations

from dataclasses import dataclass

from econ.errors import InvalidInputError


@dataclass(frozen=True, slots=True)
class WorkloadPreset:
    """A named request shape.

    Attributes
    ----------
    name : str
        ``chat``, ``reasoning`` or ``summarization``.
    input_len, output_len : int
        Prompt and generated tokens per request. [tokens]
    label : str
        Short human label ("Chat (1k in / 1k out)").
    description : str
        What the shape stands for and why it matters to the cost.
    """

    name: str
    input_len: int
    output_len: int
    label: str
    description: str


WORKLOAD_SOURCE = ("SemiAnalysis InferenceX sequence-length sweeps 1k/1k, 1k/8k and 8k/1k "
                   "(github.com/SemiAnalysisAI/InferenceX, .github/workflows/1k1k-sweep.yml, 1k8k-sweep.yml, "
                   "8k1k-sweep.yml); names as in issue 11")
"""Where the preset lengths come from."""

WORKLOADS: dict[str, WorkloadPreset] = {
    "chat": WorkloadPreset("chat", 1024, 1024, "Chat (1k in / 1k out)",
                           "A conversational turn: 1,024 prompt and 1,024 generated tokens (InferenceX 1k/1k)."),
    "reasoning": WorkloadPreset("reasoning", 1024, 8192, "Reasoning (1k in / 8k out)",
                                "A long chain of thought: 1,024 prompt and 8,192 generated tokens (InferenceX "
                                "1k/8k); decode-bound, the KV cache grows to 9,216 tokens per sequence."),
    "summarization": WorkloadPreset("summarization", 8192, 1024, "Summarization (8k in / 1k out)",
                                    "A long document in, a short answer out: 8,192 prompt and 1,024 generated "
                                    "tokens (InferenceX 8k/1k); prefill-heavy."),
}
"""The named presets, in display order."""

CUSTOM = "custom"
"""The workload name when the lengths match no preset."""

WORKLOAD_CHOICES: tuple[str, ...] = (*WORKLOADS, CUSTOM)
"""Every workload name a scenario or ``--workload`` accepts."""

DEFAULT_WORKLOAD = "chat"
"""The workload of the default scenario (1,024 / 1,024, the lengths every command defaulted to before)."""

DEFAULT_INPUT_LEN: int = WORKLOADS[DEFAULT_WORKLOAD].input_len
DEFAULT_OUTPUT_LEN: int = WORKLOADS[DEFAULT_WORKLOAD].output_len
"""The request lengths every function defaults to: the default workload's (one home; econ.vocabulary reads them). [tokens]"""

DEFAULT_MIN_TOKENS_PER_S_PER_USER = 25.0
"""The one default interactivity floor: output tokens/s per user. [tokens/s]

MLPerf Inference v5.0's interactive LLM scenario bounds the time per output token at 40 ms, i.e.
25 tokens/s per user (with TTFT <= 450 ms), 5x tighter than the v4.0 server scenario's 200 ms
(MLCommons, "LLM inference v5.0", https://mlcommons.org/2025/04/llm-inference-v5, 2025-04). It is
the public benchmark's own line between batch and interactive serving, two to five times human
reading speed (~5-10 tokens/s), and the slowest speed a chat product ships at; a deployment at 3
tokens/s per user (what a search without a floor picks: the largest batch that fits) is an offline
job, not a service. Every command and page applies it unless told otherwise (``--min-tokens-per-s-per-user 0``
removes it)."""

INTERACTIVITY_LEVELS: tuple[float, ...] = (20.0, 50.0, 100.0)
"""Default interactivity levels of the cost-vs-interactivity tables, output tokens/s per user (issue 11). [tokens/s]"""


def workload(name: str) -> WorkloadPreset:
    """The preset called ``name``.

    Raises
    ------
    InvalidInputError
        ``name`` is not a preset (``custom`` has no lengths of its own).
    """
    try:
        return WORKLOADS[name]
    except KeyError:
        raise InvalidInputError(f"workload={name!r} is not one of {list(WORKLOADS)}") from None


def workload_of(input_len: int, output_len: int) -> str:
    """The preset whose lengths are exactly ``input_len`` / ``output_len``, else :data:`CUSTOM`."""
    for name, w in WORKLOADS.items():
        if w.input_len == int(input_len) and w.output_len == int(output_len):
            return name
    return CUSTOM


def lengths(name: str | None, input_len: int | None = None, output_len: int | None = None) -> tuple[int, int]:
    """(input_len, output_len) of a workload, explicit lengths winning over the preset's.

    Parameters
    ----------
    name : str or None
        A preset name, ``custom`` or None (both mean: the explicit lengths, else the default workload's).
    input_len, output_len : int, optional
        Explicit lengths (a flag or a form); each one given replaces the preset's. [tokens]

    Returns
    -------
    (int, int) [tokens]

    Raises
    ------
    InvalidInputError
        An unknown workload name.
    """
    if name is not None and name != CUSTOM and name not in WORKLOADS:
        raise InvalidInputError(f"workload={name!r} is not one of {list(WORKLOAD_CHOICES)}")
    base = WORKLOADS[name if name in WORKLOADS else DEFAULT_WORKLOAD]
    return (base.input_len if input_len is None else int(input_len),
            base.output_len if output_len is None else int(output_len))


__all__ = ["WorkloadPreset", "WORKLOADS", "WORKLOAD_CHOICES", "WORKLOAD_SOURCE", "CUSTOM", "DEFAULT_WORKLOAD",
           "DEFAULT_MIN_TOKENS_PER_S_PER_USER", "INTERACTIVITY_LEVELS", "workload", "workload_of", "lengths"]
