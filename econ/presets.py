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

Task presets (issue 22)
-----------------------
Agents and long-context products are priced per *task*, a user request that makes several LLM calls whose
prompts are mostly a cached prefix of the previous call's. Three presets carry, beside the mean request shape
of one call, the task's structure: LLM calls per task, the prefix-reuse share (cached prompt tokens / prompt
tokens), the time a cached prefix waits between calls (what its KV storage is paid for), and the published
percentiles of context and output length. Sources (research notes of 2026-11, ``/work/research/roadmap``):

- ``agentic-coding``: GitHub Copilot coding-agent traces, 2026-06-01..07 (``Azure/AzurePublicDataset``
  ``GitHubCopilotCodingAgentDataset2026.md``; 301K sessions, 1.2M user turns, 9.3M LLM calls): 7.83 calls per
  user turn, 631.4B prompt / 9.3M calls = 67,892 tokens per call, 4.91B / 9.3M = 528 output tokens per call,
  540.95B / 631.4B = 0.857 of prompt tokens served from cache. Percentiles from the SyFI Trace Atlas (UW,
  tracelab.cs.washington.edu, Claude Code sessions to 2026-06-04): cached prefix p50 126,180 / p90 467,082,
  output p50 252 / p90 1,671 (a different, heavier population: mean 153,711 prompt tokens per call).
- ``rag-long-document``: Mooncake FAST'25 synthetic trace (ShareGPT + LEval + LooGLE long-document QA,
  ``kvcache-ai/Mooncake`` ``FAST25-release/traces/synthetic_trace.jsonl``, statistics computed from the file):
  input mean 15,325 / p50 11,587 / p90 38,611, output mean 149 / p50 69 / p90 389, ideal 512-token-block prefix
  reuse 0.66 (paper Table 2; production RAG with varying retrieved chunks reuses only 0.11 as a prefix:
  xzt102.github.io chunk-level KV reuse study, 2026). One call per task (no public trace gives turns: assumption).
- ``deep-research``: Kimi-Researcher (moonshotai.github.io/Kimi-Researcher, 2025-06-20): 23 reasoning steps per
  task, contexts of "hundreds of thousands of tokens". No public trace gives per-call lengths, so the shape is an
  ASSUMPTION built on those two facts: a context growing linearly to ~200K tokens over 23 calls has a mean of
  100,000 tokens and appends 200K / 23 = 8.7K new tokens per call, hence a prefix reuse of 1 - 8.7/100 = 0.91;
  1,024 output tokens per call (a reasoning step plus a tool call; the final report of >10,000 words, ~13K tokens,
  amortized over 23 calls is ~600). The weakest of the three: read its $/task as an order of magnitude.

Time between calls (``reuse_interval_s``): the SyFI eviction simulation keeps 85.4% of agentic prompt tokens as
hits with a 1-minute time-out (94% at 5 min), so most reuses of a coding agent's prefix come within a minute: 60 s
for the two agent presets; 300 s (Anthropic's default prompt-cache lifetime, 5 minutes) for RAG, where a document is
asked about again by a later user request.

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

import math

from econ.errors import InvalidInputError

CALLS_PER_TASK_RANGE: tuple[float, float] = (1.0, 1e5)
"""Valid LLM calls per task (a task has at least one call; You.com's research harness caps at 1,000 turns). [calls]"""

REUSE_INTERVAL_RANGE_S: tuple[float, float] = (0.0, 30 * 86400.0)
"""Valid time a cached prefix waits for its next use (0 .. 30 days; providers sell storage by the hour). [s]"""


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
    calls_per_task : float >= 1
        LLM calls (turns) per task; 1 for a single request. [calls]
    prefix_reuse_frac : float in [0, 1]
        Share of each call's prompt tokens that are a prefix already computed by an earlier call (served from a
        prefix cache when the KV is kept). [-]
    reuse_interval_s : float >= 0
        Time a cached prefix waits for its next use: what its KV storage is paid for. [s]
    context_p50, context_p90, output_p50, output_p90 : int or None
        Published percentiles of prompt (or cached-context) and output length per call; None = not published. [tokens]
    source : str
        Where the numbers come from.

    Raises
    ------
    InvalidInputError
        ``calls_per_task`` outside [1, 1e5] (a task with no turns), ``prefix_reuse_frac`` outside [0, 1] or
        ``reuse_interval_s`` outside [0, 30 days], naming the field, the value and the range.
    """

    name: str
    input_len: int
    output_len: int
    label: str
    description: str
    calls_per_task: float = 1.0
    prefix_reuse_frac: float = 0.0
    reuse_interval_s: float = 0.0
    context_p50: int | None = None
    context_p90: int | None = None
    output_p50: int | None = None
    output_p90: int | None = None
    source: str = ""

    def __post_init__(self):
        check_task(self.calls_per_task, self.prefix_reuse_frac, self.reuse_interval_s)

    @property
    def is_task(self) -> bool:
        """True for a multi-call or prefix-reusing preset (one whose $/task differs from its $/request)."""
        return self.calls_per_task != 1.0 or self.prefix_reuse_frac > 0.0


def check_task(calls_per_task, prefix_reuse_frac, reuse_interval_s=0.0) -> None:
    """Raise InvalidInputError for a task shape outside its ranges (scalars).

    Raises
    ------
    InvalidInputError
        ``calls_per_task`` outside :data:`CALLS_PER_TASK_RANGE` (0 = a task with no turns), ``prefix_reuse_frac``
        outside [0, 1], ``reuse_interval_s`` outside :data:`REUSE_INTERVAL_RANGE_S`.
    """
    _in_range("calls_per_task", calls_per_task, *CALLS_PER_TASK_RANGE, "calls")
    _in_range("prefix_reuse_frac", prefix_reuse_frac, 0.0, 1.0)
    _in_range("reuse_interval_s", reuse_interval_s, *REUSE_INTERVAL_RANGE_S, "s")


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _in_range(name: str, value, lo: float, hi: float, unit: str = "") -> None:
    """Scalar range check without NumPy (this module is imported by ``econ --help``): the message of
    :func:`econ.validate.require_in_range`."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name}={value!r} is not a number") from None
    if not math.isfinite(v) or not lo <= v <= hi:
        raise InvalidInputError(f"{name}={_num(v) if math.isfinite(v) else v} is outside [{_num(lo)}, {_num(hi)}]"
                                + (f" ({unit})" if unit else ""))


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
    "agentic-coding": WorkloadPreset(
        "agentic-coding", 67892, 528, "Agentic coding (68k in / 528 out, 7.8 calls per task, 86% cached)",
        "A coding agent's user request: 7.83 LLM calls of 67,892 prompt tokens (85.7% a cached prefix) and 528 "
        "output tokens each (GitHub Copilot coding-agent traces, 2026-06).",
        calls_per_task=7.83, prefix_reuse_frac=0.857, reuse_interval_s=60.0, context_p50=126180,
        context_p90=467082, output_p50=252, output_p90=1671,
        source="Azure/AzurePublicDataset GitHubCopilotCodingAgentDataset2026.md (2026-06-01..07: 631.4B prompt, "
               "540.95B cached, 4.91B output tokens over 9.3M calls and 1.2M user turns); percentiles: SyFI Trace "
               "Atlas, tracelab.cs.washington.edu (Claude Code, cached prefix and output per call, to 2026-06-04); "
               "reuse interval: SyFI eviction simulation (85.4% hits at a 1-minute time-out)"),
    "rag-long-document": WorkloadPreset(
        "rag-long-document", 15325, 149, "RAG / long document (15k in / 149 out, 66% reusable prefix)",
        "A question over a long document or retrieved context: 15,325 prompt and 149 output tokens, 66% of the "
        "prompt a prefix seen before (Mooncake FAST'25 LEval/LooGLE/ShareGPT trace).",
        calls_per_task=1.0, prefix_reuse_frac=0.66, reuse_interval_s=300.0, context_p50=11587, context_p90=38611,
        output_p50=69, output_p90=389,
        source="kvcache-ai/Mooncake FAST25-release/traces/synthetic_trace.jsonl (statistics computed from the file) "
               "and paper Table 2 (cache ratio 0.66, ideal); one call per task and the 300 s reuse interval "
               "(Anthropic's default 5-minute prompt-cache lifetime) are assumptions"),
    "deep-research": WorkloadPreset(
        "deep-research", 100000, 1024, "Deep research (100k in / 1k out, 23 calls per task, 91% cached; assumed)",
        "A research agent's task: 23 calls (Kimi-Researcher's mean steps) over a context growing to ~200K tokens "
        "(mean 100,000, 91% a cached prefix), 1,024 output tokens per call. Shape assumed: no public trace.",
        calls_per_task=23.0, prefix_reuse_frac=0.91, reuse_interval_s=60.0,
        source="moonshotai.github.io/Kimi-Researcher (2025-06-20: 23 reasoning steps per task, contexts of "
               "hundreds of thousands of tokens); lengths, reuse and interval derived from a linear context growth "
               "to ~200K tokens (assumption, econ.presets docstring)"),
}
"""The named presets, in display order (the three InferenceX request shapes, then the task presets)."""

TASK_WORKLOADS: tuple[str, ...] = tuple(k for k, w in WORKLOADS.items() if w.is_task)
"""The presets with a task structure (several calls or a reused prefix): ``econ cost`` adds $/task for these."""

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


__all__ = ["WorkloadPreset", "WORKLOADS", "TASK_WORKLOADS", "check_task", "CALLS_PER_TASK_RANGE",
           "REUSE_INTERVAL_RANGE_S", "WORKLOAD_CHOICES", "WORKLOAD_SOURCE", "CUSTOM", "DEFAULT_WORKLOAD",
           "DEFAULT_MIN_TOKENS_PER_S_PER_USER", "INTERACTIVITY_LEVELS", "workload", "workload_of", "lengths"]
