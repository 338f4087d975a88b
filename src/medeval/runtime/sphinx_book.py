"""The book's own Sphinx extension (listed in ``book/_config.yml``): front-end hygiene for the offline book.

* MathJax is served from the book itself (no network), and only the parts a page can load are shipped: the
  ``tex-chtml`` component, its web fonts and the TeX extensions its autoloader may fetch. The files come from the
  ``sphinx-mathjax-offline`` package, which would otherwise copy the whole 24 MB MathJax distribution.
* An inline script written twice into a page's head (``sphinx-thebe`` and ``sphinx-togglebutton`` register their
  configuration scripts twice under jupyter-book, so every page declared ``const THEBE_JS_URL`` twice and threw a
  SyntaxError) is kept once.
* Every id on a page is unique: ``sphinx-exercise`` gives every exercise's and every solution's body section the
  same id (``exercise-content``, ``solution-content``); each is numbered in page order.
* No source maps ship: the theme's ``*.map`` files (about 6.7 MB of the offline book) are deleted and the
  ``sourceMappingURL`` comments that name them are dropped from the scripts and styles.
* Doctrees are stored without the build environment. Nodes that autodoc creates inside a MyST ``eval-rst`` block
  keep a reference to the nested document MyST parsed them in, whose settings hold the whole ``BuildEnvironment``;
  every API page's pickled doctree therefore carried a copy of it (2.4 MB for a 25-line module), and loading those
  pickles was a fifth of the book's render time. The references are dropped once a page is read: a node without
  its own document uses its parent's.
* The appendices are lettered: the figures, tables, equations and exercises of the n-th appendix page (with its
  sub-pages) are numbered ``A.1``, ``A.2``, ... ``B.1``, ... instead of continuing one count across the appendices.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

# What tex-chtml.js loads at run time: the combined component, its CHTML web fonts and the autoloaded TeX packages.
MATHJAX_PARTS = ("tex-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions")


def mathjax_source() -> Path:
    """The MathJax 3 distribution shipped by ``sphinx-mathjax-offline``."""
    spec = importlib.util.find_spec("sphinx-mathjax-offline") or importlib.util.find_spec("sphinx_mathjax_offline")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("sphinx-mathjax-offline is not installed; `make env` installs it")
    return Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax"


def copy_mathjax(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source, target = mathjax_source(), Path(app.outdir) / "_static" / "mathjax"
    if target.exists():
        shutil.rmtree(target)
    for part in MATHJAX_PARTS:
        src, dst = source / part, target / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)


_INLINE_SCRIPT = re.compile(r"[ \t]*<script>(?:(?!</script>).)*</script>\n?", re.S)


def unique_inline_scripts(html: str) -> str:
    """``html`` with every repeated inline ``<script>`` in its head removed (the first copy is kept)."""
    head_end = html.find("</head>")
    if head_end < 0:
        return html
    head, seen = html[:head_end], set()

    def keep_first(match):
        body = match.group(0).strip()
        if body in seen:
            return ""
        seen.add(body)
        return match.group(0)

    return _INLINE_SCRIPT.sub(keep_first, head) + html[head_end:]


def dedupe_scripts(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = unique_inline_scripts(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


_SOURCE_MAP_COMMENT = re.compile(r"\n?(?://# sourceMappingURL=[^\n]*|/\*# sourceMappingURL=[^\n]*?\*/)[ \t]*(?=\n|$)")


def remove_source_maps(folder: Path) -> int:
    """Delete every ``*.map`` file under ``folder`` and the ``sourceMappingURL`` comments of its ``.js`` and
    ``.css`` files (a browser would request the missing map); returns the number of maps deleted."""
    maps = list(Path(folder).rglob("*.map"))
    for path in maps:
        path.unlink()
    for path in [*Path(folder).rglob("*.js"), *Path(folder).rglob("*.css")]:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        fixed = _SOURCE_MAP_COMMENT.sub("", text)
        if fixed != text:
            path.write_text(fixed, encoding="utf-8", errors="surrogateescape")
    return len(maps)


def drop_source_maps(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    remove_source_maps(Path(app.outdir) / "_static")


#: the ids sphinx-exercise gives every exercise's and every solution's body section
SHARED_IDS = ("exercise-content", "solution-content")


def number_shared_ids(app, doctree, docname=None) -> None:
    """Give the n-th section with one of :data:`SHARED_IDS` on a page the id ``<id>-<n>`` (from 1), so that no id
    repeats on the page."""
    from docutils import nodes

    seen: dict[str, int] = {}
    for section in doctree.findall(nodes.section):
        ids = section["ids"]
        for i, value in enumerate(ids):
            if value in SHARED_IDS:
                seen[value] = seen.get(value, 0) + 1
                ids[i] = f"{value}-{seen[value]}"


def detach_nested_documents(app, doctree) -> None:
    """Let every node of ``doctree`` resolve its document through its parent (docutils' ``Node.document``), so that
    no node keeps a nested parse's document, and with it the build environment, alive in the pickled doctree."""
    for node in doctree.findall():
        if getattr(node, "_document", None) is not None and node._document is not doctree:
            node._document = None


#: the folder of the book's appendix pages (``book/_toc.yml``: ``glob: appendix/*``)
APPENDIX_FOLDER = "appendix/"


def appendix_letters(docnames) -> dict[str, str]:
    """The letter of every appendix page: its top-level pages in order (A, B, ...), each sub-page
    (``appendix/A1-data/exercises``) with its page's letter."""
    tops = sorted({d[len(APPENDIX_FOLDER):].split("/", 1)[0] for d in docnames if d.startswith(APPENDIX_FOLDER)})
    letter = {top: chr(ord("A") + k) for k, top in enumerate(tops)}
    return {d: letter[d[len(APPENDIX_FOLDER):].split("/", 1)[0]] for d in docnames if d.startswith(APPENDIX_FOLDER)}


def lettered_numbers(fignumbers: dict, letters: dict[str, str]) -> dict:
    """``fignumbers`` (Sphinx's ``env.toc_fignumbers``: page -> kind -> id -> number tuple) with the numbers of the
    appendix pages in ``letters`` replaced by ``(letter, k)``: k counts each kind over a letter's pages in their old
    order (the order of the table of contents). Other pages keep theirs."""
    out = {doc: {kind: dict(ids) for kind, ids in kinds.items()} for doc, kinds in fignumbers.items()}
    found: dict[tuple[str, str], list] = {}
    for doc, kinds in fignumbers.items():
        if doc in letters:
            for kind, ids in kinds.items():
                found.setdefault((letters[doc], kind), []).extend((number, doc, i) for i, number in ids.items())
    for (letter, kind), items in found.items():
        for k, (_, doc, i) in enumerate(sorted(items), start=1):
            out[doc][kind][i] = (letter, k)
    return out


def letter_appendices(app, env):
    """``env-get-updated``, after Sphinx numbered the figures: the appendices' numbers lettered
    (:func:`lettered_numbers`); returns the appendix pages, whose numbers are written into them."""
    letters = appendix_letters(env.found_docs)
    env.toc_fignumbers = lettered_numbers(env.toc_fignumbers, letters)
    return sorted(d for d in letters if d in env.toc_fignumbers)


def setup(app):
    app.connect("env-get-updated", letter_appendices, priority=900)
    app.connect("doctree-read", detach_nested_documents)
    app.connect("doctree-resolved", number_shared_ids)
    app.config.mathjax_path = "mathjax/tex-chtml.js"
    app.connect("build-finished", dedupe_scripts)
    app.connect("build-finished", copy_mathjax)
    app.connect("build-finished", drop_source_maps)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
