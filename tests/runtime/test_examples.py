"""Every ``--set`` example a reader can copy (README, CONTRIBUTING, the book's pages, the chapters' *Try it*
sections) names a real chapter and parameter and holds a value that the chapter's schema accepts, read as the
CLI reads it (:func:`medeval.runtime.params.parse_assignment`, then :func:`resolve_params` under the example's
profile). The book's introduction once showed ``--set n_pairs=200``, which the CLI refused."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from medeval.runtime.params import ParameterError, chapters, parse_assignment, resolve_params

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "book").glob("*.md")),
           *sorted((ROOT / "notebooks").glob("*.py"))]
CODE_SPAN = re.compile(r"`([^`]*--set[^`]*)`")


def set_examples() -> list[tuple[str, str, str, str]]:
    """``(where, chapter, profile, "name=value")`` for every --set example."""
    found = []
    for path in SOURCES:
        default_chapter = path.stem if path.parent.name == "notebooks" else None
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "--set" not in line:
                continue
            spans = CODE_SPAN.findall(line) or [line.split("#", 1)[0] if path.suffix == ".md" else ""]
            for span in spans:
                try:
                    tokens = shlex.split(span)
                except ValueError:
                    continue
                chapter = default_chapter
                if "run" in tokens and tokens.index("run") + 1 < len(tokens):
                    chapter = tokens[tokens.index("run") + 1]
                profile = tokens[tokens.index("--profile") + 1] if "--profile" in tokens else "default"
                for i, token in enumerate(tokens[:-1]):
                    placeholder = tokens[i + 1].startswith("name=")  # the syntax itself: `--set name=value`
                    if token == "--set" and "=" in tokens[i + 1] and chapter and not placeholder:
                        found.append((f"{path.relative_to(ROOT)}:{number}", chapter, profile, tokens[i + 1]))
    return found


EXAMPLES = set_examples()


def test_the_examples_are_found():
    where = {w.split(":")[0] for w, *_ in EXAMPLES}
    assert {"README.md", "book/intro.md"} <= where and len(EXAMPLES) >= 30, sorted(where)


@pytest.mark.parametrize(("where", "chapter", "profile", "assignment"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_every_set_example_is_accepted(where, chapter, profile, assignment):
    assert chapter in chapters(), f"{where}: unknown chapter {chapter!r}"
    key, value = parse_assignment(assignment)
    try:
        resolve_params(chapter, profile, {key: value})
    except ParameterError as exc:
        pytest.fail(f"{where}: `--set {assignment}` is refused: {exc}")


def test_a_refused_example_is_reported():
    with pytest.raises(ParameterError):
        resolve_params("03-eve", "default", {"n_pairs": 200})
