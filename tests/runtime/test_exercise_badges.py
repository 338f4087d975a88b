"""Every exercise of the book opens with badges of its kind and its planned student minutes, put in when the book is
staged (:func:`medeval.runtime.book.with_exercise_badges`); the notebooks themselves stay as they are."""

import json

import jupytext
import pytest

from medeval.runtime.book import KIND_BADGES, exercise_badge_line, with_exercise_badges
from medeval.runtime.course import load_course
from medeval.runtime.params import chapters
from medeval.runtime.teaching import KINDS, read_exercises


def _notebook(*cells: tuple[str, str | list[str]]) -> str:
    return json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": source,
                                  **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                 for kind, source in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


PROMPT = ("## Exercises\n\n```{exercise} EVE by hand\n:label: ex-toy-hand\n:class: by-hand\n\nCompute EVE.\n\n"
          "More prose.\n```\n\n::::{exercise} Is it enough?\n:label: ex-toy-critical\n:class: critical\nArgue.\n::::\n")


def test_each_exercise_body_opens_with_its_kind_and_minutes():
    text = _notebook(("markdown", "# Title\n\nNo exercise here: ```{note}\n:class: x\n"),
                     ("markdown", PROMPT.splitlines(keepends=True)),  # a list of lines, as nbformat may store it
                     ("code", "x = 1\n"))
    out = json.loads(with_exercise_badges(text, {"ex-toy-hand": 30}))
    before = json.loads(text)
    assert out["cells"][0] == before["cells"][0] and out["cells"][2] == before["cells"][2]
    lines = out["cells"][1]["source"].split("\n")
    first = lines.index("```{exercise} EVE by hand")
    assert lines[first + 1:first + 7] == [":label: ex-toy-hand", ":class: by-hand", "",
                                          "{bdg-primary}`by-hand` {bdg-secondary}`≈ 30 min`", "", "Compute EVE."]
    second = lines.index("::::{exercise} Is it enough?")
    # no planned minutes: the kind only; a body without a blank line after the options gets one
    assert lines[second + 1:second + 7] == [":label: ex-toy-critical", ":class: critical", "",
                                            "{bdg-warning}`critical`", "", "Argue."]
    # nothing else changed
    without = [ln for ln in lines if not ln.startswith("{bdg-")]
    assert "\n".join(without).replace("\n\n\n", "\n\n") == PROMPT.replace(":class: critical\n", ":class: critical\n\n")


def test_a_notebook_without_exercises_comes_back_unchanged():
    text = _notebook(("markdown", "# Title\n\nProse."), ("code", "print(1)"))
    assert with_exercise_badges(text, {"ex-a": 10}) is text


def test_every_kind_has_a_badge_colour():
    assert set(KIND_BADGES) == set(KINDS)
    assert exercise_badge_line("coding", 45) == "{bdg-success}`coding` {bdg-secondary}`≈ 45 min`"
    assert exercise_badge_line("experimental", None) == "{bdg-info}`experimental`"


@pytest.mark.parametrize("chapter_id", [cid for cid in chapters() if cid in load_course(check=False).exercises])
def test_every_exercise_of_a_chapter_gets_its_planned_minutes(chapter_id):
    """On a chapter's own notebook: one badge line per exercise, with the minutes teaching/course.yaml plans."""
    plans = load_course(check=False).exercises[chapter_id]
    source = chapters()[chapter_id].notebook
    text = jupytext.writes(jupytext.read(source), fmt="ipynb")
    badged = with_exercise_badges(text, {label: plan.minutes for label, plan in plans.items()})
    markdown = "\n".join("".join(c["source"]) for c in json.loads(badged)["cells"] if c["cell_type"] == "markdown")
    exercises = read_exercises(chapter_id).exercises
    assert exercises
    for ex in exercises:
        assert exercise_badge_line(ex.kind, plans[ex.label].minutes) in markdown, ex.label
    assert markdown.count("{bdg-secondary}`≈") == len(exercises)
    assert "{bdg-" not in source.read_text()  # the notebook itself is not changed
