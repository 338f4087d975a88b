"""The glossary (book/glossary.md) is well formed and cannot drift from the chapters: every term is defined once
with a non-empty definition, every term occurs in a chapter or appendix notebook, every equation it links to is
labelled in a notebook, the acronyms readers meet are all there, and the page is in the table of contents and
linked from the landing page. The chapters link it: every ``{term}`` role in a notebook names an entry, and in the
built smoke book (the tests marked ``book``, on the session's one build) every chapter page links the glossary and
every entry is linked from some page. The other tests parse the files only."""

import re
from pathlib import Path

import pytest
import yaml

from medeval.runtime.params import chapters

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "book" / "glossary.md"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))
DIRECTIVE = re.compile(r"^```\{glossary\}\n(?P<body>.*?)^```$", re.S | re.M)
EQ_ROLE = re.compile(r"\{eq\}`([^`]+)`")
EQ_LABEL = re.compile(r"^# \$\$ \(([^)]+)\)\s*$", re.M)  # a display equation's label in a jupytext notebook
DEFINITION_INDENT = "   "
TERM_ROLE = re.compile(r"\{term\}`(?P<text>[^`<]*?)\s*(?:<(?P<target>[^`>]+)>)?`")
GLOSSARY_LINK = re.compile(r'href="(?:\.\./)*glossary\.html#(term-[^"]+)"')

# Symbols and acronyms the chapters use without one place defining them (issue #31, item 9): each must have an
# entry.
REQUIRED = [
    "MIL", "bag", "instance", "LSE", "NOR", "noisy-OR", "S_J", "S_APJ", "S_AJ", "S_S",  # Chapter 1
    "IoU", "cIoU", "gIoU", "MCC", "acc@IoU", "AP@IoU", "mAP", "RoDeO",  # Chapter 2
    "EVE", "½EVE", "NEVE", "NFW", "CV", "LOO",  # Chapter 3
    "O", "C", "¬C", "C&¬C", "U", "E1.a–E4.c", "H1", "H2", "H3", "H4",  # Chapter 4
    "PR-T", "PR-AUC", "ROC-AUC", "TPR", "FPR", "En", "Ep", "trial-model",  # Chapter 5
    "LD", "LPD", "ED", "FZ", "FLZ", "FLPZ", "LCard", "LDens", "macro average", "micro average", "AP",  # Chapter 6
]


def parse_glossary(text: str) -> list[tuple[list[str], str]]:
    """The entries of the one ``{glossary}`` directive in ``text`` as ``(terms, definition)``, read by the rules of
    Sphinx's glossary: one or more unindented term lines, then a definition indented by three spaces; a blank line
    before the next term. Raises ``ValueError`` on any other layout."""
    blocks = DIRECTIVE.findall(text)
    if len(blocks) != 1:
        raise ValueError(f"expected one ```{{glossary}} block, found {len(blocks)}")
    lines = blocks[0].splitlines()
    if not lines or lines[0] != ":sorted:":
        raise ValueError("the glossary must open with the :sorted: option")
    entries: list[tuple[list[str], list[str]]] = []
    previous = ""
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            previous = ""
            continue
        if not line[0].isspace():  # a term
            if entries and not entries[-1][1]:
                if previous == "":
                    raise ValueError(f"line {number}: a blank line separates terms of one entry: {line!r}")
                entries[-1][0].append(line.strip())
            elif previous != "":
                raise ValueError(f"line {number}: term {line!r} must follow a blank line")
            else:
                entries.append(([line.strip()], []))
        else:
            if not entries:
                raise ValueError(f"line {number}: a definition before any term")
            if not line.startswith(DEFINITION_INDENT) or line[len(DEFINITION_INDENT)].isspace():
                raise ValueError(f"line {number}: a definition is indented by exactly three spaces: {line!r}")
            entries[-1][1].append(line.strip())
        previous = line
    return [(terms, " ".join(definition)) for terms, definition in entries]


def plain_text(source: str) -> str:
    """Notebook text with the TeX markup that a term's plain spelling leaves out removed: ``$``, braces and the
    font commands, and ``\\neg`` as ¬; so ``$S_{APJ}$`` reads ``S_APJ`` and ``$\\neg\\mathbb{C}$`` reads ``¬C``."""
    source = re.sub(r"\\(?:mathbb|mathrm|mathcal|operatorname|text)\b", "", source)
    return source.replace("\\neg", "¬").replace("$", "").replace("{", "").replace("}", "")


def occurs(term: str, text: str) -> bool:
    """Whether ``term`` occurs as a word in ``text`` (a plural ``s``/``es`` allowed). An acronym or symbol must
    match its case; a lower-case term may open a sentence."""
    pattern = rf"(?<!\w){re.escape(term)}(?:s|es)?(?!\w)"
    return re.search(pattern, text, 0 if term != term.lower() else re.I) is not None


def entries() -> list[tuple[list[str], str]]:
    return parse_glossary(GLOSSARY.read_text())


def test_every_term_is_defined_once_with_a_definition():
    found = entries()
    assert len(found) >= 40
    terms = [term for names, _ in found for term in names]
    # Sphinx reports a duplicate glossary term case-insensitively (a warning, so an error in this book's build)
    duplicates = sorted({t for t in terms if [u.lower() for u in terms].count(t.lower()) > 1})
    assert duplicates == [], "terms defined more than once"
    for names, definition in found:
        assert len(definition.split()) >= 8, f"{names}: the definition is missing or too short"
        assert re.search(r"Chapters? [1-6]|Appendix [AB]\b", definition), f"{names}: the definition names no chapter"
        assert " : " not in " ".join(names), f"{names}: ' : ' would make Sphinx read a classifier"


def test_every_term_occurs_in_a_notebook():
    text = "\n".join(plain_text(path.read_text()) for path in NOTEBOOKS)
    missing = [term for names, _ in entries() for term in names if not occurs(term, text)]
    assert missing == [], "glossary terms that no chapter or appendix uses"


def test_the_acronyms_readers_meet_are_defined():
    terms = {term for names, _ in entries() for term in names}
    assert sorted(set(REQUIRED) - terms) == []


def test_every_linked_equation_is_labelled_in_a_notebook():
    labels = {label for path in NOTEBOOKS for label in EQ_LABEL.findall(path.read_text())}
    assert len(labels) > 100
    linked = set(EQ_ROLE.findall(GLOSSARY.read_text()))
    assert linked, "the glossary links no equation"
    assert sorted(linked - labels) == [], "links to equation labels that no notebook defines"


def test_inline_math_stays_on_one_line():
    for number, line in enumerate(GLOSSARY.read_text().splitlines(), start=1):
        assert line.count("$") % 2 == 0, f"line {number}: inline math broken across lines"


def test_the_page_is_in_the_appendix_before_the_bibliography_and_linked_from_the_intro():
    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text())
    appendix = next(part for part in toc["parts"] if part["caption"] == "Appendix")
    files = [entry.get("file") for entry in appendix["chapters"]]
    assert "glossary" in files
    assert files.index("glossary") < files.index("bibliography")
    assert re.search(r"\]\(glossary\.md\)", (ROOT / "book" / "intro.md").read_text())


def test_the_checks_can_fail():
    good = "```{glossary}\n:sorted:\n\nEVE\nempirical variance estimator\n   The estimator.\n\nNFW\n   Naive.\n```\n"
    assert parse_glossary(good) == [(["EVE", "empirical variance estimator"], "The estimator."), (["NFW"], "Naive.")]
    for bad in (good.replace(":sorted:\n", ""),  # no :sorted:
                good.replace("   Naive.", "    Naive."),  # four spaces
                good.replace("\nNFW", "NFW"),  # no blank line before a term
                good.replace("EVE\nempirical", "EVE\n\nempirical"),  # a blank line between terms of one entry
                good.replace("```{glossary}", "```{note}")):  # no glossary at all
        try:
            parse_glossary(bad)
        except ValueError:
            continue
        raise AssertionError(f"accepted a malformed glossary: {bad!r}")
    assert plain_text(r"$S_{APJ}$ and $\neg\mathbb{C}$") == "S_APJ and ¬C"
    assert occurs("WSI", "whole-slide images (WSIs)") and not occurs("LD", "LDens only")
    assert occurs("kappa paradox", "Kappa paradoxes") and not occurs("EVE", "eve")


# --------------------------------------------------------------------------------------------------------------
# The chapters link the glossary: the first use in running prose of each term a chapter uses is a {term} role


def term_roles(text: str) -> list[str]:
    """The glossary entries that the ``{term}`` roles of ``text`` link, in order: the target of
    ``{term}`text <target>``` or the text of ``{term}`text```."""
    return [m["target"] or m["text"] for m in TERM_ROLE.finditer(text)]


def test_every_term_role_in_a_notebook_names_an_entry():
    names = {names[0] for names, _ in entries()}  # each entry's first line, as its roles name it
    used: dict[str, set[str]] = {}
    for path in NOTEBOOKS:
        text = path.read_text()
        assert text.count("{term}") == len(term_roles(text)), f"{path.name}: a {{term}} role that does not parse"
        for target in term_roles(text):
            used.setdefault(target, set()).add(path.stem)
    assert sorted(set(used) - names) == [], "{term} roles naming no glossary entry (by its first line)"
    for cid in chapters():
        per_chapter = [t for t, stems in used.items() if cid in stems]
        assert len(per_chapter) >= (3 if not cid.startswith("A") else 1), f"{cid} links {per_chapter}"
    # every entry is linked from some chapter or appendix
    assert sorted(names - set(used)) == [], "glossary entries that no notebook links"


def test_a_chapter_links_a_term_once_and_never_in_a_heading_or_math():
    for path in NOTEBOOKS:
        targets = term_roles(path.read_text())
        assert len(targets) == len(set(targets)), f"{path.name}: a term linked twice: {targets}"
        for line in path.read_text().splitlines():
            if "{term}" in line:
                assert not re.match(r"^# #+ ", line), f"{path.name}: a {{term}} role in a heading: {line}"
                assert not any("{term}" in m for m in re.findall(r"\$[^$]*\$", line)), f"{path.name}: in math"


def glossary_anchors(html: Path) -> list[list[str]]:
    """The anchors of the rendered glossary, one list per entry (an entry's term lines share one definition)."""
    page = (html / "glossary.html").read_text()
    groups: list[list[str]] = [[]]
    for m in re.finditer(r'<dt id="(term-[^"]+)"|<dd>', page):
        if m.group(1):
            groups[-1].append(m.group(1))
        elif groups[-1]:
            groups.append([])
    return [g for g in groups if g]


@pytest.mark.book
@pytest.mark.slow
def test_every_chapter_page_links_the_glossary(smoke_book):
    html, _, _ = smoke_book
    anchors = {a for group in glossary_anchors(html) for a in group}
    for cid, ch in chapters().items():
        links = GLOSSARY_LINK.findall((html / ch.part / f"{cid}.html").read_text())
        assert sorted(set(links) - anchors) == [], f"{cid}: links to no glossary anchor"
        if ch.part == "chapters":
            assert len(links) >= 3, f"{cid}: {len(links)} links to the glossary"


@pytest.mark.book
@pytest.mark.slow
def test_every_glossary_entry_is_linked_from_a_page(smoke_book):
    html, _, _ = smoke_book
    groups = glossary_anchors(html)
    assert len(groups) == len(entries()), "one group of anchors per glossary entry"
    linked = {a for page in html.rglob("*.html") if page.name not in ("glossary.html", "genindex.html")
              for a in GLOSSARY_LINK.findall(page.read_text())}
    assert [g for g in groups if not set(g) & linked] == [], "glossary entries that no page links"


def test_the_term_checks_can_fail():
    assert term_roles("a {term}`EVE` and {term}`phantoms <phantom>`, {term}`C <O>`") == ["EVE", "phantom", "O"]
    page = '<dt id="term-A">A</dt><dt id="term-B">B</dt><dd>x</dd><dt id="term-C">C</dt><dd>y</dd>'
    assert re.findall(r'<dt id="(term-[^"]+)"|<dd>', page) == ["term-A", "term-B", "", "term-C", ""]
    assert GLOSSARY_LINK.findall('<a href="../glossary.html#term-EVE">') == ["term-EVE"]
