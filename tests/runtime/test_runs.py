"""The run store (issue #16): every execution is its own run, listed and compared; runs with other parameters never
replace the profile's own; concurrent runs publish whole; an interrupted run stops its kernel and workers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from medeval.runtime import runs
from medeval.runtime.execution import ChapterExecutionError, run_chapter
from medeval.runtime.paths import project_root
from medeval.runtime.run_profile import GRID_PROFILE, time_profile

REPO = project_root()


def _sandbox(root: Path) -> dict[str, str]:
    for name in ("params", "notebooks", "results", "teaching"):
        shutil.copytree(REPO / name, root / name)
    shutil.copytree(REPO / "src" / "medeval", root / "src" / "medeval", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "data_manifest.yaml", root / "data_manifest.yaml")
    return {"MEDEVAL_ROOT": str(root), "MEDEVAL_RUNS": str(root / "_runs")}


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The profile's own run of A2 (smoke) and one with --set n_repeats=5, in a sandboxed project."""
    root = tmp_path_factory.mktemp("runs")
    env = _sandbox(root)
    mp = pytest.MonkeyPatch()
    for k, v in env.items():
        mp.setenv(k, v)
    try:
        own = run_chapter("A2-rerun", "smoke", log=lambda _: None)
        other = run_chapter("A2-rerun", "smoke", {"n_repeats": 5}, log=lambda _: None)
        again = run_chapter("A2-rerun", "smoke", log=lambda _: None)
        yield root, env, own, other, again
    finally:
        mp.undo()


@pytest.mark.slow
def test_every_execution_is_a_run_and_the_profile_run_is_never_replaced(two_runs):
    root, _, own, other, again = two_runs
    listed = runs.list_runs(root / "_runs" / "smoke", "A2-rerun")
    assert [r.status for r in listed] == ["ok", "ok"]
    assert own.notebook != other.notebook and own.notebook.parent.parent == other.notebook.parent.parent
    assert own.meta["overrides"] == {} and other.meta["overrides"] == {"n_repeats": 5}
    assert other.meta["run_id"].endswith(other.meta["key"][:8]) and other.meta["run_id"][:8].isdigit()
    assert again.cached and again.notebook == own.notebook  # the book's run: the profile's own, untouched
    assert runs.find_good_run(root / "_runs" / "smoke", "A2-rerun", own.meta["key"]).meta["cache_hits"] == 1
    for run in listed:  # every published run is whole and self-consistent; A2 runs a grid, so it has a time profile
        assert {p.name for p in run.path.iterdir()} == {*runs.RUN_FILES, GRID_PROFILE}
        grids = time_profile(run.path).grids
        assert grids and all(g.computed + g.cached == g.runs > 0 for g in grids)
        assert run.results()["params"] == run.meta["params"]
        nb = nbformat.read(run.notebook, as_version=4)
        injected = next(c.source for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
        assert f"n_repeats = {run.meta['params']['n_repeats']}" in injected


@pytest.mark.slow
def test_runs_and_compare_commands(two_runs, tmp_path):
    root, env, own, other, _ = two_runs
    full_env = {**os.environ, **env}
    listed = subprocess.run([sys.executable, "-m", "medeval.cli", "runs", "A2-rerun"], env=full_env,
                            capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert own.meta["run_id"] in listed.stdout and other.meta["run_id"] in listed.stdout
    assert "n_repeats=5" in listed.stdout and "(profile's own)" in listed.stdout
    md, html = tmp_path / "cmp.md", tmp_path / "cmp.html"
    cmp = subprocess.run([sys.executable, "-m", "medeval.cli", "compare", own.meta["run_id"], other.meta["run_id"],
                          "--markdown", str(md), "--html", str(html)], env=full_env, capture_output=True, text=True)
    assert cmp.returncode == 0, cmp.stderr
    assert "Parameters that differ" in cmp.stdout and "n_repeats" in cmp.stdout
    # a recorded table, joined on the column both runs share (test_size), not on its count, which differs
    assert "accuracy_by_test_size[test_size=20].mean" in cmp.stdout
    assert "accuracy_by_test_size[test_size=20].count" in cmp.stdout
    assert "## Recorded numbers" in md.read_text() and "<table>" in html.read_text()
    report = runs.compare(runs.find_run(own.meta["run_id"], root / "_runs"),
                          runs.find_run(other.meta["run_id"], root / "_runs"))
    assert [p[0] for p in report.parameters] == ["n_repeats"]
    assert report.numbers and all(a != b for _, a, b in report.numbers)
    bad = subprocess.run([sys.executable, "-m", "medeval.cli", "compare", "nosuchrun", own.meta["run_id"]],
                         env=full_env, capture_output=True, text=True)
    assert bad.returncode == 2 and "no run 'nosuchrun'" in bad.stderr


def _fake_run(folder: Path, run_id: str, started: str, overrides: dict, status: str = "ok") -> None:
    path = folder / run_id
    path.mkdir(parents=True)
    (path / "meta.json").write_text(json.dumps({"started": started, "overrides": overrides, "status": status,
                                                "chapter": folder.name, "profile": "smoke"}))


def test_old_runs_are_pruned_per_kind_with_a_message(tmp_path, monkeypatch):
    folder = tmp_path / "A2-rerun"
    for i in range(5):
        _fake_run(folder, f"2026010{i}-000000-own", f"2026-01-0{i + 1}T00:00:00", {}, "ok" if i == 0 else "failed")
        _fake_run(folder, f"2026010{i}-000000-set", f"2026-01-0{i + 1}T00:00:01", {"n_repeats": i + 2})
    messages: list[str] = []
    monkeypatch.setenv("MEDEVAL_KEEP_RUNS", "2")
    removed = runs.prune(tmp_path, "A2-rerun", messages.append)
    left = {r.id for r in runs.list_runs(tmp_path, "A2-rerun")}
    # the only good run of the profile's own parameters is never pruned, however old
    assert left == {"20260100-000000-own", "20260103-000000-own", "20260104-000000-own",
                    "20260103-000000-set", "20260104-000000-set"}
    assert len(removed) == 5 and "pruned 5 old run(s)" in messages[0] and "MEDEVAL_KEEP_RUNS" in messages[0]
    monkeypatch.setenv("MEDEVAL_KEEP_RUNS", "zero")
    with pytest.raises(ValueError, match="MEDEVAL_KEEP_RUNS"):
        runs.keep_runs()


def test_junk_in_the_store_and_damaged_cached_runs_are_skipped_with_a_message(tmp_path, capsys):
    """A meta.json of the wrong shape, stray files and folders beside the runs, and a cached run whose results.json
    was truncated: listed runs skip them with one message each, and the damaged cached run is not served (the chapter
    is computed again) instead of every lookup crashing until --force."""
    folder = tmp_path / "A2-rerun"
    _fake_run(folder, "20260101-000000-good", "2026-01-01T00:00:00", {})
    for run_id in ("20260101-000000-good",):
        (folder / run_id / "results.json").write_text('{"x": 1}')
        (folder / run_id / "notebook.ipynb").write_text("{}")
        meta = json.loads((folder / run_id / "meta.json").read_text())
        (folder / run_id / "meta.json").write_text(json.dumps({**meta, "key": "k" * 64}))
    (folder / "20260102-000000-list").mkdir()
    (folder / "20260102-000000-list" / "meta.json").write_text("[1, 2, 3]")
    (folder / "stray.txt").write_text("not a run")
    (folder / "stray-folder").mkdir()
    assert [r.id for r in runs.list_runs(tmp_path, "A2-rerun")] == ["20260101-000000-good"]
    assert "skipping" in capsys.readouterr().err
    assert runs.find_good_run(tmp_path, "A2-rerun", "k" * 64).id == "20260101-000000-good"
    (folder / "20260101-000000-good" / "results.json").write_text('{"x": 1')  # truncated
    assert runs.find_good_run(tmp_path, "A2-rerun", "k" * 64) is None
    assert "results.json is not readable" in capsys.readouterr().err
    store = tmp_path / "store"
    junk = store / "smoke" / "A2-rerun" / "20260102-000000-list"
    junk.mkdir(parents=True)
    (junk / "meta.json").write_text("[1, 2, 3]")
    (store / "smoke" / "stray.txt").write_text("")
    listing = subprocess.run([sys.executable, "-m", "medeval.cli", "runs"], env={**os.environ, "MEDEVAL_RUNS": str(store)},
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and "Traceback" not in listing.stderr and "skipping" in listing.stderr


def _run_cli(env, *args):
    return subprocess.Popen([sys.executable, "-m", "medeval.cli", "run", "A2-rerun", "--profile", "smoke", *args],
                            env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_concurrent_runs_all_finish_and_publish_whole_runs(tmp_path):
    """Three runs at once: two with equal parameters (the same cache key: one publishes, or both publish whole
    identical runs) and one with other parameters (its own run)."""
    env = _sandbox(tmp_path)
    procs = [_run_cli(env, "--set", "n_repeats=4"), _run_cli(env, "--set", "n_repeats=4"),
             _run_cli(env, "--set", "n_repeats=6")]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    published = runs.list_runs(tmp_path / "_runs" / "smoke", "A2-rerun")
    assert all(r.status == "ok" for r in published)
    repeats = sorted(r.meta["params"]["n_repeats"] for r in published)
    assert repeats in ([4, 6], [4, 4, 6]), repeats
    for run in published:
        assert {p.name for p in run.path.iterdir()} == {*runs.RUN_FILES, GRID_PROFILE}
        assert run.results()["params"] == run.meta["params"]
        nb = nbformat.read(run.notebook, as_version=4)
        injected = next(c.source for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
        assert f"n_repeats = {run.meta['params']['n_repeats']}" in injected
    for out, _ in outs:  # each process names the notebook it published
        assert Path(out.strip().splitlines()[-1]).exists()
    assert not any((tmp_path / "_runs" / "smoke" / "A2-rerun" / ".staging").iterdir())


def _kernel_pids(marker: str) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if marker in (proc / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


def _group_members(pgid: int) -> list[int]:
    """Live processes of a process group (a killed process the container's init has not reaped yet is a zombie:
    it runs nothing and holds nothing, so it does not count)."""
    members = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if os.getpgid(int(proc.name)) == pgid and state not in ("Z", "X"):
                    members.append(int(proc.name))
            except (OSError, IndexError):
                continue
    return members


def _a_run_with_its_pool(tmp_path: Path, prefix: str):
    """A sandboxed `medeval run A2-rerun` whose kernel has started its two pool workers: (env, its private
    temporary folder, the runner process, the kernel's process group)."""
    env = _sandbox(tmp_path)
    # the run's kernel folder lands here, so other tests' kernels are not taken for this run's; a short path,
    # because the kernel's IPC socket paths must stay under the 107 characters of a Unix socket address
    private_tmp = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    env["TMPDIR"] = str(private_tmp)
    proc = _run_cli(env, "--force", "--set", "n_repeats=400", "--set", "test_sizes=[20, 40, 80, 160]",
                    "--set", "max_workers=2")
    deadline, kernel_group = time.time() + 120, None
    while time.time() < deadline and kernel_group is None:
        for pid in _kernel_pids(str(private_tmp / "medeval-kernel-")):
            try:
                group = os.getpgid(pid)
            except OSError:
                continue
            if len(_group_members(group)) >= 3:  # the kernel and its two pool workers
                kernel_group = group
        time.sleep(0.2)
    assert kernel_group is not None, "the kernel never started its pool"
    return env, private_tmp, proc, kernel_group


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_sigterm_stops_the_kernel_and_its_workers_and_keeps_the_run(tmp_path):
    env, private_tmp, proc, kernel_group = _a_run_with_its_pool(tmp_path, "sig-")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "resumes" in err
    deadline = time.time() + 10
    while _group_members(kernel_group) and time.time() < deadline:
        time.sleep(0.2)
    assert _group_members(kernel_group) == [], "the kernel or its workers outlived the run"
    [run] = runs.list_runs(tmp_path / "_runs" / "smoke", "A2-rerun")
    assert run.status == "interrupted" and "interrupted" in (run.path / "log.txt").read_text()
    shutil.rmtree(private_tmp, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_sigkill_of_the_runner_ends_the_kernel_and_workers_and_the_next_command_tidies(tmp_path):
    """kill -9 of `medeval run` used to leave its kernel and pool workers computing and its staging and kernel
    folders behind. Now the kernel and the workers watch their parent (medeval.runtime.lifetime, every 0.25 s) and
    are gone well within the 10 s allowed here (about 0.5 s on a quiet machine; without the watch they never go),
    and the next command lists the run as killed and removes both folders."""
    env, private_tmp, proc, kernel_group = _a_run_with_its_pool(tmp_path, "kill-")
    proc.kill()
    proc.communicate(timeout=30)
    deadline = time.time() + 10.0
    while _group_members(kernel_group) and time.time() < deadline:
        time.sleep(0.1)
    assert _group_members(kernel_group) == [], "the kernel or its workers outlived a killed runner by 10 s"
    assert list((tmp_path / "_runs" / "smoke" / "A2-rerun" / ".staging").iterdir())  # left behind, for now
    assert list(private_tmp.glob("medeval-kernel-*"))
    done = subprocess.run([sys.executable, "-m", "medeval.cli", "runs"], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "kept as 'killed'" in done.stderr, done.stderr
    [run] = runs.list_runs(tmp_path / "_runs" / "smoke", "A2-rerun")
    assert run.status == "killed"
    assert not list((tmp_path / "_runs" / "smoke" / "A2-rerun" / ".staging").iterdir())
    assert not list(private_tmp.glob("medeval-kernel-*"))
    shutil.rmtree(private_tmp, ignore_errors=True)


@pytest.mark.slow
def test_a_failing_notebook_is_kept_as_a_failed_run_never_served(tmp_path, monkeypatch):
    env = _sandbox(tmp_path)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    nb = tmp_path / "notebooks" / "A2-rerun.py"
    nb.write_text(nb.read_text().replace("summary = rerun_demo.summarise(runs)",
                                         "raise RuntimeError('boom in the grid cell')"))
    for _ in range(2):
        with pytest.raises(ChapterExecutionError, match="boom in the grid cell"):
            run_chapter("A2-rerun", "smoke", log=lambda _: None)
    listed = runs.list_runs(tmp_path / "_runs" / "smoke", "A2-rerun")
    assert [r.status for r in listed] == ["failed", "failed"]  # the second try executed again
    assert listed[0].notebook.exists() and "boom" in listed[0].meta["error"]


@pytest.mark.slow
def test_a_dying_kernel_is_reported_with_its_cell_and_memory_and_the_grid_resumes(tmp_path, monkeypatch):
    """A kernel that dies (here os._exit after the grid; the OOM killer would do the same) used to surface as a
    bare DeadKernelError traceback. Now: the cell, the peak memory the runner saw, the estimate, a failed run
    kept, and the next run served from the grid cache."""
    env = _sandbox(tmp_path)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    nb = tmp_path / "notebooks" / "A2-rerun.py"
    original = nb.read_text()
    nb.write_text(original.replace("summary = rerun_demo.summarise(runs)",
                                   "import os\nos._exit(9)\nsummary = rerun_demo.summarise(runs)"))
    with pytest.raises(ChapterExecutionError, match=r"the kernel died in cell \d+ \(killed, or out of memory: peak "
                                                    r"memory seen .*, estimated .*\).*resumes") as info:
        run_chapter("A2-rerun", "smoke", log=lambda _: None)
    assert "Traceback" not in str(info.value)
    [failed] = runs.list_runs(tmp_path / "_runs" / "smoke", "A2-rerun")
    assert failed.status == "failed" and failed.meta["error"] == "the kernel died"
    assert failed.meta["peak_memory_seen_bytes"] > 100 * 2**20  # the kernel's own imports at least
    cached = sum(1 for _ in (tmp_path / "_runs" / "grid-cache" / "smoke" / "A2-rerun").rglob("*.json"))
    assert cached > 0  # the grid ran before the kernel died, and its runs were kept


def test_compare_marks_changed_verdicts_and_checks(tmp_path):
    def fake(run_id, n, verdict, passed, auc):
        path = tmp_path / "smoke" / "03-eve" / run_id
        path.mkdir(parents=True)
        (path / "meta.json").write_text(json.dumps({"params": {"n": n}, "profile": "smoke", "chapter": "03-eve",
                                                    "status": "ok", "started": run_id}))
        (path / "results.json").write_text(json.dumps({
            "paper_vs_us": [{"id": "c1", "claim": "EVE is unbiased", "verdict": verdict},
                            {"id": "c2", "claim": "steady", "verdict": "[Re]"}],
            "checks": [{"check": "identity", "passed": passed}],
            "table": [{"size": 10, "auc": auc}, {"size": 20, "auc": 0.9}], "note": "x"}))
        return runs.Run(path, json.loads((path / "meta.json").read_text()))

    a, b = fake("a", 1, "[~]", True, 0.8), fake("b", 2, "[Re]", False, 0.85)
    report = runs.compare(a, b)
    assert report.parameters == [("n", 1, 2)]
    assert [(c, va, vb) for c, _, va, vb in report.verdicts] == [("c1", "[~]", "[Re]"), ("c2", "[Re]", "[Re]")]
    assert report.checks == [("identity", True, False)]
    assert report.numbers == [("table[size=10].auc", 0.8, 0.85)]
    text = report.to_text()
    assert "yes" in text.split("Verdicts:")[1].split("Checks:")[0]  # c1 marked as changed
    assert "+0.05" in text
