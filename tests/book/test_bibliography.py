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
    "multilabel_cxr14_thesis": "an anonymous thesis chapter: its copy names neither author, thesis nor year, and no "
                               "public address was found",
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
    # RoDeO links the paper (PMLR 227, MIDL 2023: its arXiv DOI and OpenReview page); its code stays in the note
    rodeo = entries["meissen2023rodeo"].fields
    assert rodeo["doi"] == "10.48550/arXiv.2303.01920" and rodeo["url"] == "https://openreview.net/forum?id=zyiJi4sJ7dZ"
    assert (rodeo["volume"], rodeo["pages"]) == ("227", "568--585") and "github.com/FeliMe/RoDeO" in rodeo["note"]
    # Romanova's manuscript has no public address: its URL is the code repository the manuscript names, and the
    # entry says so
    romanova = entries["romanova2023stability"].fields
    assert romanova["url"] == "https://github.com/romanovar/evaluation_MIL"
    assert "code repository that the manuscript names" in romanova["note"]
    # the multi-label chapter's copy names no author: the entry says it is anonymous, so the book cites it as
    # "Anonymous, n.d." instead of by its title
    thesis = entries["multilabel_cxr14_thesis"]
    assert [str(p) for p in thesis.persons["author"]] == ["Anonymous"]
    assert thesis.fields["howpublished"].startswith("Anonymous thesis chapter") and thesis.fields["year"] == "n.d."


def test_the_checks_can_fail(tmp_path):
    assert CITE.findall("see {cite:p}`a2020,b2021` and {cite}`c`") == ["a2020,b2021", "c"]
