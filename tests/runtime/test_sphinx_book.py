"""The book extension's map from chapter equations to the API objects that implement them
(:func:`medeval.runtime.sphinx_book.equation_users`) and the sentence an API entry gets from it."""

import json

from medeval.runtime.sphinx_book import add_used_in, book_equation_users, equation_users, used_in_line

TWO_EQUATIONS = """\
## Method

Before any equation: {func}`medeval.metrics.variance.pair_variances` is attributed to nothing.

$$
V = \\frac{1}{R} \\sum_r v_r
$$ (eq-a)

Implemented by {func}`medeval.metrics.variance.empirical_variance_estimate` (each summand by
{func}`medeval.metrics.variance.pair_variances`), collected in {class}`medeval.metrics.variance.PairedComparison`
and {meth}`~medeval.metrics.variance.PairedComparison.as_dict`; {func}`numpy.var` is not ours.

$$
\\mathcal V_d = V(x - y)
$$ (eq-b)

Implemented by {func}`paired <medeval.metrics.variance.paired_comparison>`, which also uses
{func}`medeval.metrics.variance.empirical_variance_estimate`.

### Another section

Its prose follows a heading: {func}`medeval.metrics.variance.naive_foldwise_variance` uses no equation.
"""


def test_several_objects_after_one_equation_and_two_equations():
    users = equation_users(TWO_EQUATIONS)
    assert users["medeval.metrics.variance.empirical_variance_estimate"] == ["eq-a", "eq-b"]
    assert users["medeval.metrics.variance.pair_variances"] == ["eq-a"]  # the first mention was before eq-a
    assert users["medeval.metrics.variance.PairedComparison"] == ["eq-a"]
    assert users["medeval.metrics.variance.PairedComparison.as_dict"] == ["eq-a"]  # ``~`` and {meth}
    assert users["medeval.metrics.variance.paired_comparison"] == ["eq-b"]  # ``title <target>``
    assert "numpy.var" not in users


def test_a_reference_after_a_heading_is_not_attributed():
    users = equation_users(TWO_EQUATIONS)
    assert users["medeval.metrics.variance.naive_foldwise_variance"] == []
    assert equation_users("$$ x $$ (eq-x)\n\n# Title\n\n{func}`medeval.a.f`\n") == {"medeval.a.f": []}


def test_equations_with_no_prose_between_them_share_the_prose_that_follows():
    text = "$$\nD\n$$ (eq-dice)\n\n$$\nJ\n$$ (eq-jacc)\n\nimplemented by {func}`medeval.m.dice` and\n" \
           "{func}`medeval.m.jaccard`.\n\n$$\nA\n$$ (eq-acc)\n\nimplemented by {func}`medeval.m.accuracy`.\n"
    assert equation_users(text) == {"medeval.m.dice": ["eq-dice", "eq-jacc"],
                                    "medeval.m.jaccard": ["eq-dice", "eq-jacc"], "medeval.m.accuracy": ["eq-acc"]}


def test_unlabelled_math_code_fences_and_directives():
    text = "\n".join([
        "$$ y = 1 $$ (eq-one)", "", "```python", "# a comment, not a heading", "{func}`medeval.in.code`", "```", "",
        "$$", "z = 2", "$$", "", "after unlabelled math: {func}`medeval.m.f`", "",
        "```{glue:md} key", ":format: myst", "```", "", "still eq-one's prose: {func}`medeval.m.g`", "",
        ":::{exercise}", "In a directive: {func}`medeval.m.h`", ":::", "",
    ])
    assert equation_users(text) == {"medeval.m.f": ["eq-one"], "medeval.m.g": ["eq-one"], "medeval.m.h": ["eq-one"]}


def test_the_map_of_a_staged_book_and_the_sentence(tmp_path):
    def notebook(path, *markdown):
        path.parent.mkdir(parents=True, exist_ok=True)
        cells = [{"cell_type": "markdown", "metadata": {}, "source": m} for m in markdown]
        cells.insert(1, {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": 1})
        path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))

    notebook(tmp_path / "chapters" / "03-eve.ipynb", "# EVE\n\n$$\nV\n$$ (eq-eve-eve)\n",
             "Implemented by {func}`medeval.metrics.variance.empirical_variance_estimate`.")
    notebook(tmp_path / "chapters" / "03-eve" / "exercises.ipynb", "$$ W $$ (eq-eve-w)\n",
             "{func}`medeval.metrics.variance.empirical_variance_estimate`")
    notebook(tmp_path / "appendix" / "A2-rerun.ipynb", "$$ B $$ (eq-rerun-binomial-sd)\n\nby "
             "{func}`medeval.metrics.variance.naive_binomial_variance`, not {func}`medeval.x.unused`", "# End")
    notebook(tmp_path / "reruns" / "r1.ipynb", "$$ B $$ (eq-r)\n\n{func}`medeval.x.rerun`")  # not a chapter page
    users = book_equation_users(tmp_path)
    assert users == {
        "medeval.metrics.variance.naive_binomial_variance": [("appendix/A2-rerun", ["eq-rerun-binomial-sd"])],
        "medeval.metrics.variance.empirical_variance_estimate": [("chapters/03-eve", ["eq-eve-eve"]),
                                                                 ("chapters/03-eve/exercises", ["eq-eve-w"])],
        "medeval.x.unused": [("appendix/A2-rerun", ["eq-rerun-binomial-sd"])],
    }
    line = used_in_line(users["medeval.metrics.variance.empirical_variance_estimate"])
    assert line == "Used in :eq:`eq-eve-eve` (:doc:`/chapters/03-eve`); :eq:`eq-eve-w` (:doc:`/chapters/03-eve/exercises`)."


def test_the_sentence_follows_the_summary_paragraph():
    class App:
        medeval_equation_users = {"medeval.m.f": [("chapters/01-mil-stability", ["eq-mil-apj"])]}

    lines = ["Adjusted positive Jaccard,", "Eq. 18 of the paper.", "", ".. math::", "", "   S = 1", ""]
    add_used_in(App(), "function", "medeval.m.f", None, {}, lines)
    assert lines[:5] == ["Adjusted positive Jaccard,", "Eq. 18 of the paper.", "",
                         "Used in :eq:`eq-mil-apj` (:doc:`/chapters/01-mil-stability`).", ""]
    assert lines[5:] == [".. math::", "", "   S = 1", ""]
    one = ["Only a summary."]
    add_used_in(App(), "function", "medeval.m.f", None, {}, one)
    assert one == ["Only a summary.", "", "Used in :eq:`eq-mil-apj` (:doc:`/chapters/01-mil-stability`)."]
    untouched = ["Another object."]
    add_used_in(App(), "function", "medeval.m.g", None, {}, untouched)
    assert untouched == ["Another object."]


#: modules whose docstrings do not yet write their chapter formulas as reST math (issue #31, item 8: converted
#: module by module); an object of these modules in the map is not checked yet
NOT_YET_CONVERTED: tuple[str, ...] = ()
#: implementing objects with no formula of their own: the chapter names them next to an equation, but what they do
#: is load, build, tabulate or collect; the formula is in the docstring of the function they call
NO_FORMULA: tuple[str, ...] = (
    # collects LD, LPD, ED, FZ, FLZ and FLPZ of one split from the functions that write them (eq-ml-fz ...)
    "medeval.metrics.split_quality.split_quality_measures",
    # the table row N, K, LCard, ..., PMax: each indicator's function writes its formula (eq-ml-ldiv ...)
    "medeval.metrics.multilabel.multilabel_indicators",
    # a patch loader: tiles one slide and keeps tissue patches; the threshold is otsu_threshold's (eq-cd-otsu)
    "medeval.data.camelyon16.extract_slide_patches",
    # a patch grid cutter; the categories are categorize_patches' (eq-cd-categories)
    "medeval.data.patching.extract_patches",
    # a data builder that renders phantoms; the label sampling is sample_label_sets' (eq-data-label-sampling), the
    # box jitter (eq-data-box) is drawn inside the renderer
    "medeval.data.phantoms.chest.generate_chest_phantoms",
    # a data builder that draws patches; the counts are distribution_counts' (eq-cd-ratio)
    "medeval.data.training_sets.build_training_set",
    # experiment drivers and tables: they run the metrics of eq-cd-rates / eq-cd-curve-areas over runs and images
    "medeval.experiments.class_distribution.patch_size_sweep",
    "medeval.experiments.class_distribution.run_metrics",
    "medeval.experiments.class_distribution.table_4_4",
    # a comparison table of NIH and phantom boxes (eq-data-box is the phantoms' generator)
    "medeval.experiments.data_appendix.box_comparison",
    # per-trial tables and curves built from the metrics (eq-em-ap) and prior_corrected (eq-em-prior)
    "medeval.experiments.evaluation_measures.trial_table",
    "medeval.experiments.evaluation_measures.prior_corrected_curves",
    "medeval.experiments.evaluation_measures_claims.same_model_control",
    # runs a validation strategy on subsets; the scores are decision_value_scores' (eq-eve-performance)
    "medeval.experiments.eve.run_validation",
    # applies chapter 3's EVE (medeval.metrics.variance) to a test-set evaluation; named next to eq-ml-bootstrap-ci
    "medeval.experiments.multilabel_cxr14.eve_test_set_variance",
    # a resampler (replicates); the percentile interval of eq-ml-bootstrap-ci is evaluate_scores'
    "medeval.experiments.multilabel_cxr14.patient_bootstrap",
    # a training loss: BCE of the pooled bag probabilities of pool_instances / supervised_pool (eq-mil-supervised)
    "medeval.models.mil.mil_bag_loss",
)


def test_every_object_a_chapter_equation_uses_writes_its_formula_as_math():
    import importlib
    import inspect
    from pathlib import Path

    import jupytext

    users: dict[str, list[str]] = {}
    for path in sorted((Path(__file__).parents[2] / "notebooks").glob("*.py")):
        notebook = jupytext.read(path)
        markdown = "\n\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
        for name, labels in equation_users(markdown).items():
            users.setdefault(name, []).extend(labels)
    checked, missing = 0, []
    for name, labels in sorted(users.items()):
        if not labels or name in NO_FORMULA or name.startswith(NOT_YET_CONVERTED):
            continue
        module, _, attr = name.rpartition(".")
        doc = inspect.getdoc(getattr(importlib.import_module(module), attr)) or ""
        checked += 1
        if ":math:`" not in doc and ".. math::" not in doc:
            missing.append(name)
    assert checked >= 40, checked
    assert not missing, f"no :math: or .. math:: in the docstrings of {missing}"


def test_a_folded_method_part_starts_a_new_section_like_its_heading():
    """The book folds each "### " part of a Method into a dropdown (medeval.runtime.book.fold_subsections): what the
    next part names before its own equation is not attributed to the previous part's equation."""
    from medeval.runtime.book import fold_subsections

    md = fold_subsections("## Method\n\n### A\n\n$$\na\n$$ (eq-a)\n\nImplemented by {func}`medeval.m.f`.\n\n"
                          "### B\n\nThe counts of {func}`medeval.m.g` first.\n\n$$\nb\n$$ (eq-b)\n\n"
                          "Implemented by {func}`medeval.m.h`.\n")
    assert {k: v for k, v in equation_users(md).items() if v} == {"medeval.m.f": ["eq-a"], "medeval.m.h": ["eq-b"]}


def test_a_function_named_after_a_group_of_equations_is_tied_to_the_ones_its_docstring_writes():
    from medeval.runtime.sphinx_book import equation_latex, equations_shown, shows_equation

    md = ("$$\n\\mathrm{err} = \\frac{FP + FN}{n}\n$$ (eq-err)\n\n$$\nF_1 = \\frac{2\\,TP}{2TP + FP + FN}\n$$ "
          "(eq-f1)\n\nImplemented by {func}`medeval.m.err` and {func}`medeval.m.f1`.\n")
    latex = equation_latex(md)
    assert set(latex) == {"eq-err", "eq-f1"} and equation_users(md)["medeval.m.f1"] == ["eq-err", "eq-f1"]
    f1_doc = "F1 score.\n\n.. math::\n\n   F_1 = \\frac{2 TP}{2TP + FP + FN}."
    assert shows_equation(latex["eq-f1"], f1_doc) and not shows_equation(latex["eq-err"], f1_doc)
    uses = [("chapters/05", ["eq-err", "eq-f1"]), ("chapters/01", ["eq-bag"])]
    # the group narrowed to what the docstring writes; another chapter's use in its own notation is kept
    assert equations_shown(uses, latex, f1_doc) == [("chapters/05", ["eq-f1"]), ("chapters/01", ["eq-bag"])]
    assert equations_shown(uses, latex, "No formula here.") == uses
