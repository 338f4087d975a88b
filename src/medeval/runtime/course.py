"""The semester plan of the teaching edition, read from ``teaching/course.yaml``.

The file is data, not code: the concepts one chapter teaches and another uses, every exercise's estimated student
minutes and the part of it to be answered in words, the weeks (in-class and homework parts, the exercises
assigned, the concepts each week teaches and needs), the assessment weights and the rubrics of teacher-read
answers. :func:`load_course` validates it against the chapters' own exercises and refuses, naming the file and the
field, a plan that uses a concept in a week before the week that teaches it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

RUBRIC_POINTS = 2.0
"""What a teacher-read otter question is worth (:attr:`medeval.runtime.exercises.Exercise.points` of a critical
exercise, the interpretation of an experimental one, a written answer); every rubric sums to it."""


class CourseError(ValueError):
    """The course file is missing, malformed, or inconsistent with the chapters."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Concept(_Strict):
    """Something one chapter teaches that another uses."""

    chapter: str
    section: str = Field(description="the label of the section a student should have read")
    what: str


class ExercisePlan(_Strict):
    """An exercise's estimated working time and the part of it to answer in words."""

    minutes: int = Field(gt=0, le=240, description="estimated minutes of student work")
    written: str | None = Field(None, description="the question(s) of a by-hand or coding exercise answered in words")


class Part(_Strict):
    chapter: str
    sections: str


class Activity(_Strict):
    activity: str
    exercises: list[str] = []


class Week(_Strict):
    week: int = Field(ge=1)
    title: str
    parts: list[Part] = Field(min_length=1)
    teaches: list[str] = []
    needs: list[str] = []
    in_class: Activity
    homework: Activity


class AssessmentItem(_Strict):
    item: str
    counts: str
    weight: float = Field(gt=0, le=100)


class Criterion(_Strict):
    points: float = Field(gt=0)
    criterion: str


class Course(_Strict):
    """The whole plan; :func:`load_course` checks it against the chapters."""

    concepts: dict[str, Concept]
    pointers: dict[str, dict[str, str]] = {}
    exercises: dict[str, dict[str, ExercisePlan]]
    #: chapters outside the semester plan, with why (a chapter just scaffolded): their exercises need minutes, no week
    unplanned: dict[str, str] = {}
    weeks: list[Week] = Field(min_length=12, max_length=14)
    assessment: list[AssessmentItem] = Field(min_length=1)
    rubrics: dict[Literal["written", "interpretation", "critical"], list[Criterion]]

    @field_validator("weeks")
    @classmethod
    def _consecutive(cls, weeks: list[Week]) -> list[Week]:
        numbers = [w.week for w in weeks]
        if numbers != list(range(1, len(weeks) + 1)):
            raise ValueError(f"weeks must be numbered 1, 2, … in order; got {numbers}")
        return weeks

    def plan_of(self, label: str) -> ExercisePlan:
        for plans in self.exercises.values():
            if label in plans:
                return plans[label]
        raise KeyError(label)

    def week_of(self, label: str) -> tuple[Week, str]:
        """The week an exercise is assigned to, and whether in ``"class"`` or as ``"homework"``."""
        for week in self.weeks:
            if label in week.in_class.exercises:
                return week, "class"
            if label in week.homework.exercises:
                return week, "homework"
        raise KeyError(label)

    def written_parts(self, chapter: str) -> dict[str, str]:
        """The exercises of a chapter with a part answered in words: label → the question(s)."""
        return {label: p.written for label, p in self.exercises.get(chapter, {}).items() if p.written}


def course_path() -> Path:
    from medeval.runtime.paths import project_root

    return project_root() / "teaching" / "course.yaml"


def _field(loc) -> str:
    return ".".join(str(p) for p in loc)


def parse_course(text: str, path: Path | str = "course.yaml") -> Course:
    """Parse and validate the course file's text against the schema (no cross-checks with the chapters)."""
    import yaml

    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CourseError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise CourseError(f"{path}: expected a mapping with concepts, exercises, weeks, assessment and rubrics")
    try:
        return Course.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{_field(e['loc'])}: {e['msg']}" for e in exc.errors())
        raise CourseError(f"{path}: {problems}") from None


def course_problems(course: Course, exercises: dict[str, list] | None = None) -> list[str]:
    """Everything wrong with a parsed plan, as readable lines (empty when it is sound).

    ``exercises`` maps each chapter to its exercises (:class:`medeval.runtime.exercises.Exercise`), by default read
    from the chapters. Checked: concepts name known chapters; every exercise of every chapter has a plan, and no
    plan names an unknown exercise; a ``written`` part belongs to a by-hand or coding exercise; every exercise is
    assigned exactly once, in a week that covers its chapter or after; every concept a week needs is taught in
    that week or an earlier one (the prerequisites); the assessment weights sum to 100; each rubric sums to
    :data:`RUBRIC_POINTS`.
    """
    from medeval.runtime.params import chapters

    known = chapters()
    if exercises is None:
        from medeval.runtime.exercises import read_exercises

        exercises = {cid: read_exercises(cid).exercises for cid in known}
    problems: list[str] = []
    for name, concept in course.concepts.items():
        if concept.chapter not in known:
            problems.append(f"concepts.{name}.chapter: unknown chapter {concept.chapter!r}")
    kind_of = {e.label: e.kind for exs in exercises.values() for e in exs}
    chapter_of = {e.label: cid for cid, exs in exercises.items() for e in exs}
    for cid, exs in exercises.items():
        plans = course.exercises.get(cid, {})
        for e in exs:
            if e.label not in plans:
                problems.append(f"exercises.{cid}.{e.label}: no entry (every exercise needs its minutes)")
        for label, plan in plans.items():
            if label not in kind_of or chapter_of[label] != cid:
                problems.append(f"exercises.{cid}.{label}: the chapter has no such exercise")
            elif plan.written and kind_of[label] not in ("by-hand", "coding"):
                problems.append(f"exercises.{cid}.{label}.written: only a by-hand or coding exercise has a written "
                                f"part ({kind_of[label]} exercises are teacher-read already)")
    for cid in set(course.exercises) - set(exercises):
        problems.append(f"exercises.{cid}: unknown chapter")
    taught_in: dict[str, int] = {}
    for week in course.weeks:
        for name in week.teaches:
            if name not in course.concepts:
                problems.append(f"weeks[{week.week}].teaches: unknown concept {name!r}")
            elif name in taught_in:
                problems.append(f"weeks[{week.week}].teaches: {name!r} is taught already in week {taught_in[name]}")
            else:
                taught_in[name] = week.week
    started: dict[str, int] = {}
    assigned: dict[str, int] = {}
    for week in course.weeks:
        for part in week.parts:
            if part.chapter not in known:
                problems.append(f"weeks[{week.week}].parts: unknown chapter {part.chapter!r}")
            started.setdefault(part.chapter, week.week)
        for name in week.needs:
            if name not in course.concepts:
                problems.append(f"weeks[{week.week}].needs: unknown concept {name!r}")
            elif name not in taught_in:
                problems.append(f"weeks[{week.week}].needs: {name!r} is taught in no week")
            elif taught_in[name] > week.week:
                problems.append(f"weeks[{week.week}].needs: {name!r} is taught later, in week {taught_in[name]} "
                                f"({course.concepts[name].chapter})")
        for label in week.in_class.exercises + week.homework.exercises:
            if label in assigned:
                problems.append(f"weeks[{week.week}]: {label} is assigned already in week {assigned[label]}")
                continue
            assigned[label] = week.week
            if label not in chapter_of:
                problems.append(f"weeks[{week.week}]: unknown exercise {label!r}")
            elif started.get(chapter_of[label], week.week + 1) > week.week:
                problems.append(f"weeks[{week.week}]: {label} is assigned before its chapter "
                                f"{chapter_of[label]} is taught")
    for label in sorted(set(kind_of) - set(assigned)):
        if chapter_of[label] not in course.unplanned:
            problems.append(f"weeks: exercise {label} ({chapter_of[label]}) is assigned in no week")
    for cid in known:
        if cid not in started and exercises.get(cid) and cid not in course.unplanned:
            problems.append(f"weeks: chapter {cid} is taught in no week")  # (one being drafted has no exercises yet)
    for cid, why in course.unplanned.items():
        if cid not in known:
            problems.append(f"unplanned.{cid}: unknown chapter")
        elif cid in started:
            problems.append(f"unplanned.{cid}: the chapter is taught in week {started[cid]}; remove it from unplanned")
        elif not why.strip():
            problems.append(f"unplanned.{cid}: say why the chapter is outside the plan")
    total = sum(a.weight for a in course.assessment)
    if abs(total - 100) > 1e-9:
        problems.append(f"assessment: the weights sum to {total:g}; expected 100")
    for kind in ("written", "interpretation", "critical"):
        points = sum(c.points for c in course.rubrics.get(kind, []))
        if abs(points - RUBRIC_POINTS) > 1e-9:
            problems.append(f"rubrics.{kind}: the points sum to {points:g}; expected {RUBRIC_POINTS:g}")
    return problems


def load_course(path: Path | None = None, *, check: bool = True) -> Course:
    """Read ``teaching/course.yaml`` (or ``path``); with ``check``, refuse it when :func:`course_problems` finds
    anything, naming the file and every field at fault."""
    path = Path(path) if path is not None else course_path()
    if not path.is_file():
        raise CourseError(f"{path}: no such course file (the semester plan of the teaching edition)")
    course = parse_course(path.read_text(), path)
    if check:
        problems = course_problems(course)
        if problems:
            raise CourseError(f"{path}:\n  " + "\n  ".join(problems))
    return course


# --------------------------------------------------------------------------------------------------------------
# The prerequisites a chapter states in its own text

_REFERENCE = re.compile(r"\{(?:ref|numref|eq)\}`(?:[^`<]*<)?(?P<label>[^`>]+)>?`")


def chapter_label_stems() -> dict[str, str]:
    """Each chapter's label stem (``ch-eve`` and ``eve-method`` → ``eve``; ``app-data`` → ``data``) → chapter id."""
    from medeval.runtime.params import chapters

    stems = {}
    for cid, ch in chapters().items():
        m = re.search(r"^# \((?:ch|app)-([\w-]+)\)=", ch.notebook.read_text(), flags=re.M)
        if m:
            stems[m.group(1)] = cid
    return stems


def stated_prerequisites(chapter_id: str) -> set[str]:
    """The other chapters that a chapter's *Prerequisites* section refers to (by ``{ref}``, ``{numref}`` or
    ``{eq}`` to one of their labels)."""
    from medeval.runtime.exercises import read_chapter_source
    from medeval.runtime.params import chapters
    from medeval.runtime.teachers_page import _section

    stems = chapter_label_stems()
    text = _section(read_chapter_source(chapters()[chapter_id].notebook), "Prerequisites")
    found = set()
    for m in _REFERENCE.finditer(text):
        parts = m["label"].strip().split("-")
        for stem in (parts[1] if len(parts) > 1 and parts[0] in ("ch", "app", "eq", "fig", "tab") else None,
                     parts[0]):
            if stem in stems:
                found.add(stems[stem])
                break
    return found - {chapter_id}


def unplanned_prerequisites(course: Course) -> list[str]:
    """Chapters whose *Prerequisites* section refers to another chapter that no week of theirs needs a concept
    from, and that the course file does not list as a mere pointer (``pointers``)."""
    problems = []
    for cid in {p.chapter for w in course.weeks for p in w.parts}:
        needed = {course.concepts[n].chapter for w in course.weeks if any(p.chapter == cid for p in w.parts)
                  for n in w.needs if n in course.concepts}
        for other in sorted(stated_prerequisites(cid) - needed - set(course.pointers.get(cid, {}))):
            problems.append(f"{cid}: its Prerequisites refer to {other}, but no week of {cid} needs a concept "
                            f"from it (add it to the week's needs, or to pointers with why)")
    return sorted(problems)
