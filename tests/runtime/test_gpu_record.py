"""The Reproducibility page's "Runs on a GPU" section, read from results/gpu/ (never estimated)."""

import json
import shutil

from medeval.runtime import gpu_record
from medeval.runtime.paths import project_root


def test_committed_gpu_session_is_reported_with_its_statuses_and_figures():
    rows = {r["chapter"]: r for r in gpu_record.session_runs()}
    assert set(rows) == {"01-mil-stability", "02-rodeo", "03-eve", "04a-class-distribution",
                         "04b-evaluation-measures", "05-multilabel", "A1-data", "A2-rerun"}
    assert {c for c, r in rows.items() if r["status"] == "ok"} == {"02-rodeo", "03-eve", "05-multilabel",
                                                                   "A1-data", "A2-rerun"}
    assert rows["02-rodeo"]["device"] == "GPU: NVIDIA H200"
    assert sum(rows["03-eve"]["verdicts"].values()) == 21
    text = gpu_record.gpu_record_markdown()
    assert "| `04a-class-distribution` | failed |" in text
    assert "`n_runs=2`" in text and "11,003" in text and "330,000,000 fits" in text
    assert "`04a-class-distribution` failed: `RuntimeError: Cannot re-initialize CUDA in forked subprocess" in text
    assert "`01-mil-stability` was stopped at the session's deadline" in text


def test_without_a_recorded_session_the_page_says_so(tmp_path):
    (tmp_path / "params").mkdir()
    assert gpu_record.session_runs(tmp_path) == [] and gpu_record.benchmark(tmp_path) is None
    assert "No run on a GPU is recorded" in gpu_record.gpu_record_markdown(tmp_path)


def test_a_session_without_the_benchmark_lists_its_runs(tmp_path):
    src = project_root() / "results" / "gpu" / "session"
    shutil.copytree(src, tmp_path / "results" / "gpu" / "session")
    summary = json.loads((src / "summary.json").read_text())
    text = gpu_record.gpu_record_markdown(tmp_path)
    assert all(f"| `{chapter}` |" in text for chapter in summary)
    assert "Training throughput" not in text


def test_every_recorded_session_is_listed_and_a_refusal_says_why(tmp_path):
    import json

    session = tmp_path / "results" / "gpu" / "session-2026-11-27"
    (session / "logs").mkdir(parents=True)
    (session / "summary.json").write_text(json.dumps({"04b-evaluation-measures": {"exit_code": 2, "wall_s": 6.0}}))
    (session / "logs" / "04b-evaluation-measures.log").write_text(
        "medeval: error: chapter '04b-evaluation-measures' cannot run here:\n  estimated peak memory 125 GiB exceeds\n")
    assert gpu_record.session_names(tmp_path) == ["session-2026-11-27"]
    rows = gpu_record.session_runs(tmp_path, "session-2026-11-27")
    assert rows[0]["status"] == "refused before compute" and "125 GiB" in rows[0]["error"]
    text = gpu_record.gpu_record_markdown(tmp_path)
    assert "### `results/gpu/session-2026-11-27/`" in text and "refused by the pre-flight check" in text


def test_the_gpu_session_starts_chapters_while_their_memory_estimates_fit():
    """benchmarks/gpu_session.py: 4a (53 GiB) and 4b (63 GiB) together on a 128-GiB machine slowed the session of
    2026-11-27b past its limit; with a budget of 0.85 x 128 GiB the second waits, and a smaller one goes first."""
    import importlib.util

    from medeval.runtime.params import project_root

    spec = importlib.util.spec_from_file_location("gpu_session", project_root() / "benchmarks" / "gpu_session.py")
    gs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gs)
    gib = 2**30
    est = {"04a": 53 * gib, "04b": 63 * gib, "05": 3 * gib}
    budget = 0.85 * 128 * gib
    assert gs.next_chapter(["04a", "04b", "05"], [], est, budget) == "04a"
    assert gs.next_chapter(["04b", "05"], ["04a"], est, budget) == "05"  # 4b waits, 05 fits beside 4a
    assert gs.next_chapter(["04b"], ["04a", "05"], est, budget) is None
    assert gs.next_chapter(["04b"], [], {"04b": 200 * gib}, budget) == "04b"  # alone it may always start
