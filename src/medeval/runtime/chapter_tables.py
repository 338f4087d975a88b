"""The chapter tables of ``README.md`` and ``book/intro.md``, generated from the registry's ``summary:`` entries.

Each file holds one table between two marker lines (:data:`TABLE_MARKERS`); ``medeval chapters --write-tables``
(:func:`write_chapter_tables`) rewrites it from ``params/*.yaml`` and ``tests/runtime/test_scaffold.py`` fails
while one is stale (:func:`stale_chapter_tables`). :func:`chapter_numbers` gives the book's number of each chapter,
which the verdict matrix and the student notebooks cite.
"""

from __future__ import annotations

from pathlib import Path

from medeval.core.schema import ParameterError
from medeval.runtime.params import Chapter, chapters
from medeval.runtime.paths import project_root

SUMMARY_KEYS = ("label", "paper", "reproduces", "cite", "about")
#: file -> (opening marker, closing marker); the lines between them are the generated table
TABLE_MARKERS = {
    "README.md": ("<!-- chapter table: generated from the summary of params/*.yaml by "
                  "`medeval chapters --write-tables`; edit it there -->", "<!-- end of chapter table -->"),
    "book/intro.md": ("% chapter table: generated from the summary of params/*.yaml by "
                      "`medeval chapters --write-tables`; edit it there", "% end of chapter table"),
}


def chapter_numbers(registry: dict[str, Chapter] | None = None) -> dict[str, int]:
    """The book's number of every numbered chapter by its page label (``ch-ml`` -> 6): the chapters of the part
    "chapters" in the registry's order, as the book's table of contents numbers them."""
    registry = chapters() if registry is None else registry
    numbered = [ch for ch in registry.values() if ch.part == "chapters"]
    return {ch.summary["label"]: n for n, ch in enumerate(numbered, start=1) if ch.summary.get("label")}


def chapter_numbers_by_id(registry: dict[str, Chapter] | None = None) -> dict[str, int]:
    """The book's number of every numbered chapter by its id (``05-multilabel`` -> 6), as
    :func:`chapter_numbers` gives it by page label."""
    registry = chapters() if registry is None else registry
    by_label = chapter_numbers(registry)
    return {cid: by_label[ch.summary["label"]] for cid, ch in registry.items() if ch.summary.get("label") in by_label}


def _summary(chapter: Chapter, key: str) -> str:
    value = chapter.summary.get(key)
    if key != "cite" and not value:
        raise ParameterError(f"{chapter.yaml_path}: summary.{key} is missing; expected keys {list(SUMMARY_KEYS)}")
    return str(value or "").replace("|", "\\|").strip()


def chapter_tables(registry: dict[str, Chapter] | None = None) -> dict[str, str]:
    """The chapter table of each file of :data:`TABLE_MARKERS`: every chapter and appendix page in the README,
    the numbered chapters (with links and citations) in the book's introduction."""
    registry = chapters() if registry is None else registry
    readme = ["| id | paper | what the chapter reproduces |", "|---|---|---|"]
    intro = ["| chapter | paper | what it is about |", "|---|---|---|"]
    number = 0
    for cid, ch in registry.items():
        readme.append(f"| `{cid}` | {_summary(ch, 'paper')} | {_summary(ch, 'reproduces')} |")
        if ch.part == "chapters":
            number += 1
            cite = _summary(ch, "cite")
            paper = f"{{cite:t}}`{cite}`" if cite else _summary(ch, "paper")
            intro.append(f"| {{ref}}`{number} <{_summary(ch, 'label')}>` | {paper} | {_summary(ch, 'about')} |")
    return {"README.md": "\n".join(readme), "book/intro.md": "\n".join(intro)}


def _with_table(text: str, name: str, table: str) -> str:
    start, end = TABLE_MARKERS[name]
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ParameterError(f"{name}: expected one chapter table between the lines {start!r} and {end!r}")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{table}\n{end}{tail}"


def stale_chapter_tables(root: Path | None = None) -> list[str]:
    """The files whose chapter table differs from the registry (empty when all are in sync)."""
    root = Path(root or project_root())
    tables = chapter_tables()
    return [name for name, table in tables.items()
            if _with_table((root / name).read_text(), name, table) != (root / name).read_text()]


def write_chapter_tables(root: Path | None = None) -> list[Path]:
    """Rewrite the chapter tables of README.md and book/intro.md from the registry; returns the files changed."""
    root = Path(root or project_root())
    changed = []
    for name, table in chapter_tables().items():
        path = root / name
        text = path.read_text()
        new = _with_table(text, name, table)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed
