"""The execution pipeline: cache keys, caching, failures, provenance."""

import json
import shutil
from pathlib import Path

import pytest

from medeval.runtime import book, execution
from medeval.runtime.cache_keys import cache_key
from medeval.runtime.execution import ChapterExecutionError, run_chapter
from medeval.runtime.params import get_chapter
from medeval.runtime.paths import project_root

REPO = project_root()


@pytest.fixture()
def sandbox(tmp_path, monkeypatch):
    """A copy of the project (src/medeval, params, notebooks, manifest) with MEDEVAL_ROOT pointing at it."""
    for name in ("params", "notebooks", "teaching"):
        shutil.copytree(REPO / name, tmp_path / name)
    shutil.copytree(REPO / "src" / "medeval", tmp_path / "src" / "medeval",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "data_manifest.yaml", tmp_path / "data_manifest.yaml")
    monkeypatch.setenv("MEDEVAL_ROOT", str(tmp_path))
    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path / "_runs"))
    return tmp_path


def _key(params=None):
    chapter = get_chapter("A2-rerun")
    return cache_key(chapter, "smoke", params or {"n_repeats": 4})[0]


def test_editing_a_src_file_invalidates_but_an_unrelated_file_does_not(sandbox):
    base = _key()
    assert _key() == base  # deterministic
    (sandbox / "README.md").write_text("unrelated change")
    (sandbox / "tests").mkdir()
    (sandbox / "tests" / "test_new.py").write_text("x = 1\n")
    assert _key() == base
    target = sandbox / "src" / "medeval" / "metrics" / "__init__.py"
    target.write_text(target.read_text() + "\n# an edit\n")
    assert _key() != base


def test_new_src_file_notebook_and_params_each_invalidate(sandbox):
    base = _key()
    (sandbox / "src" / "medeval" / "new_module.py").write_text("")
    k1 = _key()
    assert k1 != base
    nb = sandbox / "notebooks" / "A2-rerun.py"
    nb.write_text(nb.read_text() + "\n# %%\n1\n")
    k2 = _key()
    assert k2 != k1
    assert _key({"n_repeats": 5}) != k2


def test_the_chapter_s_quiz_file_invalidates(sandbox):
    base = _key()
    quiz = sandbox / "teaching" / "quizzes" / "A2-rerun.yaml"
    quiz.write_text(quiz.read_text() + "\n# an edit\n")
    assert _key() != base


def test_manifest_entry_change_invalidates_only_if_used(sandbox):
    import yaml

    base = _key()
    manifest = yaml.safe_load((sandbox / "data_manifest.yaml").read_text())
    entries = manifest["datasets"] if isinstance(manifest, dict) and "datasets" in manifest else manifest
    for entry in entries:
        if entry["id"] == "cifar10":
            entry["title"] = entry["title"] + " (edited)"
    (sandbox / "data_manifest.yaml").write_text(yaml.safe_dump(manifest))
    assert _key() == base  # A2-rerun reads only wdbc
    for entry in entries:
        if entry["id"] == "wdbc":
            entry["title"] = entry["title"] + " (edited)"
    (sandbox / "data_manifest.yaml").write_text(yaml.safe_dump(manifest))
    assert _key() != base


@pytest.mark.slow
def test_run_caches_reexecutes_on_change_and_records_provenance(sandbox):
    first = run_chapter("A2-rerun", "smoke", {"n_repeats": 3})
    assert not first.cached
    assert first.results["params"]["n_repeats"] == 3
    prov = first.results["provenance"]
    for key in ("medeval", "git_commit", "python", "torch", "numpy", "device", "profile", "wall_time_s"):
        assert key in prov
    assert first.meta["status"] == "ok" and len(first.meta["key"]) == 64
    again = run_chapter("A2-rerun", "smoke", {"n_repeats": 3})
    assert again.cached and again.meta["key"] == first.meta["key"]
    changed = run_chapter("A2-rerun", "smoke", {"n_repeats": 4})
    assert not changed.cached and changed.results["params"]["n_repeats"] == 4

    import nbformat

    nb = nbformat.read(first.notebook, as_version=4)
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    assert any("parameters" in t and "remove-cell" in t for t in tags), "defaults cell hidden"
    assert any("injected-parameters" in t for t in tags), "injected parameters shown"
    assert any("medeval-timing" in t for t in tags), "page states its measured time"
    assert "provenance" in nb.cells[-1].source
    assert not any(o.get("output_type") == "error" for c in nb.cells for o in c.get("outputs", []))


@pytest.mark.slow
def test_failing_notebook_names_chapter_and_cell_and_is_not_cached(sandbox):
    nb = sandbox / "notebooks" / "A2-rerun.py"
    text = nb.read_text().replace("summary = rerun_demo.summarise(runs)",
                                  "raise RuntimeError('boom in the grid cell')")
    nb.write_text(text)
    with pytest.raises(ChapterExecutionError) as err:
        run_chapter("A2-rerun", "smoke")
    msg = str(err.value)
    assert "'A2-rerun'" in msg and "cell" in msg and "boom in the grid cell" in msg
    from medeval.runtime import runs

    [failed] = runs.list_runs(sandbox / "_runs" / "smoke", "A2-rerun")
    assert failed.status == "failed" and failed.notebook.exists(), "the partial notebook is kept for inspection"
    assert str(failed.path.name) in msg


def test_invalid_parameters_are_refused_before_any_compute(sandbox):
    from medeval.runtime.params import ParameterError

    with pytest.raises(ParameterError, match="n_repeats"):
        run_chapter("A2-rerun", "smoke", {"n_repeats": -1})
    assert not (sandbox / "_runs" / "smoke").exists()


def _claim_row(i, verdict, basis, **extra):
    row = {"id": f"c{i}", "claim": f"claim {i}", "where": "Fig. 1", "paper": "0.5", "rule": "r", "ours": "0.49",
           "basis": basis, "scale": "smoke", "n": "3 runs", "test": "Welch", "effect": "p = 0.01",
           "verdict": verdict, "reason": "r|s"}
    row.update(extra)
    return row


def _result(chapter, rows, part="chapters"):
    return execution.ExecutionResult(
        chapter, "smoke", Path(f"{chapter}.ipynb"), {"paper_vs_us": rows},
        {"title": f"T {chapter}", "part": part, "profile": "smoke", "key": "k" * 64, "wall_time_s": 1.5,
         "started": "now", "params": {"a": 1}, "provenance": {"device": "CPU: test", "git_commit": "abc"}},
        True,
    )


def test_scorecard_and_reproducibility_pages_come_from_records():
    res = _result("01-mil-stability", [_claim_row(1, "[Re]", "phantom")])
    card = book.scorecard_markdown([res])
    assert 'href="chapters/01-mil-stability.html#claim-c1">claim 1</a>' in card
    # one numbering: the book's chapter number, the notebook id only as a name
    assert "Chapter 1 (`01-mil-stability`), profile `smoke`: 1 [Re]." in card and "The 1 row of Chapter 1" in card
    assert "| **[Re]**<br><small>not measured</small> | <a href" in card and "| phantom | smoke | 3 runs | Welch; p = 0.01 | r&#124;s |" in card
    repro = book.reproducibility_markdown([res])
    assert "`01-mil-stability` | smoke | `kkkkkkkkkkkk` | 1.5 |" in repro and json.dumps({"a": 1}) in repro


@pytest.mark.claim
def test_claim_scorecard_totals_equal_the_sum_of_the_chapters_rows():
    a = _result("01-mil-stability", [_claim_row(1, "[Re]", "phantom"), _claim_row(2, "[~]", "phantom"),
                                      _claim_row(3, "[¬Re]", "exact")])
    b = _result("02-rodeo", [_claim_row(1, "[n/a]", "real"), _claim_row(2, "[Re]", "exact")])
    totals = book.scorecard_totals([a, b])
    assert totals["verdict"] == {"[Re]": 2, "[¬Re]": 1, "[~]": 1, "[n/a]": 1, "seed-sensitive": 0}
    assert totals["basis:exact"] == {"[Re]": 1, "[¬Re]": 1, "[~]": 0, "[n/a]": 0, "seed-sensitive": 0}
    # the headline is the empirical claims; exact recomputations apart; [n/a] on no basis line
    assert totals["empirical"] == {"[Re]": 1, "[¬Re]": 0, "[~]": 1, "[n/a]": 1, "seed-sensitive": 0}
    assert totals["exact"] == {"[Re]": 1, "[¬Re]": 1, "[~]": 0, "[n/a]": 0, "seed-sensitive": 0}
    assert sum(totals["basis:real"].values()) == 0 and totals["not testable"]["[n/a]"] == 1
    assert sum(sum(v.values()) for k, v in totals.items() if k.startswith("basis:") or k == "not testable") == 5
    card = book.scorecard_markdown([a, b])
    assert "| **empirical claims** | 1 | 0 | 1 | 1 | 0 | 3 |" in card
    assert "| exact recomputations | 1 | 1 | 0 | 0 | 0 | 2 |" in card
    assert "| all rows | 2 | 1 | 1 | 1 | 0 | 5 |" in card
    assert "| tested on basis *phantom* | 1 | 0 | 1 | 0 | 0 | 2 |" in card
    assert "basis *real*" not in card and "| not testable (no basis) | 0 | 0 | 0 | 1 | 0 | 1 |" in card


def test_the_verdict_matrix_counts_every_chapter_row_and_opens_the_scorecard_and_landing_page():
    a = _result("01-mil-stability", [_claim_row(1, "[Re]", "phantom"), _claim_row(2, "[~]", "phantom"),
                                      _claim_row(3, "[Re]", "exact")])
    b = _result("02-rodeo", [_claim_row(1, "[n/a]", "real")])
    appendix = _result("A1-data", [], part="appendix")
    matrix = book.verdict_matrix_markdown([b, appendix, a])  # in book order, whatever the order given
    lines = matrix.splitlines()
    assert lines[0] == "| chapter | [Re] | [¬Re] | [~] | [n/a] | rows |"
    assert lines[2].startswith("| {ref}`1 <ch-mil>` Localization stability") and lines[2].endswith("| 2 | · | 1 | · | 3 |")
    assert lines[3].startswith("| {ref}`2 <ch-rodeo>` RoDeO") and lines[3].endswith("| · | · | · | 1 | 1 |")
    assert lines[4] == "| **all chapters** | **2** | **0** | **1** | **1** | **4** |" and len(lines) == 5
    card = book.scorecard_markdown([a, b])
    assert card.index(matrix.splitlines()[0]) < card.index("| **empirical claims** |")
    assert book.VERDICT_MATRIX_MARKER in (book.project_root() / "book" / "intro.md").read_text()


def test_paper_vs_us_refuses_rows_outside_the_vocabulary(monkeypatch, tmp_path):
    from medeval.runtime import notebook

    monkeypatch.setenv("MEDEVAL_RESULTS_FILE", str(tmp_path / "r.json"))
    notebook.setup("A2-rerun", {"profile": "smoke"})
    good = _claim_row(1, "[Re]", "phantom")
    shown = notebook.paper_vs_us([good])
    assert 'id="claim-c1"' in shown._repr_html_()
    recorded = json.loads((tmp_path / "r.json").read_text())["paper_vs_us"]
    assert recorded[0]["verdict"] == "[Re]" and recorded[0]["basis"] == "phantom"
    with pytest.raises(ValueError, match="verdict"):
        notebook.paper_vs_us([_claim_row(1, "[Re?]", "phantom")])
    with pytest.raises(ValueError, match="basis"):
        notebook.paper_vs_us([_claim_row(1, "[Re]", "simulated")])
    with pytest.raises(ValueError, match="misses columns"):
        notebook.paper_vs_us([{"claim": "c", "verdict": "[Re]"}])
    with pytest.raises(ValueError, match="duplicate"):
        notebook.paper_vs_us([good, good])


def test_local_data_digest_follows_the_data_files(tmp_path, monkeypatch):
    """Fetching, placing or replacing a dataset's files changes the key of the chapters that list it."""
    import os

    from medeval.data.phantoms.formats import write_cifar10_like
    from medeval.runtime.cache_keys import local_data_digest

    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    absent = local_data_digest(("cifar10", "chestxray14-labels", "digits"))
    assert absent == local_data_digest(("cifar10",))  # shipped and bundled datasets do not enter
    write_cifar10_like(tmp_path / "cifar10", n_train_per_class=2, n_test_per_class=1)
    present = local_data_digest(("cifar10",))
    assert present != absent
    assert present == local_data_digest(("cifar10",))
    batch = tmp_path / "cifar10" / "cifar-10-batches-py" / "test_batch"
    st = batch.stat()
    os.utime(batch, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert local_data_digest(("cifar10",)) != present
    chapter = get_chapter("04b-evaluation-measures")
    key_now, parts = cache_key(chapter, "full", {})
    assert parts["data"] == local_data_digest(chapter.datasets)
    (tmp_path / "cifar10" / "cifar-10-batches-py" / "extra").write_text("x")
    assert cache_key(chapter, "full", {})[0] != key_now


def test_environment_digest_follows_installs_upgrades_and_removals(tmp_path, monkeypatch):
    """The digest is kept while the folders on sys.path are unchanged, and follows every install, upgrade and
    removal of a distribution (each adds or removes a *.dist-info folder, which changes its folder's mtime)."""
    import os

    from medeval.runtime.cache_keys import environment_digest

    def set_mtime(seconds):  # what the file system does when a folder gains or loses an entry
        os.utime(tmp_path, ns=(seconds * 10**9, seconds * 10**9))

    def install(version):
        info = tmp_path / f"medeval_probe-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: medeval-probe\nVersion: {version}\n")
        return info

    monkeypatch.syspath_prepend(str(tmp_path))
    set_mtime(1_000)
    before = environment_digest()
    assert environment_digest() == before
    v1 = install("1.0")
    set_mtime(1_001)
    installed = environment_digest()
    assert installed != before
    shutil.rmtree(v1)
    install("2.0")
    set_mtime(1_002)
    upgraded = environment_digest()
    assert upgraded not in (before, installed)
    shutil.rmtree(tmp_path / "medeval_probe-2.0.dist-info")
    set_mtime(1_003)
    assert environment_digest() == before
    monkeypatch.undo()  # sys.path as it was: the first folder is gone again
    assert environment_digest() == before


@pytest.mark.slow
def test_kernel_runs_over_ipc_in_a_private_folder_and_null_is_honoured(tmp_path, monkeypatch, capfd):
    """Issue #16 items 6 and 7: the kernel's sockets live in a 0700 folder (no TCP, no TCP warning), removed
    afterwards; ``--set max_workers=null`` is what the kernel computes with, not the profile's value."""
    import os
    import stat

    seen = []
    real = execution.private_kernel_manager_class

    def spy(private_dir, *args):
        seen.append((private_dir, stat.S_IMODE(os.stat(private_dir).st_mode)))
        cls = real(private_dir, *args)
        assert cls(kernel_name="python3").transport == "ipc"
        return cls

    monkeypatch.setattr(execution, "private_kernel_manager_class", spy)
    assert get_chapter("03-eve").profiles["smoke"]["max_workers"] == 1
    res = run_chapter("03-eve", "smoke", {"max_workers": None}, out_dir=tmp_path, force=True, log=lambda _: None)
    assert res.meta["params"]["max_workers"] is None
    assert res.results["params"]["max_workers"] is None  # what the notebook itself resolved and recorded
    [(private_dir, mode)] = seen
    assert mode == 0o700 and not private_dir.exists()
    err = capfd.readouterr().err
    assert "running over TCP" not in err and "Passed unknown parameter" not in err


def test_null_for_a_field_that_does_not_accept_it_is_refused_by_name():
    from medeval.runtime.params import ParameterError, resolve_params

    with pytest.raises(ParameterError, match="n_repeats"):
        resolve_params("A2-rerun", "smoke", {"n_repeats": None})
    assert resolve_params("03-eve", "smoke", {"max_workers": None}).max_workers is None


def test_a_shortened_commit_still_says_dirty():
    assert book.short_commit("a3209b6d587e00000000-dirty") == "a3209b6d587e-dirty"
    assert book.short_commit("a3209b6d587e00000000") == "a3209b6d587e"
