"""The book's *For teachers* page: the semester plan, every chapter's exercises and running times, the objectives.

:func:`teachers_markdown` (what ``medeval book`` writes as ``teaching.md``) reads the course plan
(``teaching/course.yaml``, :mod:`medeval.runtime.course`), the chapters' exercises
(:func:`medeval.runtime.exercises.read_exercises`) and reading times
(:func:`medeval.runtime.chapter_sections.reading_time`), and the committed running times.
"""

from __future__ import annotations

import re

from medeval.runtime.chapter_sections import READING_WORDS_PER_MINUTE, reading_time
from medeval.runtime.exercises import KINDS, ExerciseFormatError, read_chapter_source, read_exercises
from medeval.runtime.student_notebooks import notebook_markdown


def _section(nb, heading: str) -> str:
    """The text of a ``## heading`` section of a chapter's notebook (up to the next heading of level 1 or 2)."""
    text = "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    m = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^#{{1,2}} |\Z)", text, flags=re.M | re.S)
    if not m:
        return ""
    # a paragraph that opens with its own bold title ("**What we reproduce.** …") is another section run in
    body = re.split(r"^\*\*[^*\n]+\*\*", m.group(1), maxsplit=1, flags=re.M)[0]
    return body.strip()


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "not measured"
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def _page_name(chapter_id: str, linked: bool) -> str:
    """A chapter's or appendix's name on the teachers page: a reference to its label, or its plain title."""
    from medeval.runtime.params import chapters

    ch = chapters()[chapter_id]
    if not linked:
        return f"*{ch.title}*"
    m = re.search(r"^# \(((?:ch|app)-[\w-]+)\)=", ch.notebook.read_text(), flags=re.M)
    return f"{{ref}}`{m.group(1)}`" if m else f"*{ch.title}*"


def _exercise_list(labels: list[str], course, linked: bool) -> str:
    if not labels:
        return "—"
    shown = (lambda label: f"{{ref}}`{label} <{label}>`") if linked else (lambda label: f"`{label}`")
    return ", ".join(f"{shown(label)} ({course.plan_of(label).minutes} min)" for label in labels)


def semester_markdown(course, linked: bool = True) -> str:
    """The semester template of the teachers page: one row per week (its chapter sections, the in-class and the
    homework part with the exercises and their estimated minutes), then the assessment weights and the rubrics."""
    rows = []
    for w in course.weeks:
        parts = "; ".join(f"{_page_name(p.chapter, linked)}: {p.sections}" for p in w.parts)
        needs = ", ".join(f"{n} (wk {next(x.week for x in course.weeks if n in x.teaches)})" for n in w.needs)
        homework_min = sum(course.plan_of(label).minutes for label in w.homework.exercises)
        rows.append(f"| {w.week} | **{w.title}**<br>{parts} | {needs or '—'} | {w.in_class.activity}<br>"
                    f"{_exercise_list(w.in_class.exercises, course, linked)} | {w.homework.activity}<br>"
                    f"{_exercise_list(w.homework.exercises, course, linked)} | {homework_min} min |")
    assessment = "\n".join(f"| {a.item} | {a.counts} | {a.weight:g} % |" for a in course.assessment)
    rubric_titles = {"written": "Written answer (a by-hand or coding exercise's part in words)",
                     "interpretation": "Interpretation (the last part of an experimental exercise)",
                     "critical": "Critical essay"}
    rubrics = "\n\n".join(
        f"**{rubric_titles[kind]}**, {sum(c.points for c in criteria):g} points:\n\n"
        + "\n".join(f"* {c.points:g} — {c.criterion}" for c in criteria)
        for kind, criteria in course.rubrics.items())
    total = sum(p.minutes for plans in course.exercises.values() for p in plans.values())
    return f"""## Course plan: a semester of {len(course.weeks)} weeks

One 90-minute class a week and the homework that follows it. A chapter whose exercises take 3–4 hours is spread
over two weeks, and the weeks follow the prerequisites: every concept a week *needs* is taught in that week or an
earlier one (the week is given), which `teaching/course.yaml` records and a test checks. Where two chapters refer
to each other, the part that needs the other comes later (04b's experiments on En and Ep after 04a; 03's
multi-label bridge after 05's measures). The minutes are estimates of a student's working time per exercise
({total / 60:.0f} hours for all of them), not measurements; the homework column adds them up.

| Week | Topic and sections | Needs (taught in week) | In class (90 min) | Homework | Homework time |
| --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

### Assessment

| Part | What it is made of | Weight |
| --- | --- | --- |
{assessment}

### Rubrics for the answers the teacher reads

`medeval answers` collects them from the handed-in notebooks, each beside its model answer and this rubric.

{rubrics}
"""


def teachers_markdown(timings: dict[str, dict[str, dict]] | None = None, built: set[str] | None = None,
                      course=None) -> str:
    """The book's *For teachers* page: the semester template of ``teaching/course.yaml``
    (:mod:`medeval.runtime.course`), every chapter's exercises with measured running times, the prerequisites and learning objectives of
    every chapter (read from the chapters), and how to hand out and grade the exercises.

    Running times come from ``results/timings.json`` (``timings``: chapter → profile → record); a profile that was
    never run on a machine of that kind is shown as not measured, never estimated. When ``built`` names only some
    chapters (``medeval book --only``), links become plain text so that no reference points at a missing page.
    """
    from medeval.runtime.course import load_course
    from medeval.runtime.params import chapters

    registry = chapters()
    course = course if course is not None else load_course()
    linked = built is None or set(registry) <= set(built)
    text_of = (lambda t: t) if linked else notebook_markdown
    if timings is None:
        from medeval.runtime.calibration import recorded_timings

        timings = {cid: recorded_timings(cid) for cid in registry}
    rows, objectives, prerequisites = [], [], []
    numbers = {c: i for i, c in enumerate((c for c, ch in registry.items() if ch.part == "chapters"), start=1)}
    letters = {c: f"{chr(65 + i)}" for i, c in enumerate(c for c, ch in registry.items() if ch.part != "chapters")}
    weeks_of = {cid: [w.week for w in course.weeks if any(p.chapter == cid for p in w.parts)] for cid in registry}
    for cid, ch in registry.items():
        nb = read_chapter_source(ch.notebook)
        try:
            exercises = read_exercises(cid).exercises
        except ExerciseFormatError:
            exercises = []
        kinds = ", ".join(f"{sum(e.kind == k for e in exercises)} {k}" for k in KINDS
                          if any(e.kind == k for e in exercises)) or "none yet"
        minutes = sum(p.minutes for p in course.exercises.get(cid, {}).values())
        t = timings.get(cid, {})
        cpu = " / ".join(_minutes(t.get(p, {}).get("wall_time_s")) for p in ("smoke", "default"))
        gpu = t.get("gpu")
        gpu_text = f"{_minutes(gpu['wall_time_s'])} ({gpu.get('device', '?')})" if gpu else "not measured"
        name = _page_name(cid, linked)
        number = numbers.get(cid) or letters[cid]
        weeks = ", ".join(str(w) for w in weeks_of[cid]) or "—"
        reading = reading_time(nb)["minutes"]
        rows.append(f"| {number}. {name} | {weeks} | {reading} min | {kinds} | {minutes / 60:.1f} h | {cpu} "
                    f"| {gpu_text} |")
        if ch.part == "chapters":
            objectives.append(f"### {name}\n\n{text_of(_section(nb, 'What you will learn'))}")
            prerequisites.append(f"### {name}\n\n{text_of(_section(nb, 'Prerequisites'))}")
    cpu_device = next((rec.get("device") for t in timings.values() for p, rec in t.items()
                       if p in ("smoke", "default") and rec.get("device")), "this project's CI machine")
    gpu_note = ("A GPU time is the last recorded run of the `gpu` profile; a chapter never run on a GPU says so, and "
                "no GPU time is estimated." if any("gpu" in t for t in timings.values()) else
                "No chapter has been run on a GPU yet, so no GPU time is given (none is estimated); "
                "`medeval run <chapter> --profile gpu` on a GPU machine records one.")
    return f"""(for-teachers)=
# For teachers

Every chapter is a lesson: its objectives, prerequisites, a *Self-check* of multiple-choice and numeric questions
that answer in the page, and at least four exercises, one of each kind — **by hand** (a metric on a tiny example from
the paper), **coding** (implement the metric and check it against medeval), **experimental** (re-run a piece of the
chapter with another parameter and interpret it) and **critical** (is the paper's claim supported? the chapter's
Paper-vs-us table and figures are the evidence). Solutions are collapsed under each exercise; a student edition of the
book leaves them out entirely. Students work in notebooks that hold the exercises with stubs and a check after each
one, and an answer cell for every part asked in words; `medeval grade` scores a handed-in notebook exercise by
exercise with otter-grader, and `medeval answers` collects the written answers for the teacher.

{semester_markdown(course, linked)}
## Chapters, exercises and running times

| Chapter | Weeks | Reading | Exercises | Student time (estimated) | Time to run on 2 CPU cores (smoke / default) | On a GPU (`gpu` profile) |
| --- | --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

*Reading* is the chapter's text without its self-check, exercises and provenance, at {READING_WORDS_PER_MINUTE} words
a minute (the same figure heads each chapter page). The running times are the last measured runs of the whole
chapter ({cpu_device}), read from `results/timings.json`;
a laptop with more cores is faster. {gpu_note} The exercises of a chapter run in seconds. **In class**, run the
`smoke` profile (seconds; the numbers are too few to decide claims, which the chapter says) or show the book, which
was built with `default`; give `default` runs (`medeval run <chapter>`) as homework, and the `gpu` and `full`
profiles to students with a GPU.

## Handing out and grading

1. `make student` (or `medeval student 03-eve 04b-evaluation-measures`) writes, for each chapter,
   `_build/teaching/student/<chapter>/<chapter>.ipynb` with the exercises, stubs in place of the solutions, a
   `grader.check("…")` cell after each exercise and an answer cell for each part asked in words, and its `tests/`
   folder; hand out that folder. It also writes `_build/teaching/teacher/<chapter>/` (solutions and checks; keep
   it). Before writing anything it executes the teacher version and refuses if a solution fails its own checks.
   Students do not need this repository, which holds every solution: the README's *Teaching* section says how to
   install medeval for them from a wheel, with `params/` and `data/` only.
2. Students open the notebook in JupyterLab (`make lab`; it works as root too) or any Jupyter, fill in the cells
   that hold `...` and the answer cells, and run each `grader.check` cell for feedback.
3. `medeval grade path/to/handed-in.ipynb` executes the notebook in a kernel of its own, in an empty folder, with a
   timeout per cell and per notebook, and scores each exercise against the hidden checks, whose expected values
   were stored as constants when the assignment was made (the student's `tests/` folder holds one public sanity
   check per exercise); `--json` for a gradebook, `medeval grade FOLDER --csv` for a class (with
   `--teacher-scores` to merge the marks given by hand). A cell that raises costs its exercise the points and is
   reported by name; past a timeout or a dying kernel, the exercises before keep their scores. Code that imports
   otter, names a `tests` folder, assigns to a module's attribute or calls the function an exercise is checked
   against is flagged for the teacher.
4. `medeval answers FOLDER --out answers.html` reads every handed-in notebook in a folder and writes one HTML page
   with, per student, each teacher-read answer (the written parts, the interpretations of experimental exercises and
   the critical essays) beside the model answer and the rubric above.
5. `medeval book --no-solutions` builds a student edition of the book (`_build/book/default-student/`) without any
   solution.

## Learning objectives

{chr(10).join(objectives)}

## Prerequisites

{chr(10).join(prerequisites)}

## Licence

The code is MIT-licensed; the text and figures of the book are licensed under
[CC BY 4.0](https://creativecommons.org/licenses/by/4.0/) (`LICENSE-CONTENT`): reuse them in a course, with
attribution. `CITATION.cff` says how to cite the compendium and the five papers it reproduces.
"""
