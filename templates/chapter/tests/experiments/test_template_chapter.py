"""The claim rule of chapter 00-template-chapter can pass and can fail, and its control cannot pass."""

import pandas as pd
import pytest

from medeval.experiments import template_chapter, template_chapter_claims
from medeval.experiments.template_chapter_claims import CLAIMS, ClaimInputs


def _summary(mean, low, high):
    return pd.DataFrame([{"resamples": 100, "mean_auc": mean, "low": low, "high": high}])


def _decide(summary, control=None):
    return CLAIMS.decide(ClaimInputs(summary=summary, control=_summary(0.5, 0.4, 0.6) if control is None
                                     else control), scale="smoke")


@pytest.mark.claim
def test_auc_above_chance_is_reproduced_when_the_interval_lies_above_one_half():
    (claim,) = _decide(_summary(0.8, 0.7, 0.9)).claims
    assert claim.verdict == "[Re]"


@pytest.mark.claim
@pytest.mark.parametrize(("low", "high", "verdict"), [(0.2, 0.4, "[¬Re]"), (0.45, 0.6, "[~]")])
def test_auc_above_chance_fails_when_the_interval_does_not_lie_above_one_half(low, high, verdict):
    (claim,) = _decide(_summary((low + high) / 2, low, high)).claims
    assert claim.verdict == verdict


@pytest.mark.claim
def test_the_rule_on_its_control_fails_the_check_when_it_says_re_on_permuted_labels():
    (check,) = _decide(_summary(0.8, 0.7, 0.9), control=_summary(0.8, 0.7, 0.9)).checks
    assert check.passed is False


def test_the_permuted_labels_give_a_control_at_chance():
    P = template_chapter.Params(n_samples=200, n_repeats=40, max_workers=1)
    results = template_chapter.run(P)
    inputs = template_chapter_claims.claim_inputs(results, P)
    assert inputs.summary.iloc[0]["low"] > 0.5
    assert inputs.control.iloc[0]["low"] < 0.5 < inputs.control.iloc[0]["high"]
