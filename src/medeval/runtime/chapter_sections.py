"""How a chapter's page is cut: its reading path, the sub-pages off it, and how long the reading path takes.

A chapter notebook stays whole; the book shows its reading path on the chapter's page and the sections a reader
works on or looks up on sub-pages (:data:`OFF_PATH_PAGES`, :func:`section_page`;
:func:`medeval.runtime.book.split_chapter_notebook` cuts the page). :func:`reading_time` counts the words of the
reading path, which heads each chapter page and the teachers' table.
"""

from __future__ import annotations

import re

#: a reader's pace through the chapters' technical prose, in words a minute (what :func:`reading_time` assumes)
READING_WORDS_PER_MINUTE = 200


#: the sections of a chapter (by the start of their "## " heading) that are not on its reading path, per sub-page of
#: the chapter that holds them in the book: (file stem, title, sections). They are worked on (self-check, exercises)
#: or looked up (checks, errata, provenance); the chapter's page keeps its objectives, key findings, method,
#: experiments and Paper-vs-us table (:func:`medeval.runtime.book.split_chapter_notebook`). The first page holds no
#: section by its title: an experiment goes there when the cell that opens it is tagged :data:`FURTHER_TAG`.
OFF_PATH_PAGES = (
    ("further", "More experiments", ()),
    ("exercises", "Self-check and exercises", ("Self-check", "Exercises", "Try it")),
    ("reference", "Checks, errata and provenance", ("Checks", "Deviations", "Provenance")),
)


#: the cell tag that sends the experiment a cell opens (its "## " section) to the chapter's "More experiments" page:
#: an ablation or a secondary figure a reader may skip; its claims stay in the chapter's Paper-vs-us table
FURTHER_TAG = "further"


_HEADING = re.compile(r"^## (?P<title>.+)$")


_LABEL = re.compile(r"^\(\S+\)=\s*$")


def split_at_headings(cell: dict) -> list[dict]:
    """A notebook cell (a dict) cut before each "## " heading of its source (a "(label)=" line right above stays
    with its heading), so that every piece starts at most one section; a cell without one comes back whole."""
    source = cell["source"]
    lines = ("".join(source) if isinstance(source, list) else str(source)).splitlines(keepends=True)
    starts = [0]
    for i, line in enumerate(lines):
        if i and _HEADING.match(line.rstrip("\n")):
            start = i - 1 if _LABEL.match(lines[i - 1]) else i
            if start > starts[-1]:
                starts.append(start)
    if len(starts) == 1:
        return [cell]
    pieces = []
    for a, b in zip(starts, starts[1:] + [len(lines)], strict=True):
        text = "".join(lines[a:b])
        if text.strip():
            pieces.append({**cell, "source": text, "metadata": dict(cell.get("metadata", {}))})
    return pieces


def section_title(source) -> str | None:
    """The title of the "## " section a cell's source opens (after blank and "(label)=" lines), else None."""
    for line in ("".join(source) if isinstance(source, list) else str(source)).splitlines():
        if _LABEL.match(line) or not line.strip():
            continue
        m = _HEADING.match(line)
        return m.group("title").strip() if m else None
    return None


def section_page(piece: dict) -> str | None:
    """The page of the chapter that the section a cell (or a piece of one, :func:`split_at_headings`) opens goes to:
    ``""`` for the chapter's own page, a stem of :data:`OFF_PATH_PAGES` for a sub-page (by the heading's start, or
    ``"further"`` for a cell tagged :data:`FURTHER_TAG`); None when the piece opens no section."""
    heading = section_title(piece["source"])
    if heading is None:
        return None
    if FURTHER_TAG in (piece.get("metadata") or {}).get("tags", []):
        return "further"
    return next((stem for stem, _, prefixes in OFF_PATH_PAGES if heading.startswith(prefixes)), "")


def reading_time(nb, words_per_minute: int = READING_WORDS_PER_MINUTE) -> dict:
    """How long a chapter takes to read: the words of its Markdown cells on the chapter's own page (not on a
    sub-page, :func:`section_page`; math, directive lines and MyST targets not counted; a folded part counts), at
    ``words_per_minute``, rounded up to whole minutes.
    ``nb`` is a notebook (nbformat); returns ``{"minutes", "words", "words_per_minute"}``."""
    words, on_path = 0, True
    pieces = [piece for cell in nb.cells if cell.cell_type == "markdown"  # sections as the book's pages cut them
              for piece in split_at_headings({"source": cell.source, "metadata": dict(cell.get("metadata", {}))})]
    for piece in pieces:
        page = section_page(piece)
        if page is not None:
            on_path = page == ""
        if not on_path:
            continue
        text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", piece["source"], flags=re.S)
        text = "\n".join(line for line in text.splitlines()
                          if not re.match(r"^\s*(`{3,}|:{3,}|\(\S+\)=|:\w+:|%)", line))
        words += len(re.findall(r"[A-Za-zÀ-ÿ0-9¬][\w'’-]*", text))
    return {"minutes": max(1, -(-words // words_per_minute)), "words": words, "words_per_minute": words_per_minute}
