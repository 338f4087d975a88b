"""Every figure's caption states what the figure shows on the run that drew it (issue #31).

A caption says what is drawn and then pastes the figure's *takeaway*: a sentence or two that the notebook computes
from the plotted data and hands to :func:`medeval.plots.glue_figure` (``takeaway=``), glued as Markdown under
``<figure>-takeaway``. A re-run with other parameters gets its own sentence; nothing in a caption states a result
that its run did not draw. The book build (warnings as errors) fails on a pasted key that no cell glued.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from medeval import plots

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "notebooks").glob("*.py")) + sorted((ROOT / "templates" / "chapter" / "notebooks").glob("*.py"))
#: a ``{glue:figure}`` block of a jupytext percent notebook: its name and its body (options, alt text, caption)
FIGURE_BLOCK = re.compile(r"^# ```\{glue:figure\} (\S+)\n((?:#.*\n)*?)# ```", re.M)


def caption_problems(source: str) -> list[str]:
    """The figures of a notebook source whose caption does not paste their takeaway, or whose takeaway is not
    glued by a ``glue_figure(..., takeaway=...)`` call of the same name."""
    problems = []
    for name, body in FIGURE_BLOCK.findall(source):
        paste = f"{{glue:md}}`{plots.takeaway_key(name)}:myst`"
        if paste not in body:
            problems.append(f"{name}: the caption does not paste {paste}")
        call = re.search(rf"glue_figure\(\s*[\"']{re.escape(name)}[\"'][^\n]*", source)
        if call is None:
            problems.append(f"{name}: no glue_figure({name!r}, ...) call draws it")
    return problems


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_every_figure_caption_pastes_the_takeaway_of_its_run(source):
    text = source.read_text()
    assert caption_problems(text) == []
    # every glue_figure call passes a takeaway (a call without one fails at execution; this names it earlier)
    calls = glue_figure_calls(text)
    assert calls or "glue:figure" not in text
    assert all("takeaway=" in c for c in calls), [c[:80] for c in calls if "takeaway=" not in c]


def glue_figure_calls(source: str) -> list[str]:
    """The text of every ``glue_figure(...)`` call in ``source``, up to its matching parenthesis."""
    calls = []
    for m in re.finditer(r"glue_figure\(", source):
        depth, i = 1, m.end()
        while depth and i < len(source):
            depth += {"(": 1, ")": -1}.get(source[i], 0)
            i += 1
        calls.append(source[m.start():i])
    return calls


def test_the_caption_check_fails_on_a_caption_without_its_takeaway():
    good = ('plots.glue_figure("fig-a", fig, takeaway=text)\n'
            "# ```{glue:figure} fig-a\n# :name: fig-a\n# :alt: A line.\n#\n"
            "# The line. {glue:md}`fig-a-takeaway:myst`\n# ```\n")
    assert caption_problems(good) == []
    assert caption_problems(good.replace(" {glue:md}`fig-a-takeaway:myst`", "")) == [
        "fig-a: the caption does not paste {glue:md}`fig-a-takeaway:myst`"]
    assert "no glue_figure" in caption_problems(good.replace('glue_figure("fig-a"', 'glue_figure("fig-b"'))[0]
    nested = 'plots.glue_figure("fig-a", fig, check=f(g(1)), takeaway=(f"{x.min():.2f}."))\nrest()'
    assert glue_figure_calls(nested) == [nested.split("\n")[0].removeprefix("plots.")]
    assert glue_figure_calls('glue_figure("fig-a", f(g(x)))') == ['glue_figure("fig-a", f(g(x)))']


def test_a_takeaway_is_a_short_sentence_without_raw_output():
    assert plots.takeaway_problems("On this run, IoU is 0.42 at half a box size; RoDeO loc is $0.74$.") == []
    assert plots.takeaway_problems("") and plots.takeaway_problems(None)
    assert "does not end as a sentence" in plots.takeaway_problems("IoU is 0.42")[0]
    assert "0.4166666666" in plots.takeaway_problems("IoU is 0.41666666666666663.")[0]
    assert "nan" in plots.takeaway_problems("The mean AUC is nan.")[0]
    assert "characters" in plots.takeaway_problems("word " * 100 + ".")[0]
    # math is typeset, not raw output
    assert plots.takeaway_problems(r"It falls as $1/(1 + 2\ln 2\,\sigma^2)$.") == []


def test_glue_figure_refuses_a_figure_without_a_fit_takeaway():
    fig, (ax,) = plots.new_axes(width=4.0)
    ax.plot([0, 1], [0, 1])
    with pytest.raises(ValueError, match="takeaway cannot stand.*raw output"):
        plots.glue_figure("fig-test", fig, takeaway="The slope is 1.0000000.")


def test_the_takeaway_wording_helpers():
    assert [plots.word_list(x) for x in ([], ["a"], ["a", "b"], ["a", "b", "c"])] == ["", "a", "a and b", "a, b and c"]
    assert plots.word_list(str(k) for k in range(4)) == "0, 1, 2 and 3"  # any iterable, once
    assert plots.math_sci(7.46e-4) == "$7.5 \\times 10^{-4}$" and plots.math_sci(2.5e3, digits=3) == "$2.50 \\times 10^{3}$"
    assert plots.math_sci(-1.2e-5) == "$-1.2 \\times 10^{-5}$"
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite"):
            plots.math_sci(bad)
    assert plots.number_or_undefined(0.4567) == "0.46" and plots.number_or_undefined(0.4567, ".0%") == "46%"
    assert plots.number_or_undefined(float("nan")) == plots.number_or_undefined(float("-inf")) == "undefined"
    assert plots.takeaway_problems(f"It falls to {plots.math_sci(3e-4)}.") == []
