import json
from pathlib import Path

import pytest
from filelock import FileLock

from medeval.runtime.book import build_book
from medeval.runtime.execution import run_chapter
from medeval.runtime.params import chapters


@pytest.fixture(scope="session")
def smoke_book(shared_tmp, run_chapter_smoke):
    """The whole book built from the smoke-profile notebooks, once per test session: ``(html, out, logs)``.

    Under pytest-xdist the first worker that needs it builds it in the folder the workers share; the others wait
    for that build and read it."""
    out, done = shared_tmp / "smoke-book", shared_tmp / "smoke-book.json"
    with FileLock(shared_tmp / "smoke-book.lock"):
        if not done.exists():
            for chapter_id in chapters():  # under the shared locks: a chapter another worker runs is waited for
                run_chapter_smoke(chapter_id)
            logs: list[str] = []
            rerun = run_chapter("A2-rerun", "smoke", {"n_repeats": 5}, log=logs.append)  # shown in the Re-runs part
            html = build_book("smoke", out_dir=out, log=logs.append, reruns=[rerun.meta["run_id"]])
            done.write_text(json.dumps({"html": str(html), "logs": logs}))
    built = json.loads(done.read_text())
    return Path(built["html"]), out, built["logs"]


def _chapter_html(html, part: str, cid: str) -> str:
    """A chapter's rendered HTML, its page and its sub-pages (exercises; checks, errata and provenance) together."""
    page = html / part / f"{cid}.html"
    subs = sorted((html / part / cid).glob("*.html")) if (html / part / cid).is_dir() else []
    return "\n".join(p.read_text() for p in [page, *subs])


@pytest.fixture(scope="session")
def chapter_html():
    """``chapter_html(html, part, chapter)``: a chapter's page and its sub-pages, as one HTML text."""
    return _chapter_html
