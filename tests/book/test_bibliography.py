"""The bibliography is complete and correct: every entry is cited, every citation has an entry, no placeholders,
and every entry carries a DOI or URL unless it is listed below with the reason it has none here."""

import re
from pathlib import Path

import pybtex.database

ROOT = Path(__file__).resolve().parents[2]
BIB = ROOT / "book" / "references.bib"
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")

# Works without a DOI or URL in references.bib, and why.
NO_LINK = {
    "romanova2023stability": "an unpublished manuscript (the copy in the compendium's papers); no address found",
    "multilabel_cxr14_thesis": "a thesis chapter whose copy names neither author nor year",
}


def cited_keys() -> dict[str, list[str]]:
    sources = [*ROOT.joinpath("notebooks").glob("*.py"), *ROOT.joinpath("book").glob("*.md"),
               ROOT / "src" / "medeval" / "runtime" / "book.py"]
    found: dict[str, list[str]] = {}
    for path in sources:
        for match in CITE.finditer(path.read_text()):
            for key in match.group(1).split(","):
                found.setdefault(key.strip(), []).append(path.name)
    return found


def test_every_entry_is_cited_and_every_citation_has_an_entry():
    entries = pybtex.database.parse_file(BIB).entries
    cited = cited_keys()
    assert sorted(set(entries) - set(cited)) == [], "uncited entries in references.bib"
    assert sorted(set(cited) - set(entries)) == [], "citations without an entry"


def test_every_chapter_cites_its_paper():
    papers = {"01-mil-stability": "romanova2023stability", "02-rodeo": "meissen2023rodeo", "03-eve": "mendelson2014eve",
              "04a-class-distribution": "reshma2021histology", "04b-evaluation-measures": "reshma2021histology",
              "05-multilabel": "multilabel_cxr14_thesis"}
    for chapter, key in papers.items():
        text = (ROOT / "notebooks" / f"{chapter}.py").read_text()
        assert key in {k.strip() for m in CITE.finditer(text) for k in m.group(1).split(",")}, chapter


def test_entries_have_links_and_no_placeholders():
    entries = pybtex.database.parse_file(BIB).entries
    for key, entry in entries.items():
        text = " ".join(str(v) for v in entry.fields.values()) + " " + " ".join(
            str(p) for people in entry.persons.values() for p in people)
        assert not re.search(r"Author of|placeholder|TODO|van Schoren", text, re.I), key
        if key not in NO_LINK:
            assert "doi" in entry.fields or "url" in entry.fields, f"{key} has neither DOI nor URL"
        if "doi" in entry.fields:
            assert re.fullmatch(r"10\.\d{4,9}/\S+", entry.fields["doi"]), key
    assert set(NO_LINK) <= set(entries)
    # the three reproduced works found since (a DOI, a research-portal record, the thesis's laboratory page)
    assert entries["cheplygina2015label"].fields["doi"] == "10.1007/978-3-319-24553-9_66"
    assert "url" in entries["mendelson2014eve"].fields and "url" in entries["reshma2021histology"].fields


def test_the_checks_can_fail(tmp_path):
    assert CITE.findall("see {cite:p}`a2020,b2021` and {cite}`c`") == ["a2020,b2021", "c"]
