"""``medeval new-chapter ID --title ...``: a new chapter from the chapter template, passing the whole suite as
generated.

The template is a folder of real files, ``templates/chapter/``, laid out as the project is: ruff lints them, the
layer test reads their imports and a test reads the notebook with jupytext. Its placeholders are the chapter id
``00-template-chapter``, the module ``template_chapter`` (``template-chapter`` in labels) and the title
``Template chapter title``; :func:`new_chapter` copies every file with its own values:

* ``params/<id>.yaml`` — the registry entry: title, notebook, schema, datasets, the four profiles, the bounds of
  the executed parameter fuzz and the chapter's rows of the README and introduction tables (its ``cite`` is the
  data set's bibliography entry until the paper's is added);
* ``src/medeval/experiments/<module>_params.py`` — the :class:`~medeval.core.schema.ChapterParams` schema with
  its cross-field rules and resource estimate (imports nothing heavy, so refusals are fast);
* ``src/medeval/experiments/<module>.py`` — the experiment and the chapter's ``run(P, cache_dir) -> Results``;
* ``src/medeval/experiments/<module>_claims.py`` — ``ClaimInputs``, ``claim_inputs`` and the ``CLAIMS`` registry
  (:mod:`medeval.core.chapter`): one claim with its control, and a check that runs the rule on it;
* ``notebooks/<id>.py`` — the chapter notebook: key findings, method with a numbered equation, experiment and
  figure, Paper vs us, Checks, errata, a self-check, four exercises of the four kinds with solutions and checks,
  Try it and Provenance;
* ``tests/notebooks/test_<id>.py`` and ``tests/experiments/test_<module>.py`` — the smoke test and the claim
  rule's tests (it passes, it fails, its control cannot pass).

It also adds the chapter's exercises (their planned minutes) to ``teaching/course.yaml``, with the chapter under
``unplanned:`` until a teacher puts it into a week, and regenerates the README and introduction chapter tables
(:func:`medeval.runtime.chapter_tables.write_chapter_tables`); the book's table of contents picks the notebook up by its
part's glob, and the data manifest's ``used_by`` follows from the YAML's ``datasets``. The generated experiment
is small and real — the ROC-AUC of one WDBC feature over bootstrap resamples — and every piece is then replaced
by the paper's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from medeval.runtime.params import PARTS, ParameterError, chapters
from medeval.runtime.paths import project_root

CHAPTER_ID = re.compile(r"^(?:\d{2}[a-z]?|A\d+)-[a-z0-9]+(?:-[a-z0-9]+)*$")
#: the template folder, relative to the project root
TEMPLATE = Path("templates/chapter")
#: the template's placeholders, replaced in this order (the id before the label stem it contains)
PLACEHOLDERS = ("00-template-chapter", "template_chapter", "template-chapter", "Template chapter title")
#: the file the template adds to ``teaching/course.yaml`` (not copied)
COURSE_ENTRY = Path("teaching/course-entry.yaml")


@dataclass(frozen=True)
class Scaffold:
    """The files :func:`new_chapter` wrote, relative to the project root."""

    chapter_id: str
    module: str
    files: tuple[Path, ...]


def module_name(chapter_id: str) -> str:
    """``06-my-paper`` -> ``my_paper``: the chapter id without its number, as a Python identifier."""
    return chapter_id.split("-", 1)[1].replace("-", "_")


def fill(text: str, values: dict[str, str]) -> str:
    """``text`` with each of :data:`PLACEHOLDERS` replaced by its value."""
    for placeholder in PLACEHOLDERS:
        text = text.replace(placeholder, values[placeholder])
    return text


def template_files(root: Path) -> dict[Path, Path]:
    """Every file of the template (``__pycache__`` left out), keyed by its path relative to the template folder."""
    folder = root / TEMPLATE
    if not folder.is_dir():
        raise ParameterError(f"the chapter template {TEMPLATE}/ is missing from {root}")
    return {p.relative_to(folder): p for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and p.relative_to(folder) != COURSE_ENTRY}


def _values(chapter_id: str, module: str, title: str) -> dict[str, str]:
    return {"00-template-chapter": chapter_id, "template_chapter": module,
            "template-chapter": module.replace("_", "-"), "Template chapter title": title.strip().replace('"', "'")}


def new_chapter(chapter_id: str, title: str, *, part: str = "chapters", module: str | None = None,
                root: Path | None = None) -> Scaffold:
    """Write a new chapter's files (refusing to overwrite any), plan its exercises' minutes and regenerate the
    chapter tables."""
    root = Path(root or project_root())
    if not CHAPTER_ID.match(chapter_id):
        raise ParameterError(f"chapter id {chapter_id!r}: expected a number and words joined by '-', e.g. "
                             "'06-my-paper' or 'A3-extra'")
    if part not in PARTS:
        raise ParameterError(f"part must be one of {list(PARTS)}, got {part!r}")
    if not title.strip():
        raise ParameterError("--title must not be empty")
    if chapter_id in chapters():
        raise ParameterError(f"chapter {chapter_id!r} exists already (params/{chapter_id}.yaml)")
    module = module or module_name(chapter_id)
    if not module.isidentifier():
        raise ParameterError(f"module name {module!r} is not a Python identifier; pass --module")
    values = _values(chapter_id, module, title)
    targets = {Path(fill(str(rel), values)): source for rel, source in template_files(root).items()}
    existing = [str(p) for p in targets if (root / p).exists()]
    if existing:
        raise ParameterError(f"refusing to overwrite existing files: {existing}")
    course = planned_course(root, chapter_id, values)
    for path, source in targets.items():
        text = fill(source.read_text(), values)
        if path.suffix == ".yaml" and path.parts[0] == "params":
            text = text.replace("part: chapters", f"part: {part}", 1)
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / "teaching" / "course.yaml").write_text(course)
    from medeval.runtime.chapter_tables import write_chapter_tables

    changed = write_chapter_tables(root)
    return Scaffold(chapter_id, module, (*targets, Path("teaching/course.yaml"),
                                         *(p.relative_to(root) for p in changed)))


def planned_course(root: Path, chapter_id: str, values: dict[str, str]) -> str:
    """``teaching/course.yaml`` with the new chapter's exercises (from the template's ``course-entry.yaml``) and
    its line under ``unplanned:``, inserted as text so that the file's comments stay; checked by parsing it."""
    import yaml

    from medeval.runtime.course import parse_course

    path = root / "teaching" / "course.yaml"
    text = path.read_text()
    entry = yaml.safe_load(fill((root / TEMPLATE / COURSE_ENTRY).read_text(), values))
    exercises = "".join(f"    {label}: {_flow(plan)}\n" for label, plan in entry["exercises"].items())
    if not re.search(r"^exercises:\n", text, flags=re.M):
        raise ParameterError(f"{path}: no top-level 'exercises:' mapping to add the chapter's exercises to")
    text = re.sub(r"^exercises:\n", lambda m: f"exercises:\n  {chapter_id}:\n{exercises}", text, count=1, flags=re.M)
    line = f"  {chapter_id}: {_flow(entry['unplanned'])}\n"
    if re.search(r"^unplanned:\n", text, flags=re.M):
        text = re.sub(r"^unplanned:\n", lambda m: f"unplanned:\n{line}", text, count=1, flags=re.M)
    else:
        text = (text.rstrip("\n") + "\n\n# Chapters outside the semester plan, with why: their exercises have their minutes "
                "above and no week yet.\nunplanned:\n" + line)
    parse_course(text, path)
    return text


def _flow(value) -> str:
    """A YAML flow value on one line (``{minutes: 20}``, a quoted string)."""
    import yaml

    return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10**6).strip().removesuffix("...").strip()
