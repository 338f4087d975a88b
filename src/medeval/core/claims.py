"""Claims, checks and errata: how every chapter decides whether a paper's claim is reproduced.

A **claim** is a sentence of a paper that our experiments can support or contradict. It is decided by a
*rule*: a statistic, a test with its level α (or a tolerance), and n. Every rule returns a :class:`Decision`
with one of four verdicts:

``[Re]``
    reproduced: the test rejects "no effect" in the paper's direction at level α, an equivalence test puts
    the whole confidence interval inside the stated margin, or an exact recomputation lies within its tolerance;
``[¬Re]``
    contradicted: the test rejects in the opposite direction, the interval lies wholly outside the margin, or
    an exact recomputation misses its tolerance;
``[~]``
    inconclusive at this scale: the test cannot decide. The row says which way the estimate leans ("leans
    towards the claim", "leans against the claim", or "no effect seen" when it is negligible) and the n that
    would detect a stated effect (the rule's smallest effect of interest, never the observed one) at power 0.8;
``[n/a]``
    not testable here (the row says why: data absent, models below the quality floor, ...).

The sign of a noisy difference never decides, a tie never supports a directional claim, and "no significant
difference" is never support for a claim of an effect. A **check** is an identity of a formula (computed,
pass/fail); an **erratum** is arithmetic on numbers printed in a paper. Neither is a claim, and neither counts
in the scorecard's verdict totals.

The statistics are the standard ones (Welch 1947; Schuirmann 1987 for the two one-sided tests of
equivalence; Fisher's exact test; Kendall's and Spearman's rank correlations with their exact or asymptotic
p-values as computed by :mod:`scipy.stats`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np
from scipy import special, stats
from scipy.special import _ufuncs as special_ufuncs  # _nct_sf: what scipy.stats.nct.sf evaluates

VERDICTS = ("[Re]", "[¬Re]", "[~]", "[n/a]")
BASES = ("exact", "real", "phantom")
BASIS_HELP = {
    "exact": "a paper table or example recomputed from shipped data",
    "real": "real data",
    "phantom": "synthetic data with known ground truth",
}
DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
_DIRECTIONS = ("greater", "less")
#: The columns of a chapter's recorded paper-versus-us table (``results["paper_vs_us"]``), in display order.
CLAIM_COLUMNS = ("id", "claim", "where", "paper", "rule", "ours", "basis", "substitution", "scale", "n", "test",
                 "effect", "verdict", "reason")
REQUIRED_CLAIM_COLUMNS = ("claim", "paper", "ours", "basis", "n", "test", "verdict", "reason")
CHECK_COLUMNS = ("check", "where", "expected", "computed", "passed", "why")
ERRATUM_COLUMNS = ("where", "printed", "recomputed", "note")


# ---------------------------------------------------------------------------------------------------------------
# Records


@dataclass(frozen=True)
class Decision:
    """What a rule returns: the verdict and the statistics that decided it.

    ``test`` names the test and its level (``"Welch t-test, one-sided, α = 0.05"``), ``effect`` the estimate with
    its confidence interval or p-value, ``n`` the sample size in words (``"4 + 4 runs"``), ``reason`` one sentence
    explaining a verdict other than [Re] (and what n would decide a [~]).
    """

    verdict: str
    test: str
    effect: str = ""
    n: str = ""
    reason: str = ""
    p_value: float | None = None
    needed_n: int | None = None
    #: the one-sided p-value against the claim, where a test gave one (what :func:`combine` corrects for parts)
    p_against: float | None = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


@dataclass(frozen=True)
class Claim:
    """One row of a chapter's paper-versus-us table.

    Parameters
    ----------
    id : short stable identifier, unique in the chapter (used as the row's anchor on the page).
    claim : the paper's claim in one sentence.
    where : where it is in the paper (section, figure, table or equation).
    paper : the paper's evidence — only numbers or words printed in the paper.
    rule : the rule in words (what must hold for [Re]).
    ours : our figure(s).
    basis : ``exact`` | ``real`` | ``phantom``.
    scale : the profile the figures come from.
    decision : the :class:`Decision` of the rule.
    substitution : what stands in for the paper's data or models, in words (``"8×8 digits for CIFAR-10"``,
        ``"real NIH boxes, simulated predictions"``); empty when the row runs on what the paper used.
    """

    id: str
    claim: str
    where: str
    paper: str
    rule: str
    ours: str
    basis: str
    scale: str
    decision: Decision
    substitution: str = ""

    def __post_init__(self):
        if self.basis not in BASES:
            raise ValueError(f"claim {self.id!r}: basis must be one of {BASES}, got {self.basis!r}")
        if not self.id or not all(c.isalnum() or c in "-_." for c in self.id):
            raise ValueError(f"claim id must be a non-empty word of letters, digits, '-', '_' or '.', got {self.id!r}")

    @property
    def verdict(self) -> str:
        return self.decision.verdict

    def row(self) -> dict:
        d = self.decision
        return {"id": self.id, "claim": self.claim, "where": self.where, "paper": self.paper, "rule": self.rule,
                "ours": self.ours, "basis": self.basis, "substitution": self.substitution,
                "scale": self.scale, "n": d.n, "test": d.test,
                "effect": d.effect, "verdict": d.verdict, "reason": d.reason}


@dataclass(frozen=True)
class Check:
    """A formula identity or implementation check. Not a claim.

    ``passed`` is tri-state: ``True`` (it holds), ``False`` (it is contradicted) or ``None`` (undecided at this
    scale: a statistical check whose rule returned [~] or [n/a], e.g. too few runs at the smoke profile; an
    undecided check is never shown as a failure, nor as a pass). :func:`check_outcome` maps a rule's verdict to it.

    ``why`` says, for a sentence of the paper shown as a check, why it cannot be a claim here: it follows from
    mathematics or from the design of the experiment, so no data of ours could contradict it (a rule that returns
    [Re] on its own control is a check).
    """

    check: str
    where: str
    expected: str
    computed: str
    passed: bool | None
    why: str = ""

    def __post_init__(self):
        if self.passed not in (True, False, None):
            raise TypeError(f"check {self.check!r}: passed must be True, False or None, not {self.passed!r}")

    @property
    def outcome(self) -> str:
        """``"pass"``, ``"FAIL"`` or ``"undecided"`` (:func:`check_outcome_label` of :attr:`passed`)."""
        return check_outcome_label(self.passed)

    def row(self) -> dict:
        return asdict(self)


def check_outcome(verdict: str) -> bool | None:
    """A statistical check's ``passed`` from its rule's verdict: [Re] holds (True), [¬Re] is contradicted (False),
    [~] and [n/a] leave it undecided at this scale (None): a check that the data cannot decide is not failed."""
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}; expected one of {', '.join(VERDICTS)}")
    return {"[Re]": True, "[¬Re]": False}.get(verdict)


def check_outcome_label(passed: bool | None) -> str:
    """How a check's tri-state ``passed`` reads in a table: ``pass``, ``FAIL`` or ``undecided``."""
    return "pass" if passed is True else ("FAIL" if passed is False else "undecided")


@dataclass(frozen=True)
class Erratum:
    """Arithmetic on numbers printed in a paper that does not add up (or a printed value we could not match)."""

    where: str
    printed: str
    recomputed: str
    note: str

    def row(self) -> dict:
        return asdict(self)


def claims_frame(claims: Iterable[Claim]):
    """The paper-versus-us table as a DataFrame with :data:`CLAIM_COLUMNS`; ids must be unique."""
    import pandas as pd

    rows = [c.row() for c in claims]
    ids = [r["id"] for r in rows]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"duplicate claim ids: {dup}")
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))


def verdict_counts(claims: Iterable[Claim | dict]) -> dict[str, int]:
    """How many rows carry each verdict (all four keys present)."""
    counts = dict.fromkeys(VERDICTS, 0)
    for c in claims:
        counts[c["verdict"] if isinstance(c, dict) else c.verdict] += 1
    return counts


# ---------------------------------------------------------------------------------------------------------------
# Formatting helpers


def _fmt(x: float, digits: int = 3) -> str:
    if x is None or not np.isfinite(x):
        return "nan"
    if x != 0 and (abs(x) < 10 ** -(digits - 1) or abs(x) >= 10**5):
        return f"{x:.{max(digits - 1, 1)}e}"
    return f"{x:.{digits}f}"


def format_p(p: float | None) -> str:
    if p is None or not np.isfinite(p):
        return "p = nan"
    return "p < 0.001" if p < 1e-3 else f"p = {p:.3f}"


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must lie in (0, 0.5), got {alpha}")


def _check_direction(direction: str) -> None:
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS}, got {direction!r}")


def _finite(values, name: str) -> np.ndarray:
    a = np.asarray(values, dtype=float).ravel()
    return a[np.isfinite(a)]


# ---------------------------------------------------------------------------------------------------------------
# Sample sizes (power 0.8 unless stated)


def _t_quantile(q: float, df: float) -> float:
    """``scipy.stats.t.ppf(q, df)``: the same special function (``stdtrit``) without the distribution object's
    argument checks, which cost ten times the function itself inside the power searches below (same bits:
    tested against scipy.stats)."""
    return float(special.stdtrit(df, q))


def _noncentral_t_sf(x: float, df: float, nc: float) -> float:
    """``scipy.stats.nct.sf(x, df, nc)``: the same Boost survival function, clipped to [0, 1] as scipy does,
    without the distribution object's argument checks (same bits: tested against scipy.stats)."""
    with np.errstate(over="ignore"):
        return float(np.clip(special_ufuncs._nct_sf(x, df, nc), 0, 1))


def _smallest_n(achieved, power: float) -> int:
    """The smallest n ≥ 2 with ``achieved(n) ≥ power`` (achieved power rises with n): doubling, then bisection;
    capped at 10⁷."""
    lo, hi = 2, 4
    while achieved(hi) < power:
        lo, hi = hi, hi * 2
        if hi > 10**7:
            return 10**7
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if achieved(mid) < power else (lo, mid)
    return hi


def two_sample_n_for_power(effect_size: float, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER) -> int | None:
    """Runs per group a one-sided two-sample t-test needs to detect a standardised difference ``effect_size``.

    Solves ``P(T > t_{1-α, 2n-2}) ≥ power`` with ``T`` non-central t of ``2n − 2`` degrees of freedom and
    non-centrality ``d·sqrt(n/2)`` (Cohen 1988, ch. 2). Returns ``None`` when the effect is 0 or not finite
    (no n decides a null effect), and caps the answer at 10⁷.
    """
    d = abs(float(effect_size))
    if not np.isfinite(d) or d == 0:
        return None
    return _smallest_n(lambda n: _noncentral_t_sf(_t_quantile(1 - alpha, 2 * n - 2), 2 * n - 2, d * math.sqrt(n / 2)),
                       power)


def one_sample_n_for_power(effect_size: float, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER) -> int | None:
    """Observations a one-sided one-sample (or paired) t-test needs for a standardised mean ``effect_size``
    (non-central t of ``n − 1`` degrees of freedom, non-centrality ``d·sqrt(n)``)."""
    d = abs(float(effect_size))
    if not np.isfinite(d) or d == 0:
        return None
    return _smallest_n(lambda n: _noncentral_t_sf(_t_quantile(1 - alpha, n - 1), n - 1, d * math.sqrt(n)), power)


def correlation_n_for_power(r: float, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER) -> int | None:
    """Pairs a one-sided test of a correlation needs to detect ``r``: ``n = ((z_{1-α} + z_{power}) / atanh r)² + 3``
    (Fisher's z approximation)."""
    r = abs(float(r))
    if not np.isfinite(r) or r == 0:
        return None
    r = min(r, 0.999)
    return int(math.ceil(((stats.norm.ppf(1 - alpha) + stats.norm.ppf(power)) / math.atanh(r)) ** 2 + 3))


#: the smallest effects of interest for which an undecided row states the n that would detect them (power 0.8):
#: a standardised mean difference (Cohen's d), a correlation, and Cohen's h for two shares. Rules that know the
#: paper's own effect pass it instead; the observed effect is never used (post-hoc power at the observed effect
#: ranges from a few to a thousand runs for the same true effect at n = 4).
SMALLEST_EFFECT_D = 0.5
SMALLEST_EFFECT_R = 0.3
SMALLEST_EFFECT_H = 0.5
#: below these the estimate is reported as "no effect seen" rather than as leaning either way
NEGLIGIBLE_D = 0.2
NEGLIGIBLE_R = 0.1


def _needed(n_needed: int | None, unit: str, effect: str = "") -> str:
    if n_needed is None:
        return "no n reaches power 0.8 for a stated effect here"
    return f"about {n_needed:,} {unit} would detect {effect} (α 0.05 one-sided, power 0.8)"


def lean(estimate: float, *, direction: str, negligible: bool) -> str:
    """How an undecided estimate leans: ``"no effect seen"`` (negligible in size), ``"leans towards the claim"``
    or ``"leans against the claim"`` (by the sign of the estimate relative to the claimed direction)."""
    if negligible or estimate == 0 or not np.isfinite(estimate):
        return "no effect seen"
    towards = estimate > 0 if direction == "greater" else estimate < 0
    return "leans towards the claim" if towards else "leans against the claim"


# ---------------------------------------------------------------------------------------------------------------
# Rules


def not_testable(why: str, *, n: str = "", test: str = "—") -> Decision:
    """[n/a] with its reason."""
    if not why:
        raise ValueError("not_testable needs a reason")
    return Decision("[n/a]", test=test, n=n, reason=why)


def below_quality_floor(quality: dict[str, float], floor: float, *, measure: str, higher_is_better: bool = True):
    """The names whose ``quality`` figure misses the chapter's floor (NaN misses it too).

    Returns ``(failed, decision)``: ``decision`` is an [n/a] ("did not train") naming each failed model with its
    figure when any failed, else ``None``. A comparison runs only when ``decision is None``.
    """
    failed = {k: v for k, v in quality.items()
              if not np.isfinite(v) or (v <= floor if higher_is_better else v >= floor)}
    if not failed:
        return [], None
    listed = ", ".join(f"{k} {_fmt(v)}" for k, v in failed.items())
    side = ">" if higher_is_better else "<"
    return list(failed), not_testable(
        f"did not train: {listed} (the floor is {measure} {side} {floor}); models below it are not compared",
        test=f"quality floor: {measure} {side} {floor}",
    )


def decide_difference(
    a: Sequence[float], b: Sequence[float], *, direction: str, alpha: float = DEFAULT_ALPHA, unit: str = "runs",
    label_a: str = "a", label_b: str = "b", effect_of_interest: float = SMALLEST_EFFECT_D,
) -> Decision:
    """Is mean(a) > mean(b) (``direction="greater"``) or < (``"less"``)? Welch's unequal-variance t-test.

    [Re] when the one-sided p-value in the claimed direction is below α; [¬Re] when the one-sided p-value in the
    opposite direction is below α; otherwise [~], saying which way the estimate leans and the runs per group that would detect a standardised
    difference of ``effect_of_interest`` (never the observed one). Constant samples give [~] whatever their
    difference (no spread, no test: two groups at a ceiling differ by a sign, not by evidence); fewer than two
    finite values per group give [~] too.
    """
    _check_direction(direction)
    _check_alpha(alpha)
    x, y = _finite(a, label_a), _finite(b, label_b)
    n = f"{len(x)} + {len(y)} {unit}"
    test = f"Welch t-test, one-sided, α = {alpha}"
    if len(x) < 2 or len(y) < 2:
        return Decision("[~]", test, n=n, reason=f"needs at least 2 {unit} per group, has {len(x)} and {len(y)}")
    diff = float(x.mean() - y.mean())
    sx, sy = x.var(ddof=1), y.var(ddof=1)
    if sx == 0 and sy == 0:
        if diff == 0:
            return Decision("[~]", test, effect="Δ = 0 (tie)", n=n,
                            reason=f"{label_a} and {label_b} are identical constants: a tie supports no direction")
        # zero variance, different constants (a ceiling, a collapsed model): no test, so no direction
        return Decision("[~]", test, effect=f"Δ = {_fmt(diff)} (no spread)", n=n,
                        reason=f"{label_a} and {label_b} are constants ({lean(diff, direction=direction, negligible=False)}); "
                               "with no spread there is no test, and the sign of a difference decides nothing")
    se = math.sqrt(sx / len(x) + sy / len(y))
    t = diff / se
    df = (sx / len(x) + sy / len(y)) ** 2 / (
        (sx / len(x)) ** 2 / (len(x) - 1) + (sy / len(y)) ** 2 / (len(y) - 1))
    p_greater = float(stats.t.sf(t, df))
    p_claim = p_greater if direction == "greater" else 1 - p_greater
    p_against = 1 - p_claim
    half = float(stats.t.ppf(1 - alpha, df)) * se  # one-sided (1-2α) two-sided interval
    effect = f"Δ = {_fmt(diff)} [{_fmt(diff - half)}, {_fmt(diff + half)}], {format_p(p_claim)}"
    if p_claim < alpha:
        return Decision("[Re]", test, effect, n, p_value=p_claim, p_against=p_against)
    if p_against < alpha:
        return Decision("[¬Re]", test, effect, n, p_value=p_claim, p_against=p_against,
                        reason=f"the difference is significant against the claim ({format_p(p_against)})")
    pooled = math.sqrt((sx + sy) / 2)
    d_obs = diff / pooled if pooled > 0 else 0.0
    need = two_sample_n_for_power(effect_of_interest, alpha)
    return Decision("[~]", test, effect, n, p_value=p_claim, needed_n=need, p_against=p_against,
                    reason=f"{lean(diff, direction=direction, negligible=abs(d_obs) < NEGLIGIBLE_D)} (d = "
                           f"{_fmt(d_obs, 2)}), not significant at α = {alpha}; "
                           + _needed(need, f"{unit} per group", f"d = {_fmt(effect_of_interest, 2)}"))


def decide_paired(
    differences: Sequence[float], *, direction: str, alpha: float = DEFAULT_ALPHA, unit: str = "pairs",
    effect_of_interest: float = SMALLEST_EFFECT_D,
) -> Decision:
    r"""Is the mean of paired differences > 0 (``"greater"``) or < 0 (``"less"``)? One-sample t-test on them.

    .. math::

       T = \frac{\bar d}{s_d / \sqrt{n}}

    with :math:`\bar d`, :math:`s_d` and :math:`n` the mean, standard deviation and number of the differences
    (:math:`n - 1` degrees of freedom).

    Same verdict logic as :func:`decide_difference`; differences with no spread (all zero, or all equal) give
    [~]: no test, so no direction.
    """
    _check_direction(direction)
    _check_alpha(alpha)
    d = _finite(differences, "differences")
    n = f"{len(d)} {unit}"
    test = f"paired t-test, one-sided, α = {alpha}"
    if len(d) < 2:
        return Decision("[~]", test, n=n, reason=f"needs at least 2 {unit}, has {len(d)}")
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0:
        if mean == 0:
            return Decision("[~]", test, effect="Δ = 0 (tie)", n=n, reason="every difference is 0: a tie supports no direction")
        return Decision("[~]", test, effect=f"Δ = {_fmt(mean)} (no spread)", n=n,
                        reason=f"every difference is {_fmt(mean)} ({lean(mean, direction=direction, negligible=False)}); "
                               "with no spread there is no test, and the sign of a difference decides nothing")
    se = sd / math.sqrt(len(d))
    t = mean / se
    df = len(d) - 1
    p_greater = float(stats.t.sf(t, df))
    p_claim = p_greater if direction == "greater" else 1 - p_greater
    half = float(stats.t.ppf(1 - alpha, df)) * se
    effect = f"Δ = {_fmt(mean)} [{_fmt(mean - half)}, {_fmt(mean + half)}], {format_p(p_claim)}"
    if p_claim < alpha:
        return Decision("[Re]", test, effect, n, p_value=p_claim, p_against=1 - p_claim)
    if 1 - p_claim < alpha:
        return Decision("[¬Re]", test, effect, n, p_value=p_claim, p_against=1 - p_claim,
                        reason=f"the differences are significant against the claim ({format_p(1 - p_claim)})")
    need = one_sample_n_for_power(effect_of_interest, alpha)
    return Decision("[~]", test, effect, n, p_value=p_claim, needed_n=need, p_against=1 - p_claim,
                    reason=f"{lean(mean, direction=direction, negligible=abs(mean / sd) < NEGLIGIBLE_D)} (d = "
                           f"{_fmt(mean / sd, 2)}), not significant at α = {alpha}; "
                           + _needed(need, unit, f"d = {_fmt(effect_of_interest, 2)}"))


def decide_trend(
    x: Sequence[float], y: Sequence[float], *, direction: str, alpha: float = DEFAULT_ALPHA,
    method: str = "kendall", unit: str = "points", effect_of_interest: float = SMALLEST_EFFECT_R,
) -> Decision:
    """Does ``y`` rise (``"greater"``) or fall (``"less"``) with ``x``? Kendall's τ (default) or Spearman's ρ.

    [Re] when the one-sided p-value in the claimed direction is below α, [¬Re] when the one in the opposite
    direction is, else [~] with the way it leans and the points that would detect a (Pearson) correlation of
    ``effect_of_interest``.
    """
    _check_direction(direction)
    _check_alpha(alpha)
    if method not in ("kendall", "spearman"):
        raise ValueError(f"method must be 'kendall' or 'spearman', got {method!r}")
    xa, ya = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same length, got {xa.shape} and {ya.shape}")
    keep = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[keep], ya[keep]
    symbol = "τ" if method == "kendall" else "ρ"
    n = f"{len(xa)} {unit}"
    test = f"{'Kendall' if method == 'kendall' else 'Spearman'} {symbol}, one-sided, α = {alpha}"
    if len(xa) < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return Decision("[~]", test, n=n, reason=f"needs at least 3 {unit} with spread in both variables")
    fn = stats.kendalltau if method == "kendall" else stats.spearmanr
    r = float(fn(xa, ya)[0])
    p_greater = float(fn(xa, ya, alternative="greater")[1])
    p_claim = p_greater if direction == "greater" else float(fn(xa, ya, alternative="less")[1])
    p_against = float(fn(xa, ya, alternative="less" if direction == "greater" else "greater")[1])
    effect = f"{symbol} = {_fmt(r, 2)}, {format_p(p_claim)}"
    if p_claim < alpha:
        return Decision("[Re]", test, effect, n, p_value=p_claim, p_against=p_against)
    if p_against < alpha:
        return Decision("[¬Re]", test, effect, n, p_value=p_claim, p_against=p_against,
                        reason=f"the trend is significant against the claim ({format_p(p_against)})")
    # Kendall's τ ≈ (2/π) asin ρ: convert before judging its size
    r_pearson = math.sin(math.pi * r / 2) if method == "kendall" else r
    need = correlation_n_for_power(effect_of_interest, alpha)
    return Decision("[~]", test, effect, n, p_value=p_claim, needed_n=need, p_against=p_against,
                    reason=f"{lean(r, direction=direction, negligible=abs(r_pearson) < NEGLIGIBLE_R)}, not significant "
                           f"at α = {alpha}; " + _needed(need, unit, f"r = {_fmt(effect_of_interest, 2)}"))


def _kendall_s(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Kendall's S = Σ_{i<j} sign(x_j − x_i)·sign(y_j − y_i) and its variance under no association, with the
    correction for ties (Kendall 1948, Rank Correlation Methods, eq. 4.3):
    Var S = [n(n−1)(2n+5) − Σ_t t(t−1)(2t+5) − Σ_u u(u−1)(2u+5)] / 18 (t, u: sizes of tied groups in x, y)."""
    n = len(x)
    iu = np.triu_indices(n, 1)
    s = float(np.sum(np.sign(x[:, None] - x[None, :])[iu] * np.sign(y[:, None] - y[None, :])[iu]))

    def ties(v):
        _, counts = np.unique(v, return_counts=True)
        return float(np.sum(counts * (counts - 1) * (2 * counts + 5)))

    var = (n * (n - 1) * (2 * n + 5) - ties(x) - ties(y)) / 18
    return s, var  # sign(x_i − x_j)·sign(y_i − y_j) = sign(x_j − x_i)·sign(y_j − y_i)


def decide_blocked_trend(
    x: Sequence[float], y: Sequence[float], blocks: Sequence, *, direction: str, alpha: float = DEFAULT_ALPHA,
    unit: str = "points", block_unit: str = "runs", effect_of_interest: float = SMALLEST_EFFECT_R,
) -> Decision:
    r"""Does ``y`` rise (``"greater"``) or fall (``"less"``) with ``x`` within every block? The stratified (blocked)
    Mann–Kendall test (Hirsch, Slack & Smith 1982, Water Resources Research 18(1), eq. 6–7): Kendall's S is
    computed within each block b (a run, so that a run's level does not pass for a trend), and

    .. math:: Z = \frac{S - \operatorname{sgn}(S)}{\sqrt{\sum_b \operatorname{Var} S_b}}, \qquad S = \sum_b S_b,

    with the continuity correction, is referred to the standard normal, one-sided. The effect is the pooled
    :math:`\tau = S / \sum_b n_b(n_b - 1)/2`. [Re] when the p-value in the claimed direction is below α, [¬Re]
    when the one in the opposite direction is, else [~] with the way it leans."""
    _check_direction(direction)
    _check_alpha(alpha)
    xa, ya = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    ba = np.asarray(blocks, dtype=object).ravel()
    if not xa.shape == ya.shape == ba.shape:
        raise ValueError(f"x, y and blocks must have the same length, got {xa.shape}, {ya.shape} and {ba.shape}")
    keep = np.isfinite(xa) & np.isfinite(ya)
    xa, ya, ba = xa[keep], ya[keep], ba[keep]
    test = f"stratified Mann–Kendall (blocked by {block_unit}), one-sided, α = {alpha}"
    s_total, var_total, pairs, used = 0.0, 0.0, 0, 0
    for b in dict.fromkeys(ba.tolist()):
        m = ba == b
        if m.sum() < 2:
            continue
        s_b, var_b = _kendall_s(xa[m], ya[m])
        s_total += s_b
        var_total += var_b
        pairs += int(m.sum() * (m.sum() - 1) // 2)
        used += 1
    n = f"{int(keep.sum())} {unit} in {used} {block_unit}"
    if var_total <= 0:
        return Decision("[~]", test, n=n, reason=f"needs at least one of the {block_unit} with spread in both variables")
    z = (s_total - np.sign(s_total)) / math.sqrt(var_total)
    p_greater, p_less = float(stats.norm.sf(z)), float(stats.norm.cdf(z))
    p_claim, p_against = (p_greater, p_less) if direction == "greater" else (p_less, p_greater)
    tau = s_total / pairs if pairs else float("nan")
    effect = f"pooled τ = {_fmt(tau, 2)}, z = {_fmt(z, 2)}, {format_p(p_claim)}"
    if p_claim < alpha:
        return Decision("[Re]", test, effect, n, p_value=p_claim, p_against=p_against)
    if p_against < alpha:
        return Decision("[¬Re]", test, effect, n, p_value=p_claim, p_against=p_against,
                        reason=f"the within-{block_unit[:-1] if block_unit.endswith('s') else block_unit} trend is "
                               f"significant against the claim ({format_p(p_against)})")
    r_pearson = math.sin(math.pi * tau / 2) if np.isfinite(tau) else float("nan")
    need = correlation_n_for_power(effect_of_interest, alpha)
    return Decision("[~]", test, effect, n, p_value=p_claim, needed_n=need, p_against=p_against,
                    reason=f"{lean(tau, direction=direction, negligible=abs(r_pearson) < NEGLIGIBLE_R)}, not "
                           f"significant at α = {alpha}; " + _needed(need, unit, f"r = {_fmt(effect_of_interest, 2)}"))


def decide_proportions(
    k_a: int, n_a: int, k_b: int, n_b: int, *, direction: str, alpha: float = DEFAULT_ALPHA,
    label_a: str = "a", label_b: str = "b", unit: str = "items",
) -> Decision:
    """Is the share k_a/n_a greater (or less) than k_b/n_b? Fisher's exact test, one-sided."""
    _check_direction(direction)
    _check_alpha(alpha)
    for name, (k, n_) in {label_a: (k_a, n_a), label_b: (k_b, n_b)}.items():
        if not (0 <= k <= n_):
            raise ValueError(f"{name}: need 0 <= k <= n, got k={k}, n={n_}")
    n = f"{n_a} + {n_b} {unit}"
    test = f"Fisher exact test, one-sided, α = {alpha}"
    if n_a == 0 or n_b == 0:
        return Decision("[~]", test, n=n, reason=f"an empty group ({label_a}: {n_a}, {label_b}: {n_b})")
    pa, pb = k_a / n_a, k_b / n_b
    table = [[k_a, n_a - k_a], [k_b, n_b - k_b]]
    p_greater = float(stats.fisher_exact(table, alternative="greater")[1])
    p_less = float(stats.fisher_exact(table, alternative="less")[1])
    p_claim, p_against = (p_greater, p_less) if direction == "greater" else (p_less, p_greater)
    effect = f"{label_a} {pa:.1%} vs {label_b} {pb:.1%}, {format_p(p_claim)}"
    if p_claim < alpha:
        return Decision("[Re]", test, effect, n, p_value=p_claim, p_against=p_against)
    if p_against < alpha:
        return Decision("[¬Re]", test, effect, n, p_value=p_claim, p_against=p_against,
                        reason=f"the shares differ against the claim ({format_p(p_against)})")
    h = 2 * math.asin(math.sqrt(pa)) - 2 * math.asin(math.sqrt(pb))  # Cohen's h
    need = two_sample_n_for_power(SMALLEST_EFFECT_H, alpha)
    return Decision("[~]", test, effect, n, p_value=p_claim, needed_n=need, p_against=p_against,
                    reason=f"{lean(h, direction=direction, negligible=abs(h) < NEGLIGIBLE_D)} (h = {_fmt(h, 2)}), "
                           f"not significant at α = {alpha}; "
                           + _needed(need, f"{unit} per group", f"h = {_fmt(SMALLEST_EFFECT_H, 2)}"))


def decide_equivalence(
    estimate: float, standard_error: float, *, margin: float, df: float | None = None, alpha: float = DEFAULT_ALPHA,
    n: int | None = None, unit: str = "draws", what: str = "the difference",
) -> Decision:
    """Is ``estimate`` equivalent to 0 within ±``margin``? Two one-sided tests (Schuirmann 1987).

    With the (1 − 2α) confidence interval ``estimate ± q·SE`` (``q`` the t quantile with ``df`` degrees of
    freedom, or the normal one when ``df`` is None): [Re] when the interval lies inside (−margin, margin);
    [¬Re] when it lies wholly outside it; else [~]: it "leans towards the claim" when the estimate lies inside the
    margin and "against" it when outside, and gives the n at which TOST has power 0.8 when the true difference is
    0 (the claim's own hypothesis, a stated effect rather than the observed one): with SE ∝ 1/√n,
    n = n₀ · ((z₁₋α + z₁₋β/₂) · SE / margin)² (Chow, Shao & Wang 2008, Sample Size Calculations in Clinical
    Research, §3.2).
    """
    _check_alpha(alpha)
    if not margin > 0:
        raise ValueError(f"margin must be > 0, got {margin}")
    if not (np.isfinite(estimate) and np.isfinite(standard_error) and standard_error >= 0):
        return Decision("[~]", f"equivalence (TOST), margin ±{_fmt(margin)}, α = {alpha}",
                        n=f"{n} {unit}" if n else "", reason="the estimate or its standard error is not finite")
    q = float(stats.t.ppf(1 - alpha, df)) if df else float(stats.norm.ppf(1 - alpha))
    lo, hi = estimate - q * standard_error, estimate + q * standard_error
    test = f"equivalence (TOST), margin ±{_fmt(margin)}, α = {alpha}"
    effect = f"{what} = {_fmt(estimate)} [{_fmt(lo)}, {_fmt(hi)}]"
    n_text = f"{n:,} {unit}" if n else ""
    if -margin < lo and hi < margin:
        return Decision("[Re]", test, effect, n_text)
    if lo >= margin or hi <= -margin:
        return Decision("[¬Re]", test, effect, n_text,
                        reason=f"the whole {100 * (1 - 2 * alpha):.0f} % interval lies outside ±{_fmt(margin)}")
    need = None
    side = "leans towards the claim" if abs(estimate) < margin else "leans against the claim"
    reason = f"{side}: the estimate lies {'inside' if abs(estimate) < margin else 'outside'} ±{_fmt(margin)} but " \
             "the interval crosses it"
    if n and standard_error > 0:
        z = float(stats.norm.ppf(1 - alpha)) + float(stats.norm.ppf(1 - (1 - DEFAULT_POWER) / 2))
        need = int(math.ceil(n * (z * standard_error / margin) ** 2))
        reason += (f"; about {need:,} {unit} would show equivalence if the true difference were 0 "
                   f"(TOST, α {alpha}, power {DEFAULT_POWER})")
    return Decision("[~]", test, effect, n_text, needed_n=need, reason=reason)


def decide_bound(
    estimate: float, low: float, high: float, *, bound: float, direction: str, confidence: float = 0.95,
    n: str = "", what: str = "the estimate",
) -> Decision:
    """Does a quantity lie above (``"greater"``) or below (``"less"``) ``bound``, judged by its interval [low, high]?

    [Re] when the whole interval lies on the claimed side, [¬Re] when it lies wholly on the other side,
    [~] when it straddles the bound; its reason says on which side the estimate lies ("leans towards the claim"
    or "leans against the claim"). For exact (noise-free) figures pass ``low = high = estimate``.
    """
    _check_direction(direction)
    if not all(np.isfinite(v) for v in (estimate, low, high)):
        return Decision("[~]", f"{100 * confidence:.0f} % interval vs {_fmt(bound)}", n=n,
                        reason=f"{what} is not finite")
    if low > high:
        raise ValueError(f"interval low > high: {low} > {high}")
    sign = ">" if direction == "greater" else "<"
    test = f"{100 * confidence:.0f} % interval {sign} {_fmt(bound)}" if low < high else f"exact value {sign} {_fmt(bound)}"
    effect = f"{what} = {_fmt(estimate)}" + (f" [{_fmt(low)}, {_fmt(high)}]" if low < high else "")
    above, below = low > bound, high < bound
    claimed, against = (above, below) if direction == "greater" else (below, above)
    if claimed:
        return Decision("[Re]", test, effect, n)
    if against:
        return Decision("[¬Re]", test, effect, n, reason=f"{what} lies on the other side of {_fmt(bound)}")
    if low == high:  # exactly at the bound: a tie
        return Decision("[~]", test, effect, n, reason=f"{what} equals the bound {_fmt(bound)}")
    side = lean(estimate - bound, direction=direction, negligible=False)
    return Decision("[~]", test, effect, n, reason=f"{side}: {what} is {_fmt(estimate)}, but its interval contains "
                                                  f"{_fmt(bound)}; more data would decide it")


def decide_tolerance(computed: float, expected: float, *, tolerance: float, n: str = "", what: str = "value") -> Decision:
    """An exact recomputation: [Re] when ``|computed − expected| ≤ tolerance``, else [¬Re]. For noise-free figures only
    (a paper table recomputed from shipped data, a count); noisy figures need a test."""
    if not tolerance >= 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    test = f"|ours − paper| ≤ {_fmt(tolerance)}"
    if not (np.isfinite(computed) and np.isfinite(expected)):
        return Decision("[~]", test, n=n, reason=f"the {what} is not finite")
    err = abs(computed - expected)
    effect = f"|Δ| = {_fmt(err)}"
    if err <= tolerance:
        return Decision("[Re]", test, effect, n)
    return Decision("[¬Re]", test, effect, n, reason=f"the {what} differs by {_fmt(err)}, more than {_fmt(tolerance)}")


def decide_exact(holds: bool, *, test: str, ours: str = "", n: str = "", reason_if_not: str) -> Decision:
    """An exact (noise-free) proposition about recomputed data: [Re] when it holds, else [¬Re] with the reason.
    Use only where no sampling noise enters (a recount of a shipped table, a closed-form computation)."""
    if not reason_if_not:
        raise ValueError("decide_exact needs reason_if_not: what a failure means")
    return Decision("[Re]" if holds else "[¬Re]", test, effect=ours, n=n, reason="" if holds else reason_if_not)


def combine(decisions: Sequence[Decision], *, test: str | None = None, labels: Sequence[str] | None = None,
            alpha: float = DEFAULT_ALPHA) -> Decision:
    """A claim made of parts that must all hold (e.g. per dataset).

    [Re] if every part is [Re] (an intersection-union test: each part at α keeps the row's error at α);
    [n/a] if every part is [n/a]; [¬Re] if some part contradicts the claim at the family-wise level: a part
    decided by a test counts against the row only when its one-sided p-value against the claim passes Holm's
    step-down correction over the k tested parts (its first step is α / k; Holm 1979, *A simple sequentially
    rejective multiple test procedure*), so that k noisy parts do not give k chances of a false [¬Re]; a part
    decided without a test (an exact recomputation) counts as it is. Any other mix is [~]. The row's test says how
    many parts it combines. The result carries ``p_against = min(1, k · min p)``, so that rows combined again (per
    dataset, then across datasets) are corrected at every level.
    """
    if not decisions:
        raise ValueError("combine needs at least one decision")
    _check_alpha(alpha)
    labels = list(labels) if labels is not None else [str(i + 1) for i in range(len(decisions))]
    if len(labels) != len(decisions):
        raise ValueError("labels and decisions must have the same length")
    tested = [d.p_against for d in decisions if d.p_against is not None and np.isfinite(d.p_against)]
    k = len(tested)
    # Holm step-down on the p-values against the claim: reject the j-th smallest while p_(j) < α / (k − j)
    holm_rejected: set[int] = set()
    for rank, i in enumerate(sorted((i for i, d in enumerate(decisions) if d.p_against is not None
                                     and np.isfinite(d.p_against)), key=lambda i: decisions[i].p_against)):
        if decisions[i].p_against < alpha / (k - rank):
            holm_rejected.add(i)
        else:
            break
    effective, demoted = [], []
    for i, d in enumerate(decisions):
        if d.verdict == "[¬Re]" and d.p_against is not None and i not in holm_rejected:
            effective.append("[~]")
            demoted.append(labels[i])
        else:
            effective.append(d.verdict)
    if "[¬Re]" in effective:
        v = "[¬Re]"
    elif all(x == "[Re]" for x in effective):
        v = "[Re]"
    elif all(x == "[n/a]" for x in effective):
        v = "[n/a]"
    else:
        v = "[~]"

    def join(attr):
        parts = [f"{lab}: {getattr(d, attr)}" for lab, d in zip(labels, decisions, strict=True) if getattr(d, attr)]
        return "; ".join(parts)

    reason = "; ".join(f"{lab} {d.verdict}: {d.reason}" for lab, d in zip(labels, decisions, strict=True)
                       if d.verdict != "[Re]" and d.reason)
    if demoted:
        reason = (f"{', '.join(demoted)} against the claim at α = {alpha} but not after Holm's correction over "
                  f"{k} tested parts, so not a contradiction of the row" + (f"; {reason}" if reason else ""))
    base = test or " + ".join(dict.fromkeys(_COMBINED.sub("", d.test) for d in decisions))
    if len(decisions) > 1:
        base += f" [{len(decisions)} parts, all must hold" + (f"; Holm over {k} tests against the claim]" if k > 1
                                                               else "]")
    # the row's own p-value against the claim, so that a combined row inside another combine is corrected there
    # too: the Holm-adjusted p of its smallest part, min(1, k · p_(1)) (Bonferroni for "some part contradicts"),
    # which is below α exactly when Holm's first step rejects. None when a part contradicts without a test (an
    # exact miss stays a miss) or when no part was tested.
    exact_miss = any(d.verdict == "[¬Re]" and (d.p_against is None or not np.isfinite(d.p_against))
                     for d in decisions)
    p_against = None if exact_miss or not k else min(1.0, k * min(tested))
    return Decision(v, base, join("effect"), join("n"), reason, p_against=p_against)


def decide_per_group(groups, decide, *, if_empty: str, labels: Sequence[str] | None = None, test: str | None = None,
                     alpha: float = DEFAULT_ALPHA) -> Decision:
    """Decide each group, then :func:`combine` them: a claim that must hold in every group (per dataset, per class,
    per operator).

    ``groups`` maps a label to the group's data (a mapping, or ``(label, data)`` pairs); ``decide(data)`` returns
    the group's :class:`Decision`, or ``None`` to leave the group out (it is not part of the claim). With no group
    decided the row is [n/a] with ``if_empty`` as its reason. ``labels`` renames the groups in the combined row.
    """
    items = list(groups.items()) if hasattr(groups, "items") else list(groups)
    parts, names = [], []
    for label, data in items:
        d = decide(data)
        if d is not None:
            if not isinstance(d, Decision):
                raise TypeError(f"decide_per_group: group {label!r} returned {type(d).__name__}, not a Decision")
            parts.append(d)
            names.append(str(label))
    if labels is not None:
        if len(labels) != len(parts):
            raise ValueError(f"decide_per_group: {len(labels)} labels for {len(parts)} decided groups")
        names = list(labels)
    if not parts:
        return not_testable(if_empty)
    return combine(parts, labels=names, test=test, alpha=alpha)


#: the note :func:`combine` appends to a test (removed from parts that are themselves combined rows)
_COMBINED = re.compile(r" \[\d+ parts, all must hold(; Holm over \d+ tests against the claim)?\]")


def with_reason(decision: Decision, reason: str) -> Decision:
    """The same decision with an explanation appended (built from computed figures on the chapter page)."""
    joined = f"{decision.reason} — {reason}" if decision.reason else reason
    return replace(decision, reason=joined)


def explain(claim_list: ClaimList, seed_sensitive: Iterable[str] = ()) -> str:
    """Markdown for the chapter page's "not reproduced, and why": the mechanisms, not the statistics again (those
    are in each row of the Paper-vs-us table).

    One bullet per contradicted claim ([¬Re]: a finding) with its reason, one per untestable claim ([n/a]) with
    why, one line that names the inconclusive claims ([~]: each row says which way its estimate leans and what n
    would decide it), and one bullet per failed or undecided check. All from the computed decisions. A contradicted
    claim among ``seed_sensitive`` (ids whose verdict other master seeds do not share) is said to be contradicted at
    this seed only, not a finding."""
    sensitive = set(seed_sensitive)

    def sentence(text: str) -> str:
        text = text.strip().rstrip(".")
        return text[:1].upper() + text[1:] + "." if text else ""

    def link(c: Claim) -> str:
        return f'<a href="#claim-{c.id}">{c.id}</a>'  # the rows are HTML with id="claim-<id>"

    lines = []
    for c in claim_list.claims:
        if c.verdict == "[¬Re]":
            head = ("**Contradicted at this seed only** (seed-sensitive, not a finding)" if c.id in sensitive
                    else "**Contradicted**")
            lines.append(f"* {head}, {link(c)}: {sentence(c.claim)} "
                         f"{sentence(c.decision.reason or 'see the test in its row: ' + c.decision.test)}")
    untestable = [c for c in claim_list.claims if c.verdict == "[n/a]"]
    if untestable:  # grouped by why (each row's dropdown has its whole reason)
        groups = _grouped_by_why([(c.decision.reason or c.decision.test, link(c)) for c in untestable])
        lines.append(f"* **Not testable here** ({len(untestable)}): {groups}.")
    unsure = [c for c in claim_list.claims if c.verdict == "[~]"]
    if unsure:
        lines.append(f"* **Inconclusive at this scale** ({len(unsure)}): " + ", ".join(link(c) for c in unsure)
                     + ". Each row says which way its estimate leans and the n that would decide it.")
    for k in claim_list.checks:
        if k.passed is False:
            lines.append(f"* Check failed: {k.check} ({k.where}): expected {k.expected}, computed {k.computed}.")
        elif k.passed is None:
            lines.append(f"* Check undecided at this scale: {k.check} ({k.where}): expected {k.expected}, "
                         f"computed {k.computed}.")
    return "\n".join(lines) if lines else f"All {len(claim_list.claims)} claims are reproduced at this scale."


def _first_sentence(text: str) -> str:
    text = text.strip()
    cut = re.split(r"(?<=\.)\s|\s—\s", text, maxsplit=1)[0].rstrip(".;")
    return cut[:1].upper() + cut[1:] if cut else ""


def _grouped_by_why(reasons_and_links: Iterable[tuple[str, str]]) -> str:
    """'why one (a, b); why two (c)': rows grouped by the head of their reason's first sentence (the text before a
    colon, when one comes early), in order of first appearance."""
    why: dict[str, list[str]] = {}
    for reason, link in reasons_and_links:
        first = _first_sentence(reason or "") or "see the row"
        head = first.split(":", 1)[0] if ":" in first[:90] else first
        why.setdefault(head[:1].lower() + head[1:], []).append(link)
    return "; ".join(f"{k} ({', '.join(v)})" for k, v in why.items())


def key_findings(rows: Iterable[Claim | dict], seed_sensitive: Iterable[str] = ()) -> str:
    """The chapter's Key findings in Markdown, generated from its decided rows (nothing typed by hand).

    One line of totals, then: every contradicted claim with the mechanism its reason gives, the reproduced claims,
    how the inconclusive ones lean, and why the untestable ones are. Each claim links to its row (anchor
    ``claim-<id>``) in the chapter's Paper-vs-us table. Exact recomputations (basis ``exact``) are counted apart
    from the empirical claims, as on the Scorecard. A [Re] or [¬Re] in ``seed_sensitive`` (ids whose verdict too
    few master seeds share) is listed as seed-sensitive, not as a finding."""
    rows = [r.row() if isinstance(r, Claim) else dict(r) for r in rows]
    sensitive = set(seed_sensitive)
    if not rows:
        return "This chapter decides no claims."

    def link(r):  # the rows are HTML with id="claim-<id>": an HTML link, not a Sphinx cross-reference
        return f'<a href="#claim-{r["id"]}">{r["id"]}</a>' + (", exact recomputation" if r["basis"] == "exact" else "")

    empirical = [r for r in rows if r["basis"] != "exact"]
    exact = [r for r in rows if r["basis"] == "exact"]
    counts = verdict_counts(empirical)
    lines = [f"Of {len(empirical)} empirical claims, **{counts['[Re]']} reproduced**, **{counts['[¬Re]']} "
             f"contradicted**, {counts['[~]']} inconclusive at this scale and {counts['[n/a]']} not testable here"
             + (f"; {sum(r['verdict'] == '[Re]' for r in exact)} of {len(exact)} exact recomputations of the "
                "paper's printed numbers agree" if exact else "") + ".", ""]
    by = {v: [r for r in rows if r["verdict"] == v and not (v in ("[Re]", "[¬Re]") and r["id"] in sensitive)]
          for v in VERDICTS}
    if by["[¬Re]"]:
        lines.append("**Contradicted here:**")
        lines += [f"* {r['claim'].rstrip('.')} ({link(r)}): {_first_sentence(r['reason']) or 'see the row'}."
                  for r in by["[¬Re]"]]
        lines.append("")
    if by["[Re]"]:
        lines.append("**Reproduced:** " + "; ".join(f"{r['claim'].rstrip('.')} ({link(r)})" for r in by["[Re]"])
                     + ".")
        lines.append("")
    if by["[~]"]:
        leans = {"leans towards the claim": [], "leans against the claim": [], "no effect seen": [], "": []}
        for r in by["[~]"]:
            key = next((k for k in leans if k and k in r["reason"]), "")
            leans[key].append(link(r))
        parts = [f"{len(v)} {k} ({', '.join(v)})" for k, v in leans.items() if k and v]
        if leans[""]:
            parts.append(f"{len(leans[''])} undecided for another reason ({', '.join(leans[''])})")
        lines.append("**Inconclusive at this scale:** " + "; ".join(parts) + ".")
        lines.append("")
    shaky = [r for r in rows if r["verdict"] in ("[Re]", "[¬Re]") and r["id"] in sensitive]
    if shaky:
        lines.append("**Seed-sensitive** (the verdict changes with the master seed, so it is not a finding): "
                     + "; ".join(f"{link(r)} {r['verdict']}" for r in shaky) + ".")
        lines.append("")
    if by["[n/a]"]:
        lines.append("**Not testable here:** " + _grouped_by_why([(r["reason"], link(r)) for r in by["[n/a]"]]) + ".")
    return "\n".join(lines).strip()


@dataclass
class ClaimList:
    """A chapter's claims, checks and errata as they are built; ``scale`` (the profile) is stamped on every claim."""

    scale: str
    claims: list[Claim] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    errata: list[Erratum] = field(default_factory=list)

    def claim(self, id: str, claim: str, *, where: str, paper: str, rule: str, ours: str, basis: str,
              decision: Decision, substitution: str = "") -> Claim:
        c = Claim(id=id, claim=claim, where=where, paper=paper, rule=rule, ours=ours, basis=basis,
                  scale=self.scale, decision=decision, substitution=substitution)
        if any(x.id == id for x in self.claims):
            raise ValueError(f"duplicate claim id {id!r}")
        self.claims.append(c)
        return c

    def check(self, check: str, *, where: str, expected: str, computed: str, passed: bool | None,
              why: str = "") -> Check:
        c = Check(check, where, expected, computed, None if passed is None else bool(passed), why)
        self.checks.append(c)
        return c

    def erratum(self, where: str, *, printed: str, recomputed: str, note: str) -> Erratum:
        e = Erratum(where, printed, recomputed, note)
        self.errata.append(e)
        return e


#: the rules a chapter's claims registry may name (:class:`medeval.core.chapter.ClaimSpec`): each returns a
#: :class:`Decision` from data and is tested under a simulated null (tests/core/test_claims.py);
#: :func:`not_testable` names a row that no data of this book can decide (its reason says why). The
#: combinators (:func:`combine`, :func:`decide_per_group`) and the quality gate are not rules: a row names the
#: rules of its parts.
RULES = frozenset({decide_difference, decide_paired, decide_trend, decide_blocked_trend, decide_proportions,
                   decide_equivalence, decide_bound, decide_tolerance, decide_exact, not_testable})
