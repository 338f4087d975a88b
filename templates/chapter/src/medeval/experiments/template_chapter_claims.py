"""The claims of chapter 00-template-chapter, each decided by a rule that can fail (:mod:`medeval.core.chapter`).

Scaffold: one claim, decided by :func:`medeval.core.claims.decide_bound` on the percentile interval of the
ROC-AUC, and its control: the same rule on the resamples with the labels permuted, which must not return [Re]
(a check row). Replace both with the paper's claims, one registry entry each.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from medeval.core.chapter import ClaimRegistry
from medeval.core.claims import ClaimList, Decision, decide_bound
from medeval.experiments.template_chapter import Results


@dataclass
class ClaimInputs:
    """What the claims are decided from: ``summary`` and ``control``, one row each (``resamples``, ``mean_auc``,
    ``low``, ``high``: :func:`medeval.experiments.template_chapter.summarise`) for the true and the permuted
    labels."""

    summary: pd.DataFrame
    control: pd.DataFrame


def claim_inputs(results: Results, P) -> ClaimInputs:
    """The claims' inputs from the chapter's :class:`~medeval.experiments.template_chapter.Results`."""
    return ClaimInputs(summary=results.summary, control=results.control)


CLAIMS = ClaimRegistry("00-template-chapter", ClaimInputs)


def auc_above_chance(summary: pd.DataFrame) -> Decision:
    """[Re] when the whole percentile interval of the ROC-AUC lies above 0.5, [¬Re] when it lies wholly below,
    [~] when it contains 0.5 (:func:`medeval.core.claims.decide_bound`)."""
    row = summary.iloc[0]
    return decide_bound(row["mean_auc"], row["low"], row["high"], bound=0.5, direction="greater",
                        n=f"{int(row['resamples'])} bootstrap resamples", what="the ROC-AUC")


def _interval(summary: pd.DataFrame) -> str:
    row = summary.iloc[0]
    return f"{row['mean_auc']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"


@CLAIMS.claim("auc-above-chance", "The feature ranks malignant above benign cases better than chance.",
              where="scaffold (replace with the paper's section)", rules=decide_bound, inputs=("summary",),
              control="the same rule on the resamples with their labels permuted (the check below; "
                      "tests/experiments/test_template_chapter.py)")
def claim_auc_above_chance(inp: ClaimInputs) -> dict:
    return dict(paper="AUC > 0.5", rule="the percentile interval of the ROC-AUC lies above 0.5",
                ours=_interval(inp.summary), basis="real", decision=auc_above_chance(inp.summary))


@CLAIMS.checks
def rule_on_its_control(cl: ClaimList, inp: ClaimInputs) -> None:
    verdict = auc_above_chance(inp.control).verdict
    cl.check("the claim's rule on its control (the labels permuted within each resample) does not return [Re]",
             where="scaffold", expected="not [Re]", computed=f"{verdict}: {_interval(inp.control)}",
             passed=verdict != "[Re]")
