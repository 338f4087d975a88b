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
* Every API entry that implements a chapter's equation says so: "Used in Eq. 3.2 (chapter)", with a link to the
  equation. The map is read from the staged chapters (:func:`equation_users`): an equation is used by the objects
  the prose after it names with ``{func}``, ``{class}`` or ``{meth}`` ("Implemented by ..."), so the chapters stay
  the one place where an object is tied to its equation.
"""

from __future__ import annotations

import importlib.util
import json
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


_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_FENCE = re.compile(r"^ {0,3}(?P<marker>`{3,}|~{3,}|:{3,})\s*(?P<info>.*)$")
_MATH_OPEN = re.compile(r"^\s*\$\$")
_MATH_CLOSE = re.compile(r"\$\$\s*(?:\((?P<label>[^()\s]+)\))?\s*$")
_OBJECT_REF = re.compile(r"\{(?:py:)?(?:func|class|meth)\}`(?P<target>[^`]+)`")


def _ref_target(text: str) -> str:
    """The object a role's text names: ``~medeval.a.b`` and ``title <medeval.a.b>`` both name ``medeval.a.b``."""
    explicit = re.search(r"<([^<>]+)>\s*$", text)
    return (explicit.group(1) if explicit else text).strip().lstrip("~!.")


def equation_users(markdown: str) -> dict[str, list[str]]:
    """``{object: [equation labels]}`` of one page's MyST markdown: which ``medeval`` objects implement which of its
    labelled equations.

    A labelled display equation (``$$ ... $$ (label)``) is used by every ``{func}``, ``{class}`` or ``{meth}``
    reference to a ``medeval.`` object in the prose that follows it, up to the next labelled equation or heading.
    Equations with no prose between them form one group (two equations, then "implemented by f and g"): the prose
    after the last of them follows each of them. References before the first equation of a section, and references
    inside code fences or display math, are attributed to nothing."""
    users: dict[str, list[str]] = {}
    group: list[str] = []  # the labelled equations the current prose follows
    prose_since_equation = True
    fences: list[tuple[str, bool]] = []  # the open fences, innermost last: (marker, holds code)
    lines = iter(markdown.splitlines())
    for line in lines:
        fence = _FENCE.match(line)
        if fence and fences and not fence["info"] and fence["marker"][0] == fences[-1][0][0] \
                and len(fence["marker"]) >= len(fences[-1][0]):
            fences.pop()  # closes the innermost fence
            continue
        if fences and fences[-1][1]:  # inside code
            continue
        if fence and (fence["marker"][0] != ":" or fence["info"].startswith("{")):
            fences.append((fence["marker"], not fence["info"].startswith("{")))  # a MyST directive holds prose
            if fence["info"].startswith("{dropdown}"):  # a folded "### " part of the book's Method: a new section
                group, prose_since_equation = [], True
            continue
        if _HEADING.match(line):
            group, prose_since_equation = [], True
            continue
        if _MATH_OPEN.match(line):
            closing = _MATH_CLOSE.search(line.strip()[2:]) if line.strip() != "$$" else None
            while closing is None:
                following = next(lines, None)
                if following is None:
                    return users
                closing = _MATH_CLOSE.search(following)
            if label := closing.group("label"):
                group = [*group, label] if not prose_since_equation else [label]
                prose_since_equation = False
            continue
        if not line.strip():
            continue
        prose_since_equation = True
        for ref in _OBJECT_REF.finditer(line):
            target = _ref_target(ref.group("target"))
            if target.startswith("medeval."):
                labels = users.setdefault(target, [])
                labels.extend(label for label in group if label not in labels)
    return users


#: the staged pages whose equations the API pages point back to: chapters, appendices and their sub-pages
EQUATION_PAGES = ("chapters/*.ipynb", "chapters/*/*.ipynb", "appendix/*.ipynb", "appendix/*/*.ipynb")


def notebook_markdown(path: Path) -> str:
    """The markdown cells of a notebook, in order, as one text (code cells are left out)."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                        for c in cells if c["cell_type"] == "markdown")


_DISPLAY_MATH = re.compile(r"\$\$(?P<body>.*?)\$\$\s*\((?P<label>[^()\s]+)\)", re.S)
_LATEX_NOISE = re.compile(r"\s+|&|\\[,;:!]|\\q?quad|\\(?:begin|end)\{[a-z*]+\}|[.,;]+$")


def _latex_key(text: str) -> str:
    return _LATEX_NOISE.sub("", text)


def equation_latex(markdown: str) -> dict[str, str]:
    """``{label: LaTeX}`` of the labelled display equations of a page's markdown."""
    return {m["label"]: m["body"] for m in _DISPLAY_MATH.finditer(markdown)}


def shows_equation(latex: str, docstring: str) -> bool:
    """Whether ``docstring`` writes (a row of) the equation ``latex``: a row of it (rows split at ``\\\\``) of
    at least 8 characters appears in the docstring once spaces, alignment marks, spacing commands and trailing
    punctuation are dropped on both sides."""
    doc = _latex_key(docstring.replace("\\\\", ""))
    rows = [_latex_key(row) for row in re.split(r"\\\\", latex)]
    return any(len(row) >= 8 and row in doc for row in rows)


def book_equation_latex(srcdir: Path) -> dict[str, str]:
    """``{label: LaTeX}`` over the staged chapters and appendices of a book source folder."""
    return {label: body for pattern in EQUATION_PAGES for page in sorted(Path(srcdir).glob(pattern))
            for label, body in equation_latex(notebook_markdown(page)).items()}


def book_equation_users(srcdir: Path) -> dict[str, list[tuple[str, list[str]]]]:
    """``{object: [(docname, [labels]), ...]}`` over the staged chapters and appendices of a book source folder."""
    found: dict[str, list[tuple[str, list[str]]]] = {}
    pages = {p.relative_to(srcdir).with_suffix("").as_posix(): p
             for pattern in EQUATION_PAGES for p in Path(srcdir).glob(pattern)}
    for docname, page in sorted(pages.items()):  # a chapter before its sub-pages
        for name, labels in equation_users(notebook_markdown(page)).items():
            if labels:
                found.setdefault(name, []).append((docname, labels))
    return found


def used_in_line(uses: list[tuple[str, list[str]]]) -> str:
    """The reST sentence an API entry gets: ``Used in :eq:`a`, :eq:`b` (:doc:`/chapters/x`).``"""
    parts = [", ".join(f":eq:`{label}`" for label in labels) + f" (:doc:`/{docname}`)" for docname, labels in uses]
    return "Used in " + "; ".join(parts) + "."


def collect_equation_users(app) -> None:
    app.medeval_equation_users = book_equation_users(Path(app.srcdir))
    app.medeval_equation_latex = book_equation_latex(Path(app.srcdir))


def equations_shown(uses: list[tuple[str, list[str]]], latex: dict[str, str], docstring: str):
    """``uses`` with each page's equations narrowed to those the docstring writes (:func:`shows_equation`): prose
    that names several functions after a group of equations ties each function to all of them, its docstring says
    which it computes. A page none of whose equations the docstring writes keeps them all (that chapter uses the
    object in its own notation, e.g. a bag AUC)."""
    out = []
    for doc, labels in uses:
        shown = [lab for lab in labels if lab in latex and shows_equation(latex[lab], docstring)]
        out.append((doc, shown or labels))
    return out


def api_pages_to_reread(app, env, added, changed, removed) -> list[str]:
    """Every API page, when the chapters tie objects to other equations than at the last build (an API page is
    otherwise re-read only when its own source changes)."""
    users = getattr(app, "medeval_equation_users", {})
    previous = getattr(env, "medeval_equation_users", None)
    env.medeval_equation_users = users
    if previous is None or previous == users:
        return []
    return sorted(d for d in env.found_docs if d.startswith("api/"))


def add_used_in(app, what, name, obj, options, lines) -> None:
    """After an implementing object's summary paragraph (napoleon has already turned the docstring into reST):
    the chapter equations that use it."""
    uses = getattr(app, "medeval_equation_users", {}).get(name)
    if not uses or not lines:
        return
    uses = equations_shown(uses, getattr(app, "medeval_equation_latex", {}), "\n".join(lines))
    start = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    lines[end:end] = ["", used_in_line(uses)]  # the summary's own blank line, if any, follows


def setup(app):
    app.setup_extension("sphinx.ext.autodoc")  # its event must exist before a handler is connected to it
    app.connect("builder-inited", collect_equation_users)
    app.connect("env-get-outdated", api_pages_to_reread)
    app.connect("autodoc-process-docstring", add_used_in, priority=600)  # after napoleon (500)
    app.connect("env-get-updated", letter_appendices, priority=900)  # after Sphinx numbered the figures
    app.connect("doctree-read", detach_nested_documents)
    app.connect("doctree-resolved", number_shared_ids)
    app.config.mathjax_path = "mathjax/tex-chtml.js"
    app.connect("build-finished", dedupe_scripts)
    app.connect("build-finished", copy_mathjax)
    app.connect("build-finished", drop_source_maps)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
