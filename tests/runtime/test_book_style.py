"""The book's shared presentation helpers: colours, figure legibility, formatted tables, front-end hygiene."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from medeval import plots  # noqa: E402
from medeval.runtime import notebook  # noqa: E402
from medeval.runtime.sphinx_book import MATHJAX_PARTS, mathjax_source, unique_inline_scripts  # noqa: E402


def test_every_named_thing_has_one_colour_and_a_figure_never_repeats_one():
    for family, members in plots.COLORS.items():
        groups = plots.DRAWN_TOGETHER.get(family, [tuple(members)])
        assert {n for g in groups for n in g} == set(members), f"{family}: every member belongs to a drawn group"
        for group in groups:
            by_colour = {}
            for name in group:
                by_colour.setdefault(members[name].lower(), set()).add(name)
            repeated = {c: n for c, n in by_colour.items() if len(n) > 1 and not _aliases(n)}
            assert not repeated, f"family {family!r} repeats colours within {group}: {repeated}"
        assert all(c.startswith("#") and len(c) == 7 for c in members.values())


def _aliases(names: set[str]) -> bool:
    """Names of one thing (they may share a colour)."""
    known = [{"fold-wise", "NFW"}, {"auc", "AUC", "ROC-AUC"}, {"PR-AUC", "AP"}, {"sensitivity", "recall"}]
    return any(names <= group for group in known)


def test_the_colour_rule_can_fail(monkeypatch):
    monkeypatch.setitem(plots.COLORS, "operator", {**plots.COLORS["operator"], "median": plots.COLORS["operator"]["max"]})
    with pytest.raises(AssertionError, match="repeats colours"):
        test_every_named_thing_has_one_colour_and_a_figure_never_repeats_one()


def test_colour_lookup_names_the_family_and_the_known_names():
    assert plots.color("operator", "max") == plots.COLORS["operator"]["max"]
    with pytest.raises(KeyError, match="known"):
        plots.color("operator", "median")
    with pytest.raises(KeyError, match="families"):
        plots.color("no-such-family", "x")


def test_palette_is_colour_blind_safe_okabe_ito():
    assert set(plots.PALETTE) == {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
                                  "#F0E442"}


def test_a_legible_figure_passes_and_each_problem_is_named():
    plots.apply_book_style()
    fig, (ax,) = plots.new_axes(width=6.0)
    ax.plot([0, 1], [0, 1], label="a")
    ax.set(xlabel="x", ylabel="y", title="fine")
    ax.legend()
    assert plots.legibility_problems(fig) == []
    plt.close(fig)
    wide, ax = plt.subplots(figsize=(12, 3))
    ax.text(0.1, 0.1, "tiny", fontsize=6)
    ax.text(0.1, 0.1, "on top")
    problems = " ".join(plots.legibility_problems(wide))
    assert "12.0 in wide" in problems and "below 9 pt" in problems and "overlapping" in problems
    with pytest.raises(ValueError, match="not legible"):
        plots.glue_figure("fig-test", wide, takeaway="The text overlaps.")
    # a code name on an axis (issue #31: 'S_APJ' while the text typesets $S_{APJ}$); math and words pass
    coded, (ax,) = plots.new_axes(width=6.0)
    ax.set(xlabel="mean bag_auc", ylabel="S_APJ")
    ax.set_yticks([0, 1], ["Pleural_Thickening", "Mass"])
    assert "code names where a reader expects words or math: Pleural_Thickening, S_APJ, bag_auc" in " ".join(
        plots.legibility_problems(coded))
    ax.set(xlabel="mean bag AUC", ylabel="$S_{APJ}$")
    ax.set_yticks([0, 1], ["Pleural thickening", "Mass"])
    assert plots.legibility_problems(coded) == []
    plt.close(coded)
    # categorical tick labels exist only once the figure is drawn (a bar chart of the findings by their table names)
    bars, (ax,) = plots.new_axes(width=6.0)
    ax.barh(["Pleural_Thickening", "Mass"], [0.03, 0.05])
    assert "Pleural_Thickening" in " ".join(plots.legibility_problems(bars))
    plt.close(bars)


def test_new_axes_never_exceeds_the_content_column():
    fig, axes = plots.new_axes(ncols=4)
    assert fig.get_size_inches()[0] <= plots.MAX_WIDTH_IN and len(axes) == 4
    plt.close(fig)
    gallery = plots.image_gallery([np.zeros((4, 4))] * 6, ncols=6)
    assert gallery.get_size_inches()[0] <= plots.MAX_WIDTH_IN + 1e-9
    plt.close(gallery)


def test_column_formats_round_per_column_and_mark_missing_values():
    fmt = notebook.column_formatter([0.123456, 0.5, float("nan")])
    assert [fmt(v) for v in (0.123456, 0.5, float("nan"))] == ["0.123", "0.500", "—"]
    assert notebook.column_formatter([1200, 3])(1200) == "1,200"
    assert notebook.column_formatter([1.2e-6, 3.4e-5])(3.4e-5) == "3.40e-05"
    assert notebook.column_formatter([123.456, 7.1])(7.1) == "7"  # 3 significant digits of the largest value
    assert notebook.column_formatter([True, False])(True) == "yes"
    assert notebook.column_formatter([[1, 2], None])([1, 2]) == "1, 2"


def test_show_table_formats_wraps_and_captions():
    frame = pd.DataFrame({"subset_size": [10, 20], "mean_score": [0.812345, 0.9], "note": ["a", None]})
    html = notebook.show_table(frame, caption="A caption", formats={"mean_score": "{:.1%}"})._repr_html_()
    assert 'class="medeval-table-box"' in html and "overflow-x:auto" in html
    assert "A caption" in html and "subset size" in html and "81.2%" in html and "—" in html
    assert "0.812345" not in html


def test_claims_table_keeps_full_text_inside_the_column():
    long = "x " * 200
    rows = [{"id": "r1", "claim": long, "where": "Sec. 1", "paper": "p", "ours": "o", "basis": "phantom",
             "scale": "smoke", "n": 3, "test": "Welch", "effect": "d = 1", "verdict": "[~]", "reason": long}]
    html = notebook.claims_display(rows)._repr_html_()
    assert html.count(long.strip()) == 2 and 'id="claim-r1"' in html
    assert "min-width:1500px" not in html and "table-layout" not in html  # width comes from the book's CSS


def test_duplicate_inline_scripts_are_written_once():
    head = ('<html><head>\n<script>const THEBE_JS_URL = "x";</script>\n<script src="a.js"></script>\n'
            '<script>const THEBE_JS_URL = "x";</script>\n</head><body><script>const THEBE_JS_URL = "x";</script>'
            "</body></html>")
    fixed = unique_inline_scripts(head)
    assert fixed.count('const THEBE_JS_URL = "x";') == 2  # once in the head, the body is left alone
    assert '<script src="a.js"></script>' in fixed
    assert unique_inline_scripts(fixed) == fixed


def test_only_the_used_mathjax_parts_are_shipped():
    source = mathjax_source()
    shipped = sum(f.stat().st_size for part in MATHJAX_PARTS for f in
                  ([source / part] if (source / part).is_file() else (source / part).rglob("*")) if f.is_file())
    everything = sum(f.stat().st_size for f in source.rglob("*") if f.is_file())
    assert (source / "tex-chtml.js").exists()
    assert shipped < 0.15 * everything, (shipped, everything)


def test_mean_sd_has_one_nan_policy_for_every_chapter():
    import numpy as np

    from medeval.runtime.notebook import mean_sd

    nbsp = "\u00a0"
    assert mean_sd([0.5, np.nan, 0.25], [0.1, 0.2, np.nan]) == [f"0.500{nbsp}±{nbsp}0.100", "—", "0.250"]
    assert mean_sd([1.0], [0.05], digits=2) == [f"1.00{nbsp}±{nbsp}0.05"]
    assert mean_sd([np.inf], [0.1]) == ["—"]
    with pytest.raises(ValueError, match="same"):
        mean_sd([1.0, 2.0], [0.1])


def test_source_maps_are_removed_with_the_comments_that_name_them(tmp_path):
    from medeval.runtime.sphinx_book import remove_source_maps

    static = tmp_path / "_static"
    (static / "scripts").mkdir(parents=True)
    (static / "scripts" / "a.js").write_text("var a = 1;\n//# sourceMappingURL=a.js.map\n")
    (static / "scripts" / "a.js.map").write_text("{}")
    (static / "b.css").write_text("p { color: red }\n/*# sourceMappingURL=b.css.map*/")
    (static / "b.css.map").write_text("{}")
    (static / "c.js").write_text("var url = 'x.map';\n")
    assert remove_source_maps(static) == 2
    assert not list(static.rglob("*.map"))
    assert (static / "scripts" / "a.js").read_text() == "var a = 1;\n"
    assert (static / "b.css").read_text() == "p { color: red }"
    assert (static / "c.js").read_text() == "var url = 'x.map';\n"


def test_exercise_sections_get_ids_unique_on_their_page():
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    from medeval.runtime.sphinx_book import number_shared_ids

    doc = new_document("page", get_default_settings(Parser))
    for name in ("exercise-content", "solution-content", "exercise-content", "other"):
        doc += nodes.section(ids=[name])
    number_shared_ids(None, doc, "page")
    assert [s["ids"] for s in doc.findall(nodes.section)] == [
        ["exercise-content-1"], ["solution-content-1"], ["exercise-content-2"], ["other"]]


def test_claims_table_is_grouped_by_verdict_with_a_one_line_why_and_the_decision_in_a_dropdown():
    from medeval.runtime.notebook import REASON_GLANCE_CHARS, reason_at_a_glance

    reason = "The models did not train; their AUC is 0.51. " + "More detail follows here. " * 20
    rows = [{"id": f"r{i}", "claim": f"claim {i}", "where": "Sec. 1", "paper": "p", "ours": "o", "basis": "phantom",
             "scale": "smoke", "n": 3, "test": "Welch", "effect": "d = 1", "verdict": v, "reason": reason}
            for i, v in enumerate(["[~]", "[Re]", "[n/a]", "[¬Re]", "[Re]"])]
    html = notebook.claims_display(rows)._repr_html_()
    assert [html.index(f'id="claim-r{i}"') for i in (1, 4, 3, 0, 2)] == sorted(
        html.index(f'id="claim-r{i}"') for i in range(5))  # [Re], [¬Re], [~], [n/a]; chapter order within
    assert html.count("<details><summary>how it was decided</summary>") == 5
    assert html.count("<td>The models did not train</td>") == 5  # the first clause, at a glance
    assert html.count(reason.strip()) == 5  # the whole reason, in the dropdown
    # the decided rows are shown; the inconclusive and untestable ones follow, collapsed under their count
    fold = html.index("<summary>1 inconclusive at this scale and 1 not testable here: the rows")
    assert html.index('id="claim-r3"') < fold < html.index('id="claim-r0"') < html.index('id="claim-r2"')
    assert html.count('<table class="medeval-table medeval-claims-table">') == 2
    only_undecided = notebook.claims_display([rows[0]])._repr_html_()
    assert only_undecided.count("<table") == 1 and "<summary>1 inconclusive at this scale: the rows" in only_undecided
    long = "word " * 100
    glance = reason_at_a_glance(long)
    assert len(glance) <= REASON_GLANCE_CHARS and glance.endswith("…") and " wor…" not in glance
    assert reason_at_a_glance("") == "" and reason_at_a_glance("a; b") == "a"


def test_a_claims_table_without_any_reason_has_no_why_column():
    rows = [{"id": f"r{i}", "claim": f"claim {i}", "where": "", "paper": "p", "ours": "o", "basis": "phantom",
             "scale": "smoke", "n": 3, "test": "Welch", "effect": "d = 1", "verdict": "[Re]", "reason": ""}
            for i in range(2)]
    html = notebook.claims_display(rows)._repr_html_()
    assert "<th>why</th>" not in html and html.count("<col ") == 4 and html.count("<td") == 8
    rows[1] = {**rows[1], "verdict": "[¬Re]", "reason": "the models overfit"}
    html = notebook.claims_display(rows)._repr_html_()
    assert html.count("<th>why</th>") == 1 and html.count("<col ") == 5 and "<td>—</td>" in html


def test_a_rows_figures_show_their_headline_and_the_whole_text_sits_in_its_dropdown():
    from medeval.runtime.notebook import FIGURES_GLANCE_CHARS, figures_at_a_glance

    ours = "C recall: Natural 0.93, C-biased 0.95; " + "; ".join(f"quality part {i} of the row" for i in range(12))
    glance = figures_at_a_glance(ours)
    assert glance.startswith("C recall: Natural 0.93, C-biased 0.95; ") and glance.endswith("; …")
    assert len(glance) <= FIGURES_GLANCE_CHARS
    assert figures_at_a_glance("short; text") == "short; text" and figures_at_a_glance("") == ""
    one_clause = "x" * 10 + " word" * 60  # no clause fits: cut at a word
    assert figures_at_a_glance(one_clause).endswith(" …") and len(figures_at_a_glance(one_clause)) <= 150
    row = {"id": "r", "claim": "c", "where": "", "paper": "p", "ours": ours, "basis": "phantom", "scale": "smoke",
           "n": 3, "test": "t", "effect": "", "verdict": "[~]", "reason": "why"}
    html = notebook.claims_display([row])._repr_html_()
    assert "<strong>ours, in full</strong>" in html and "quality part 11 of the row" in html
    assert "paper, in full" not in html  # nothing was shortened there


def test_the_api_index_puts_the_runtime_last_under_a_developer_heading():
    from medeval.runtime.book import api_pages

    index = api_pages()["api/index.md"]
    headings = [line for line in index.splitlines() if line.startswith("## ")]
    assert headings[-1] == "## For developers: the runtime" and len(headings) >= 6
    assert "A reader of the chapters does not need it" in index


def test_a_band_is_clipped_to_the_quantitys_range():
    import matplotlib

    matplotlib.use("Agg")
    from medeval import plots

    fig, (ax,) = plots.new_axes()
    plots.curve_with_band(ax, [0, 1, 2], [0.9, 0.95, 0.5], [0.7, 0.85, -0.1], [1.1, 1.05, 1.1], limits=(0, 1))
    (band,) = ax.collections
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() >= 0 and ys.max() <= 1 and ys.max() == 1 and ys.min() == 0
    with pytest.raises(ValueError, match="lo < hi"):
        plots.curve_with_band(ax, [0, 1], [0.5, 0.5], [0, 0], [1, 1], limits=(1, 0))


def test_the_parameters_are_collapsed_under_a_summary_that_names_what_the_run_changed(monkeypatch, tmp_path):
    monkeypatch.setenv("MEDEVAL_RESULTS_FILE", str(tmp_path / "r.json"))
    notebook.setup("A2-rerun", {"profile": "smoke", "n_repeats": 5})
    html = notebook.parameters_table()._repr_html_()
    assert html.startswith('<details class="medeval-params"><summary>Parameters of this run:')
    assert "changed from it: <code>n_repeats</code> = 5" in html
    assert "How it ran: <code>device</code> = auto" in html and "<code>max_workers</code>" in html
    table = html[html.index("<table"):html.index("</table>")]
    assert "<code>n_repeats</code>" in table and "<code>device</code>" not in table  # infrastructure is a line
    notebook.setup("A2-rerun", {"profile": "smoke"})
    assert ", none changed</summary>" in notebook.parameters_table()._repr_html_()


def test_checks_and_errata_are_collapsed_under_a_count_and_a_failed_check_is_shown_open():
    rows = [{"check": "a", "where": "w", "expected": "e", "computed": "c", "passed": True, "why": ""},
            {"check": "b", "where": "w", "expected": "e", "computed": "c", "passed": None, "why": ""}]
    html = notebook.checks_display(rows)._repr_html_()
    assert html.startswith('<details class="medeval-params"><summary>2 checks: 1 pass, 1 undecided</summary>')
    failed = notebook.checks_display([*rows, {**rows[0], "check": "c", "passed": False}])._repr_html_()
    assert failed.startswith('<details class="medeval-params" open><summary>3 checks: 1 pass, 1 FAIL, 1 undecided')
    errata = notebook.errata_display([{"where": "T1", "printed": "1", "recomputed": "2", "note": "n"}])._repr_html_()
    assert "<summary>Errata (1): numbers printed in the paper that do not add up, recomputed</summary>" in errata


def test_a_long_table_is_folded_under_its_caption_and_a_short_one_is_not():
    long = pd.DataFrame({"k": range(notebook.FOLD_ROWS + 1), "v": [0.5] * (notebook.FOLD_ROWS + 1)})
    html = notebook.show_table(long, caption="Every run")._repr_html_()
    assert html.startswith("<details") and f"<summary>Every run ({notebook.FOLD_ROWS + 1} rows × 2 columns)" in html
    assert "<caption" not in html  # the caption is the fold's summary, not repeated inside
    short = notebook.show_table(long.head(notebook.FOLD_ROWS), caption="Few")._repr_html_()
    assert not short.startswith("<details") and "Few" in short
    assert notebook.show_table(long.head(2), fold=True)._repr_html_().startswith("<details")
    assert not notebook.show_table(long, fold=False)._repr_html_().startswith("<details")


def test_the_appendices_are_lettered_page_by_page_and_the_chapters_keep_their_numbers():
    from medeval.runtime.sphinx_book import appendix_letters, lettered_numbers

    docs = ["chapters/01-x", "appendix/A1-data", "appendix/A1-data/exercises", "appendix/A2-rerun", "intro"]
    letters = appendix_letters(docs)
    assert letters == {"appendix/A1-data": "A", "appendix/A1-data/exercises": "A", "appendix/A2-rerun": "B"}
    numbers = {"chapters/01-x": {"figure": {"f": (1, 1)}},
               "appendix/A1-data": {"figure": {"a": (1,), "b": (2,)}, "displaymath": {"e": (5,)}},
               "appendix/A1-data/exercises": {"exercise": {"x": (1,)}, "figure": {"c": (3,)}},
               "appendix/A2-rerun": {"figure": {"d": (4,)}, "displaymath": {"e2": (6,)}}}
    got = lettered_numbers(numbers, letters)
    assert got["chapters/01-x"] == {"figure": {"f": (1, 1)}}
    assert got["appendix/A1-data"] == {"figure": {"a": ("A", 1), "b": ("A", 2)}, "displaymath": {"e": ("A", 1)}}
    assert got["appendix/A1-data/exercises"] == {"exercise": {"x": ("A", 1)}, "figure": {"c": ("A", 3)}}
    assert got["appendix/A2-rerun"] == {"figure": {"d": ("B", 1)}, "displaymath": {"e2": ("B", 1)}}
    assert numbers["appendix/A2-rerun"]["figure"]["d"] == (4,)  # the input is left as it was


#: pages whose families share colours in the palette but not in what the page draws (read on the page)
SHARED_PALETTE_NOT_DRAWN = {
    "01-mil-stability": "the operators are bars and points; the stability scores, the example bags and the Fig. 9 "
                        "lines are lines with their own markers and line styles (the Fig. 9 lines are named by their "
                        "colour, as in the paper), so no line of one family looks like another's",
    "A1-data": "the tissue classes are the colours of an image and its legend patches, the data sources are lines",
    "05-multilabel": "the splitters (random blue, iterative orange) are box fills and the one metric drawn is AUC "
                     "(vermillion), which no splitter uses",
    "A2-rerun": "it draws accuracy (blue) and the binomial estimator (vermillion), no two things in one colour",
}


def family_style_clashes(source: str) -> list[str]:
    """Pairs of colour families a notebook draws that share a colour of the palette and are not told apart by their
    line style and marker (:data:`medeval.plots.FAMILY_STYLES`, drawn through :func:`medeval.plots.style`)."""
    import itertools
    import re

    from medeval import plots

    families = sorted(set(re.findall(r'plots\.(?:color|style)\("([^"]+)"', source)))
    clashes = []
    for f, g in itertools.combinations(families, 2):
        if not set(plots.COLORS[f].values()) & set(plots.COLORS[g].values()):
            continue
        look = {x: tuple(plots.FAMILY_STYLES.get(x, {}).get(k) for k in ("linestyle", "marker")) for x in (f, g)}
        if look[f] == look[g] or any(f'plots.style("{x}"' not in source for x in (f, g)):
            clashes.append(f"{f} / {g}")
    return clashes


def test_families_that_share_a_colour_on_a_page_keep_apart_by_line_style_and_marker():
    """Issue #31: in chapter 3 blue was EVE in one figure and accuracy in the next. Every page that draws two colour
    families sharing a palette colour draws both through plots.style, whose line styles and markers differ."""
    from medeval.runtime.paths import project_root

    found = {}
    for path in sorted((project_root() / "notebooks").glob("*.py")):
        clashes = family_style_clashes(path.read_text())
        if clashes and path.stem not in SHARED_PALETTE_NOT_DRAWN:
            found[path.stem] = clashes
    assert not found, found
    # the check can fail: colour calls alone, or two families with one look
    assert family_style_clashes('plots.color("estimator", "EVE"); plots.color("metric", "accuracy")') == [
        "estimator / metric"]
    assert family_style_clashes('plots.style("distribution", "En"); plots.style("splitter", "random")') == [
        "distribution / splitter"]
    assert family_style_clashes('plots.style("estimator", "EVE"); plots.style("metric", "accuracy")') == []
    assert plots.style("strategy", "10x10") == {"color": plots.color("strategy", "10x10"), "linestyle": "--",
                                                "marker": "s"}
