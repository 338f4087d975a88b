"""Self-check questions on a chapter page: checked, shuffled the same on every build, and drawn by jupyterquiz offline.

:func:`self_check` validates the questions (:func:`validate_self_check`), fixes their answers' order
(:func:`shuffled_answers`), embeds them in the page (no server, no network) and makes jupyterquiz's script wait for
MathJax (``_WAIT_FOR_MATHJAX``), which it would otherwise fetch from a CDN.
"""

from __future__ import annotations

import json
import re

_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")


def validate_self_check(questions: list[dict]) -> list[dict]:
    """Check self-check questions in jupyterquiz's format and return them ready to embed.

    Every question has text and a type (``multiple_choice`` or ``numeric``); every answer has feedback; a
    multiple-choice question has exactly one correct answer; a numeric question has exactly one correct
    ``value`` answer and a ``default`` answer (the feedback for anything else). Inline ``$…$`` math becomes
    ``\\(…\\)``, the delimiters the book's MathJax reads. Raises ``ValueError`` naming the question.
    """
    if not isinstance(questions, list) or not questions:
        raise ValueError("self-check: expected a non-empty list of questions")
    ready = []
    for i, q in enumerate(questions, start=1):
        where = f"self-check question {i} ({str(q.get('question', ''))[:60]!r})"
        if not str(q.get("question", "")).strip():
            raise ValueError(f"{where}: has no question text")
        answers = q.get("answers") or []
        if not answers:
            raise ValueError(f"{where}: has no answers")
        for a in answers:
            if not str(a.get("feedback", "")).strip():
                raise ValueError(f"{where}: answer {a.get('answer', a.get('value', a.get('type')))!r} has no feedback")
        if q.get("type") == "multiple_choice":
            if sum(bool(a.get("correct")) for a in answers) != 1:
                raise ValueError(f"{where}: a multiple-choice question needs exactly one correct answer")
            if any(not str(a.get("answer", "")).strip() for a in answers):
                raise ValueError(f"{where}: an answer has no text")
        elif q.get("type") == "numeric":
            values = [a for a in answers if a.get("type") == "value" and a.get("correct")]
            if len(values) != 1 or not isinstance(values[0].get("value"), int | float):
                raise ValueError(f"{where}: a numeric question needs exactly one correct 'value' answer")
            if not any(a.get("type") == "default" for a in answers):
                raise ValueError(f"{where}: a numeric question needs a 'default' answer with feedback")
            if not isinstance(q.get("precision", 0), int):
                raise ValueError(f"{where}: 'precision' must be an integer number of significant digits")
        else:
            raise ValueError(f"{where}: type {q.get('type')!r}; expected 'multiple_choice' or 'numeric'")
        ready.append(json.loads(_INLINE_MATH.sub(r"\\\\(\1\\\\)", json.dumps(q))))
    return ready


def shuffled_answers(questions: list[dict]) -> list[dict]:
    """Multiple-choice questions with their answers in a shuffled order that is the same on every build.

    Each question's permutation is drawn from a generator seeded with the SHA-256 of its text, so the correct
    answer is not always where the author wrote it (first, mostly) and a page does not change between builds.
    Numeric questions are returned as they are.
    """
    import hashlib

    import numpy as np

    out = []
    for q in questions:
        if q.get("type") == "multiple_choice":
            seed = int.from_bytes(hashlib.sha256(str(q["question"]).encode()).digest()[:8], "little")
            order = np.random.default_rng(seed).permutation(len(q["answers"]))
            q = {**q, "answers": [q["answers"][i] for i in order]}
        out.append(q)
    return out

_WAIT_FOR_MATHJAX = """
// medeval: show the questions only once MathJax has typeset the page. Until MathJax 3 has loaded, window.MathJax
// is the book's configuration object; jupyterquiz, finding no MathJax.typeset there, would fetch MathJax from a CDN.
function medevalWhenMathJaxReady(run, waited) {
  var mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(run);
  } else if (mj && mj.Hub) {
    run();  // MathJax 2 (the classic notebook): jupyterquiz queues its typesetting itself
  } else if ((mj || document.readyState !== "complete") && (waited || 0) < 10000) {
    setTimeout(function () { medevalWhenMathJaxReady(run, (waited || 0) + 100); }, 100);
  } else {
    run();  // no MathJax on this page (a notebook without it), or it never started: show the questions anyway
  }
}
"""


_QUIZ_INVOCATION = "{\n  try_show();\n}"  # the end of jupyterquiz's static_suffix.js.tpl


#: where a chapter's self-check questions live, relative to the project root: ``<chapter-id>.yaml``
QUIZ_FOLDER = "teaching/quizzes"


def quiz_path(chapter_id: str):
    """``teaching/quizzes/<chapter_id>.yaml``: the chapter's self-check questions, as data."""
    from medeval.runtime.paths import project_root

    return project_root() / QUIZ_FOLDER / f"{chapter_id}.yaml"


def load_quiz(chapter_id: str) -> list[dict]:
    """A chapter's self-check questions from :func:`quiz_path`, validated (:func:`validate_self_check`); a missing
    or malformed file is refused naming it."""
    import yaml

    path = quiz_path(chapter_id)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no self-check questions for chapter {chapter_id!r} (a list of questions, "
                                "see the other chapters' files)")
    questions = yaml.safe_load(path.read_text())
    if not isinstance(questions, list):
        raise ValueError(f"{path}: expected a list of questions, got {type(questions).__name__}")
    try:
        return validate_self_check(questions)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def self_check(questions: list[dict] | None = None) -> None:
    """Show self-check questions (multiple choice or numeric, with feedback) that work in the offline book.

    ``questions`` defaults to the running chapter's file (:func:`load_quiz`). The questions are checked by
    :func:`validate_self_check`, their answers put in a
    fixed shuffled order (:func:`shuffled_answers`) and embedded in the page with
    jupyterquiz, so answering them needs no server and no network. The quiz is drawn once MathJax has typeset the
    page (``MathJax.startup.promise``), never before: jupyterquiz would otherwise load MathJax from a CDN.
    """
    from unittest import mock

    import jupyterquiz.dynamic.display as quiz_display
    from IPython.display import Javascript, display

    if questions is None:
        from medeval.runtime.recording import _state

        if not _state.get("chapter"):
            raise RuntimeError("self_check() reads the running chapter's questions: call notebook.setup first, or "
                               "pass the questions")
        questions = load_quiz(_state["chapter"])
    shown: list = []
    with mock.patch.object(quiz_display, "display", lambda *objs: shown.extend(objs)):
        quiz_display.display_quiz(
            shuffled_answers(validate_self_check(questions)), shuffle_answers=False, max_width=760,
            colors={"--jq-multiple-choice-bg": "#0072B2", "--jq-numeric-bg": "#0072B2",
                    "--jq-correct-color": "#009E73", "--jq-incorrect-color": "#D55E00"})
    for obj in shown:
        if isinstance(obj, Javascript):
            if obj.data.count(_QUIZ_INVOCATION) != 1:
                raise RuntimeError("jupyterquiz's script no longer ends with try_show(); self_check cannot make it "
                                   "wait for MathJax (was jupyterquiz upgraded?)")
            obj = Javascript(_WAIT_FOR_MATHJAX + obj.data.replace(
                _QUIZ_INVOCATION, "{\n  medevalWhenMathJaxReady(try_show);\n}"))
        display(obj)
