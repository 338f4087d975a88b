"""The semester plan (issue #34, item 6): ``teaching/course.yaml`` is complete, follows the prerequisites, and a
broken plan is refused with the file and the field named."""

from __future__ import annotations

import pytest
import yaml

from medeval.runtime import course as course_module
from medeval.runtime.course import CourseError, course_path, course_problems, load_course, parse_course
from medeval.runtime.params import chapters
from medeval.runtime.teaching import read_exercises


@pytest.fixture(scope="module")
def exercises():
    return {cid: read_exercises(cid).exercises for cid in chapters()}


@pytest.fixture(scope="module")
def course():
    return load_course(check=False)


def test_the_course_file_is_sound(course, exercises):
    assert course_problems(course, exercises) == []
    assert 12 <= len(course.weeks) <= 14


def test_every_exercise_of_every_chapter_has_minutes_and_one_week(course, exercises):
    for cid, exs in exercises.items():
        for e in exs:
            assert course.plan_of(e.label).minutes > 0, e.label
            if cid in course.unplanned:  # a scaffolded chapter: minutes, no week yet (course_problems checks why)
                continue
            week, where = course.week_of(e.label)
            assert where in ("class", "homework")
            assert any(p.chapter == cid for w in course.weeks[:week.week] for p in w.parts), e.label


def test_no_week_needs_a_concept_taught_later(course):
    taught = {name: w.week for w in course.weeks for name in w.teaches}
    for week in course.weeks:
        for name in week.needs:
            assert taught[name] <= week.week, f"week {week.week} needs {name}, taught in week {taught[name]}"


def test_every_chapter_reference_in_a_prerequisites_section_is_planned(course):
    """The needs are derived from the chapters' own text: a chapter whose Prerequisites section refers to another
    chapter gets a concept from it in one of its weeks (or the course file says why the reference is a look-up)."""
    assert course_module.stated_prerequisites("04b-evaluation-measures") == {"04a-class-distribution"}
    assert course_module.stated_prerequisites("03-eve") == {"04b-evaluation-measures", "05-multilabel"}
    assert course_module.unplanned_prerequisites(course) == []


def test_the_issue_s_order_problems_are_gone(course):
    """Issue #34: 04b's experiments need 04a's En/Ep/H2, 04a needs 03, 03's last section needs 05, 02 needs 01."""
    first = {}
    for w in course.weeks:
        for p in w.parts:
            first.setdefault(p.chapter, w.week)
    last_part = {p.chapter: w.week for w in course.weeks for p in w.parts}
    assert last_part["04b-evaluation-measures"] > first["04a-class-distribution"]
    assert first["03-eve"] < first["04a-class-distribution"]
    assert last_part["03-eve"] >= first["05-multilabel"]
    assert first["01-mil-stability"] < first["02-rodeo"]


def test_assessment_weights_sum_to_100_and_rubrics_to_the_question_points(course):
    assert sum(a.weight for a in course.assessment) == pytest.approx(100)
    for kind, criteria in course.rubrics.items():
        assert sum(c.points for c in criteria) == pytest.approx(course_module.RUBRIC_POINTS), kind


def test_written_parts_are_the_exercises_that_ask_why_prove_or_show(course, exercises):
    """Every by-hand or coding prompt that asks "why", "prove", "show that" or "explain" has a written part in the
    course file (the twelve listed there were read and chosen by hand; this guards against a new one)."""
    import re

    asks = re.compile(r"\b(why|prove|show that|explain)\b", re.I)
    written = {label for cid in exercises for label in course.written_parts(cid)}
    for exs in exercises.values():
        for e in exs:
            if e.kind in ("by-hand", "coding") and asks.search(e.prompt):
                assert e.label in written, e.label
    assert len({label for cid in exercises if cid not in course.unplanned for label in course.written_parts(cid)}) == 12


def _broken(edit) -> str:
    raw = yaml.safe_load(course_path().read_text())
    edit(raw)
    return yaml.safe_dump(raw, sort_keys=False)


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["weeks"][2]["needs"].append("multilabel-measures"),
     r"weeks\[3\]\.needs: 'multilabel-measures' is taught later, in week 8"),
    (lambda r: r["exercises"]["03-eve"].pop("ex-eve-code"), r"exercises\.03-eve\.ex-eve-code: no entry"),
    (lambda r: r["assessment"][0].update(weight=35), "the weights sum to 105; expected 100"),
    (lambda r: r["weeks"][1]["homework"]["exercises"].append("ex-eve-code"),
     r"ex-eve-code is assigned before its chapter 03-eve"),
    (lambda r: r["exercises"]["03-eve"]["ex-eve-critical"].update(written="why?"),
     r"ex-eve-critical\.written: only a by-hand or coding exercise"),
    (lambda r: r["weeks"][13]["in_class"]["exercises"].append("ex-eve-hand"), "ex-eve-hand is assigned already"),
])
def test_a_broken_plan_is_refused_naming_the_field(tmp_path, exercises, edit, message):
    path = tmp_path / "course.yaml"
    path.write_text(_broken(edit))
    with pytest.raises(CourseError, match=message):
        problems = course_problems(parse_course(path.read_text(), path), exercises)
        if problems:
            raise CourseError(f"{path}:\n  " + "\n  ".join(problems))


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["exercises"]["03-eve"]["ex-eve-hand"].update(minutes=0), r"exercises\.03-eve\.ex-eve-hand\.minutes"),
    (lambda r: r["weeks"].__delitem__(slice(3, None)), r"weeks: List should have at least 12 items"),
    (lambda r: r["weeks"][0].update(week=2), r"weeks must be numbered 1, 2"),
    (lambda r: r["weeks"][0].update(homework_hours=3), r"weeks\.0\.homework_hours: Extra inputs"),
])
def test_a_malformed_file_is_refused_before_any_check(tmp_path, edit, message):
    path = tmp_path / "course.yaml"
    path.write_text(_broken(edit))
    with pytest.raises(CourseError, match=f"{path}: .*{message}"):
        load_course(path)


def test_a_missing_course_file_is_named(tmp_path):
    with pytest.raises(CourseError, match="no such course file"):
        load_course(tmp_path / "course.yaml")
