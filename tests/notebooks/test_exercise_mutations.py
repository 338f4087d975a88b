"""Checks that score what they should (issue #34, item 4): plausible wrong implementations of each coding exercise
must each lose at least half of the exercise's points, and the holes the issue found must cost points.

Each mutant replaces the exercise's solution; the exercise's hidden checks are probed in-process with the same
probe code the grader sends to a submission's kernel, and scored against the constants computed from the teacher's
solutions, as :func:`medeval.runtime.grading.grade_notebook` scores them.
"""

from __future__ import annotations

import contextlib
import io
import json
import textwrap

import pytest

from medeval.runtime import grading
from medeval.runtime.teaching import read_exercises

pytestmark = pytest.mark.slow

EVE_HEADER = "def ex_code_eve(scores_first, scores_second, target='half_size'):\n"
EVE_CHECKED = """\
    first = np.atleast_1d(np.asarray(scores_first, dtype=float))
    second = np.atleast_1d(np.asarray(scores_second, dtype=float))
    if first.shape != second.shape:
        raise ValueError("lengths differ")
    if target not in ("half_size", "full_size", "mean_of_halves"):
        raise ValueError("unknown target")
"""


def _eve(body: str, checked: str = EVE_CHECKED) -> str:
    return EVE_HEADER + checked + textwrap.indent(textwrap.dedent(body), "    ")


PAIRED_HEADER = """\
from scipy.stats import norm


def ex_code_paired_z(first_a, second_a, first_b, second_b):
    d1 = np.asarray(first_a, dtype=float) - np.asarray(first_b, dtype=float)
    d2 = np.asarray(second_a, dtype=float) - np.asarray(second_b, dtype=float)
"""


def _paired(body: str) -> str:
    return PAIRED_HEADER + textwrap.indent(textwrap.dedent(body), "    ")


PRT = '''\
def ex_code_prt(y_true, y_score, thresholds):
    y = np.asarray(y_true).astype(bool)
    s = np.asarray(y_score, dtype=float)
    lo, hi = s.min(), s.max()
    if hi == lo:
        raise ValueError("constant scores")
    s_n = (s - lo) / (hi - lo)
    predicted = s_n[None, :] >= np.asarray(thresholds, dtype=float)[:, None]
    tp = (predicted & y).sum(axis=1)
    fp = (predicted & ~y).sum(axis=1)
    return tp / (tp + fp), tp / y.sum()


def ex_code_prt_auc(y_true, y_score, n_thresholds=101):
    t = np.linspace(0.0, 1.0, n_thresholds)
    precision, recall = ex_code_prt(y_true, y_score, t)
    dt = np.diff(t)
    return (float(np.sum(dt * (precision[1:] + precision[:-1]) / 2)),
            float(np.sum(dt * (recall[1:] + recall[:-1]) / 2)))
'''


def _prt(*replacements: tuple[str, str]) -> str:
    code = PRT
    for old, new in replacements:
        assert old in code, old
        code = code.replace(old, new)
    return code


def _solution(chapter: str, label: str, *replacements: tuple[str, str]) -> str:
    """The exercise's own solution with each ``old`` text replaced by ``new`` (each must occur)."""
    code = "\n\n".join(read_exercises(chapter).by_label(label).solution_cells)
    for old, new in replacements:
        assert old in code, f"{label}: {old!r} is not in the solution"
        code = code.replace(old, new)
    return code


def _mil(*replacements):
    return _solution("01-mil-stability", "ex-mil-code", *replacements)


def _mil2(*replacements):
    return _solution("01-mil-stability", "ex-mil-code-2", *replacements)


def _rodeo(*replacements):
    return _solution("02-rodeo", "ex-rodeo-code", *replacements)


def _cd(*replacements):
    return _solution("04a-class-distribution", "ex-cd-code", *replacements)


def _ml(*replacements):
    return _solution("05-multilabel", "ex-ml-code", *replacements)


def _ml2(*replacements):
    return _solution("05-multilabel", "ex-ml-code-2", *replacements)


def _data(*replacements):
    return _solution("A1-data", "ex-data-code", *replacements)


def _rerun(*replacements):
    return _solution("A2-rerun", "ex-rerun-code", *replacements)


def _rerun2(*replacements):
    return _solution("A2-rerun", "ex-rerun-code-2", *replacements)


# (chapter, exercise) → {wrong implementation: its code}
MUTANTS = {
    ("03-eve", "ex-eve-code"): {
        "forgets the 1/2": _eve("""
            value = float(np.mean((first - second) ** 2))
            return value / 2 if target == "mean_of_halves" else value"""),
        "sums instead of averaging over pairs": _eve("""
            value = float(np.sum((first - second) ** 2) / 2)
            return value / 2 if target == "mean_of_halves" else value"""),
        "variance of the differences": _eve("""
            value = float(np.var(first - second))
            return value / 2 if target == "mean_of_halves" else value"""),
        "standard deviation instead of variance": _eve("""
            value = float(np.sqrt(np.mean((first - second) ** 2) / 2))
            return value / 2 if target == "mean_of_halves" else value"""),
        "ignores the target": _eve("""
            return float(np.mean((first - second) ** 2) / 2)"""),
        "doubles for mean_of_halves": _eve("""
            value = float(np.mean((first - second) ** 2) / 2)
            return value * 2 if target == "mean_of_halves" else value"""),
        "halves full_size too": _eve("""
            value = float(np.mean((first - second) ** 2) / 2)
            return value if target == "half_size" else value / 2"""),
        "pools both halves into one sample variance": _eve("""
            value = float(np.var(np.concatenate([first, second]), ddof=1))
            return value / 2 if target == "mean_of_halves" else value"""),
    },
    ("03-eve", "ex-eve-code-2"): {
        "uses V_d instead of V_d/2": _paired("""
            variance = np.mean((d1 - d2) ** 2) / 2
            m = float(np.mean(np.concatenate([d1, d2])))
            z = m / np.sqrt(variance)
            return m, float(z), float(2 * norm.sf(abs(z)))"""),
        "one-sided p-value": _paired("""
            variance = np.mean((d1 - d2) ** 2) / 4
            m = float(np.mean(np.concatenate([d1, d2])))
            z = m / np.sqrt(variance)
            return m, float(z), float(norm.sf(abs(z)))"""),
        "mean of the first halves only": _paired("""
            variance = np.mean((d1 - d2) ** 2) / 4
            m = float(np.mean(d1))
            z = m / np.sqrt(variance)
            return m, float(z), float(2 * norm.sf(abs(z)))"""),
        "forgets the square root": _paired("""
            variance = np.mean((d1 - d2) ** 2) / 4
            m = float(np.mean(np.concatenate([d1, d2])))
            z = m / variance
            return m, float(z), float(2 * norm.sf(abs(z)))"""),
        "naive variance of the 2R differences": _paired("""
            d = np.concatenate([d1, d2])
            m = float(np.mean(d))
            z = m / np.sqrt(np.var(d, ddof=1) / d.size)
            return m, float(z), float(2 * norm.sf(abs(z)))"""),
        "B - A": _paired("""
            variance = np.mean((d1 - d2) ** 2) / 4
            m = -float(np.mean(np.concatenate([d1, d2])))
            z = m / np.sqrt(variance)
            return m, float(z), float(2 * norm.sf(abs(z)))"""),
    },
    ("01-mil-stability", "ex-mil-code"): {
        "binarises with > instead of >=": _mil(("a = np.asarray(pred_a, dtype=float) >= threshold",
                                                "a = np.asarray(pred_a, dtype=float) > threshold"),
                                               ("b = np.asarray(pred_b, dtype=float) >= threshold",
                                                "b = np.asarray(pred_b, dtype=float) > threshold")),
        "E(n11) over N squared": _mil(("expected = a.sum() * b.sum() / n", "expected = a.sum() * b.sum() / n ** 2")),
        "plain positive Jaccard (no chance correction)": _mil(("expected = a.sum() * b.sum() / n", "expected = 0")),
        "counts n00 in the denominator": _mil(("denominator = n10 + n01 + n11 - expected",
                                               "denominator = np.sum(~a & ~b) + n10 + n01 + n11 - expected")),
        "expected overlap from the other class": _mil(("expected = a.sum() * b.sum() / n",
                                                       "expected = (~a).sum() * (~b).sum() / n")),
    },
    ("01-mil-stability", "ex-mil-code-2"): {
        "undefined pairs count as 0": _mil2(("defined = ~np.isnan(per_pair)", "per_pair = np.nan_to_num(per_pair)\n"
                                                                              "    defined = ~np.isnan(per_pair)")),
        "pairs a model with itself": _mil2(("for j in range(i + 1, n_models)", "for j in range(i, n_models)")),
        "an all-undefined bag scores 0": _mil2(("total / np.maximum(n_defined, 1), np.nan)",
                                                "total / np.maximum(n_defined, 1), 0.0)")),
        "median over the pairs instead of the mean": _mil2((
            "return np.where(n_defined > 0, total / np.maximum(n_defined, 1), np.nan)",
            "return np.nanmedian(per_pair, axis=0)")),
    },
    ("02-rodeo", "ex-rodeo-code"): {
        "does not clip the overlaps at 0": _rodeo(("inter = np.clip(overlap_x, 0, None) * np.clip(overlap_y, 0, None)",
                                                   "inter = overlap_x * overlap_y")),
        "corners at x ± w instead of x ± w/2": _rodeo(("a[:, 0] + a[:, 2] / 2", "a[:, 0] + a[:, 2]"),
                                                      ("a[:, 0] - a[:, 2] / 2", "a[:, 0] - a[:, 2]"),
                                                      ("b[:, 0] + b[:, 2] / 2", "b[:, 0] + b[:, 2]"),
                                                      ("b[:, 0] - b[:, 2] / 2", "b[:, 0] - b[:, 2]")),
        "union without subtracting the intersection": _rodeo(
            ("return inter / (a[:, 2] * a[:, 3] + b[:, 2] * b[:, 3] - inter)\n\n\ndef",
             "return inter / (a[:, 2] * a[:, 3] + b[:, 2] * b[:, 3])\n\n\ndef")),
        "cIoU from the smaller area instead of the smaller sides": _rodeo(
            ("inter = np.minimum(a[:, 2], b[:, 2]) * np.minimum(a[:, 3], b[:, 3])",
             "inter = np.minimum(a[:, 2] * a[:, 3], b[:, 2] * b[:, 3])")),
        "cIoU as the plain IoU": _rodeo(
            ("inter = np.minimum(a[:, 2], b[:, 2]) * np.minimum(a[:, 3], b[:, 3])\n"
             "    return inter / (a[:, 2] * a[:, 3] + b[:, 2] * b[:, 3] - inter)",
             "return ex_code_iou(a, b)")),
    },
    ("04a-class-distribution", "ex-cd-code"): {
        "predicts C with > instead of >=": _cd(("predicted = s[None, :] >= t[:, None]",
                                                "predicted = s[None, :] > t[:, None]")),
        "thresholds the raw scores": _cd(("s = (s - s.min()) / (s.max() - s.min())", "s = s")),
        "areas as left Riemann sums": _cd(("np.diff(t) * (precision[1:] + precision[:-1]) / 2",
                                           "np.diff(t) * precision[:-1]"),
                                          ("np.diff(t) * (fpr[1:] + fpr[:-1]) / 2", "np.diff(t) * fpr[:-1]")),
        "FPR over all patches": _cd(("fpr = fp / np.count_nonzero(~y)", "fpr = fp / y.size")),
        "recall in place of precision": _cd(("precision = tp / (tp + fp)", "precision = tp / np.count_nonzero(y)")),
    },
    ("05-multilabel", "ex-ml-code"): {
        "undefined X-rays count as 0": _ml(("return float(np.mean(2 * both[defined] / size[defined]))",
                                            "return float(np.mean(2 * both / np.maximum(size, 1)))")),
        "undefined X-rays count as 1": _ml(("return float(np.mean(2 * both[defined] / size[defined]))",
                                            "return float(np.mean(np.where(defined, 2 * both / np.maximum(size, 1), "
                                            "1.0)))")),
        "Jaccard instead of F1": _ml(("return float(np.mean(2 * both[defined] / size[defined]))",
                                      "return float(np.mean(both[defined] / (size[defined] - both[defined])))")),
        "pooled (micro) instead of per X-ray": _ml(("return float(np.mean(2 * both[defined] / size[defined]))",
                                                    "return float(2 * both.sum() / size.sum())")),
    },
    ("05-multilabel", "ex-ml-code-2"): {
        "undefined labels count as 0": _ml2(("return float(np.mean(num[ok] / den[ok])) if ok.any() else float(\"nan\")",
                                             "return float(np.mean(num / np.maximum(den, 1)))")),
        "ignores the convention": _ml2(('if convention == "mean_of_f1":', 'if True:')),
        "F of macro P, R averaged over every label": _ml2((
            "p, r = mean_of_ratios(tp, tp + fp), mean_of_ratios(tp, tp + fn)",
            "p, r = float(np.mean(tp / np.maximum(tp + fp, 1))), float(np.mean(tp / np.maximum(tp + fn, 1)))")),
        "F1 per label as tp / (tp + fp + fn)": _ml2(("return mean_of_ratios(2 * tp, 2 * tp + fp + fn)",
                                                     "return mean_of_ratios(tp, tp + fp + fn)")),
    },
    ("A1-data", "ex-data-code"): {
        "counts instead of prevalences": _data(("y[np.asarray(test)].mean(axis=0)", "y[np.asarray(test)].sum(axis=0)")),
        "prevalence in the training fold": _data(("for _, test in splits", "for test, _ in splits")),
        "findings by folds (transposed)": _data(("for _, test in splits])", "for _, test in splits]).T")),
        "share of the finding's cases instead of prevalence": _data((
            "y[np.asarray(test)].mean(axis=0)", "y[np.asarray(test)].sum(axis=0) / np.maximum(y.sum(axis=0), 1)")),
    },
    ("A2-rerun", "ex-rerun-code"): {
        "SD with ddof = 0": _rerun(("sd = x.std(ddof=1) if len(x) > 1 else np.nan", "sd = x.std()")),
        "binomial variance instead of SD": _rerun(("np.sqrt(mean * (1 - mean) / size)", "mean * (1 - mean) / size")),
        "binomial SD over the number of runs": _rerun(("np.sqrt(mean * (1 - mean) / size)",
                                                       "np.sqrt(mean * (1 - mean) / len(x))")),
        "sizes in the order they first appear": _rerun(("for size in np.unique(n):",
                                                        "for size in dict.fromkeys(n.tolist()):")),
    },
    ("A2-rerun", "ex-rerun-code-2"): {
        "np.isclose's default atol": _rerun2(("rtol=rtol, atol=0, equal_nan=True", "rtol=rtol, equal_nan=True")),
        "compares bools": _rerun2(("return isinstance(value, int | float) and not isinstance(value, bool)",
                                   "return isinstance(value, int | float)")),
        "NaN differs from NaN": _rerun2(("rtol=rtol, atol=0, equal_nan=True", "rtol=rtol, atol=0")),
        "only_old and only_new swapped": _rerun2(('"only_old": sorted(old.keys() - new.keys())',
                                                  '"only_old": sorted(new.keys() - old.keys())'),
                                                 ('"only_new": sorted(new.keys() - old.keys())',
                                                  '"only_new": sorted(old.keys() - new.keys())')),
        "ignores rtol": _rerun2(("rtol=rtol, atol=0", "rtol=0.05, atol=0")),
    },
    ("04b-evaluation-measures", "ex-em-code"): {
        "thresholds the raw scores": _prt(("s_n = (s - lo) / (hi - lo)", "s_n = s")),
        "counts a score on the threshold as negative": _prt(("s_n[None, :] >=", "s_n[None, :] >")),
        "normalises by the maximum only": _prt(("s_n = (s - lo) / (hi - lo)", "s_n = s / hi")),
        "swaps precision and recall": _prt(("return tp / (tp + fp), tp / y.sum()", "return tp / y.sum(), tp / (tp + fp)")),
        "recall over all examples": _prt(("tp / y.sum()", "tp / y.size")),
        "AUC as a left Riemann sum": _prt(("dt * (precision[1:] + precision[:-1]) / 2", "dt * precision[:-1]"),
                                          ("dt * (recall[1:] + recall[:-1]) / 2", "dt * recall[:-1]")),
        "AUC as a right Riemann sum": _prt(("dt * (precision[1:] + precision[:-1]) / 2", "dt * precision[1:]"),
                                           ("dt * (recall[1:] + recall[:-1]) / 2", "dt * recall[1:]")),
        "AUC as the mean of the curve": _prt(("np.sum(dt * (precision[1:] + precision[:-1]) / 2)", "np.mean(precision)"),
                                             ("np.sum(dt * (recall[1:] + recall[:-1]) / 2)", "np.mean(recall)")),
    },
}

# the holes the issue found: a wrong implementation that scored full marks must lose at least one point
HOLES = {
    ("03-eve", "ex-eve-code"): {
        "does not refuse an unknown target": _eve("""
            value = float(np.mean((first - second) ** 2) / 2)
            return value / 2 if target == "mean_of_halves" else value""", checked=EVE_CHECKED.replace(
            '    if target not in ("half_size", "full_size", "mean_of_halves"):\n        raise ValueError("unknown target")\n',
            "")),
    },
    ("01-mil-stability", "ex-mil-code"): {
        "returns 0 where S_APJ is 0/0": _mil(('return float("nan")', "return 0.0")),
        "ignores threshold": _mil(("a = np.asarray(pred_a, dtype=float) >= threshold",
                                   "a = np.asarray(pred_a, dtype=float) >= 0.5"),
                                  ("b = np.asarray(pred_b, dtype=float) >= threshold",
                                   "b = np.asarray(pred_b, dtype=float) >= 0.5")),
    },
    ("04a-class-distribution", "ex-cd-code"): {
        "ignores n_thresholds": _cd(("t = np.linspace(0.0, 1.0, n_thresholds)", "t = np.linspace(0.0, 1.0, 101)")),
    },
    ("04b-evaluation-measures", "ex-em-code"): {
        "ignores thresholds": _prt(("np.asarray(thresholds, dtype=float)[:, None]",
                                    "np.linspace(0.0, 1.0, len(thresholds))[:, None]")),
        "ignores n_thresholds": _prt(("t = np.linspace(0.0, 1.0, n_thresholds)", "t = np.linspace(0.0, 1.0, 101)")),
    },
}

def data_mutants() -> dict[tuple[str, str], dict[str, str]]:
    """Mutants kept as data, ``teaching/mutants/<chapter>.yaml`` (what the scaffold writes for a new chapter):
    exercise label -> {what is wrong: code}."""
    import yaml

    from medeval.runtime.paths import project_root

    found = {}
    for path in sorted((project_root() / "teaching" / "mutants").glob("*.yaml")):
        for label, mutants in (yaml.safe_load(path.read_text()) or {}).items():
            found[path.stem, label] = dict(mutants)
    return found


MUTANTS.update(data_mutants())

CHAPTERS = sorted({chapter for chapter, _ in MUTANTS})


@pytest.fixture(scope="module")
def stored_checks(lazy_chapters, solution_check_values):
    """Each chapter's hidden checks with the constants computed from its solutions (as `medeval student` does),
    computed when a test first asks for the chapter."""
    return lazy_chapters(lambda chapter: grading._parse_checks(
        json.dumps(solution_check_values(chapter)).encode(), "<computed>", chapter))


def _score(chapter: str, label: str, answer: str, checks) -> tuple[float, list[str]]:
    """Run the setup cells and ``answer`` in a fresh namespace, probe the exercise as the grader does, score it."""
    exercises = read_exercises(chapter)
    namespace: dict = {"__name__": "__main__"}
    for code in exercises.setup_cells:
        exec(compile(code, "setup", "exec"), namespace)
    exec(compile(answer, label, "exec"), namespace)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(grading._probe_cell(label, checks[chapter][label], teacher=False), "probe", "exec"), namespace)
    [line] = [ln for ln in printed.getvalue().splitlines() if ln.startswith(grading._MARKER)]
    return grading.score_probe(checks[chapter][label], json.loads(line[len(grading._MARKER):]))


def test_every_coding_exercise_of_every_chapter_has_mutants():
    from medeval.runtime.params import chapters

    for chapter in chapters():
        coding = {e.label for e in read_exercises(chapter).exercises if e.kind == "coding"}
        assert coding == {label for c, label in MUTANTS if c == chapter}, chapter


@pytest.mark.parametrize("chapter, label", list(MUTANTS))
def test_the_solution_scores_full_marks_in_process(stored_checks, chapter, label):
    solution = "\n\n".join(read_exercises(chapter).by_label(label).solution_cells)
    score, problems = _score(chapter, label, solution, stored_checks)
    assert score == len(stored_checks[chapter][label]) and not problems


@pytest.mark.parametrize("chapter, label, mutant", [(c, x, m) for (c, x), ms in MUTANTS.items() for m in ms])
def test_a_wrong_implementation_loses_at_least_half_the_points(stored_checks, chapter, label, mutant):
    score, problems = _score(chapter, label, MUTANTS[chapter, label][mutant], stored_checks)
    possible = len(stored_checks[chapter][label])
    assert score <= possible / 2, f"{mutant!r} keeps {score:g} / {possible} points"
    assert problems


@pytest.mark.parametrize("chapter, label, hole", [(c, x, h) for (c, x), hs in HOLES.items() for h in hs])
def test_the_holes_found_in_the_issue_cost_points(stored_checks, chapter, label, hole):
    score, _ = _score(chapter, label, HOLES[chapter, label][hole], stored_checks)
    assert score < len(stored_checks[chapter][label]), f"{hole!r} still gets full marks"
