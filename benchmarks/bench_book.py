"""How long the book takes to build, against the same build with nothing to do, in one run.

    .venv/bin/python benchmarks/bench_book.py [--profile smoke]           # in-process: from scratch, then cached
    .venv/bin/python benchmarks/bench_book.py --fresh-clone               # `make env` + `make book` in a fresh clone

``--fresh-clone`` clones the committed HEAD into a temporary folder and runs, as a new user would, ``make env``
(the virtual environment from nothing; pip's download cache is whatever this machine has), ``make book`` and a
second ``make book`` that has nothing to do, then ``medeval verify`` on that build (is it the committed reference,
verdict for verdict and bit for bit, on this machine?). It reports each command's wall time, where the book's time went per
chapter (the runner's ``done in`` lines) and in the rendering, and writes ``results/book-fresh-<profile>.md``; then,
from the clone's run store, where each chapter's run went (cells, grids, kinds of run: ``bench_chapters.py``) in
``results/chapters-<profile>.md``.
"""

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from _report import machine  # noqa: E402

#: the budgets of issue #33 for a build from a clean clone, environment included, and for the no-op build
BUDGET = "6 min on the AMD EPYC the project was first timed on, 12 min on a machine 2x slower"
NOOP_BUDGET = "5 s"


def in_process(profile: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEDEVAL_RUNS"] = str(Path(tmp) / "runs")
        from medeval.runtime.book import build_book

        out = Path(tmp) / "book"
        t0 = time.perf_counter()
        build_book(profile, out_dir=out, log=lambda m: None)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        build_book(profile, out_dir=out, log=lambda m: None)
        warm = time.perf_counter() - t0
    return (f"# Book build ({profile} profile)\n\n"
            f"`.venv/bin/python benchmarks/bench_book.py --profile {profile}` on "
            f"{machine()}.\n\n"
            f"| build | seconds |\n|---|---|\n| from scratch (execute every page + render) | {cold:.1f} |\n"
            f"| cached, nothing changed | {warm:.1f} |\n\nRatio: {cold / warm:.0f}x.\n")


def timed(cmd: list[str], cwd: Path, env: dict) -> tuple[float, list[tuple[float, str]]]:
    """Run ``cmd``; its wall time and its output lines, each with the second it appeared at."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = [(time.perf_counter() - t0, line.rstrip()) for line in proc.stdout]
    if proc.wait() != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n" + "\n".join(text for _, text in lines[-40:]))
    return time.perf_counter() - t0, lines


def fresh_clone(profile: str) -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEDEVAL_", "VIRTUAL_ENV", "PYTHONPATH"))}
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "medeval"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        make_env, _ = timed(["make", "env"], clone, env)
        book, lines = timed(["make", "book", f"PROFILE={profile}"], clone, env)
        noop, _ = timed(["make", "book", f"PROFILE={profile}"], clone, env)
        verify = subprocess.run([str(clone / ".venv" / "bin" / "medeval"), "verify", "--profile", profile], cwd=clone,
                                env=env, capture_output=True, text=True)
        subprocess.run([sys.executable, str(HERE / "bench_chapters.py"), "--profile", profile, "--runs",
                        str(clone / "_runs"), "--out", str(HERE / "results" / f"chapters-{profile}.md")], check=True)
    chapters = [(m["id"], float(m["s"])) for _, text in lines
                if (m := re.search(r"\[medeval\] (?P<id>\S+) \(\w+\): done in (?P<s>[\d.]+) s", text))]
    render_start = next((t for t, text in lines if "rendering with jupyter-book" in text), None)
    render = book - render_start if render_start is not None else float("nan")
    rows = "\n".join(f"| {cid} | {s:.1f} |" for cid, s in chapters)
    total = make_env + book
    summary = [line for line in verify.stdout.splitlines() if re.match(r"(medeval verify|[0-9A-Z]\w*-[\w-]+: )", line)]
    return (f"# Book from a fresh clone ({profile} profile)\n\n"
            f"Command: `.venv/bin/python benchmarks/bench_book.py --fresh-clone --profile {profile}` (commit {head}; "
            f"a fresh `git clone`, then `make env`, `make book`, `make book` again).  \n"
            f"Machine: {machine()}, Python {platform.python_version()}; pip's "
            f"download cache as this machine had it.\n\n"
            f"| step | seconds |\n|---|---|\n| `make env` (the virtual environment from nothing) | {make_env:.1f} |\n"
            f"| `make book` (execute every chapter, render) | {book:.1f} |\n"
            f"| **from a clean clone, environment included** | **{total:.1f}** ({total / 60:.1f} min; budget {BUDGET}) |\n"
            f"| `make book` again, nothing changed | {noop:.1f} (budget {NOOP_BUDGET}) |\n\n"
            f"Where `make book`'s time went:\n\n| chapter (executed with papermill) | seconds |\n|---|---|\n{rows}\n"
            f"| rendering with jupyter-book (every page, the API reference, the search index) | {render:.1f} |\n"
            f"| imports, cache keys, staging | {book - sum(s for _, s in chapters) - render:.1f} |\n\n"
            f"Ratio fresh build / no-op build: {book / noop:.0f}x.\n\n"
            f"`medeval verify --profile {profile}` on the clone's build, against `results/reference/{profile}.json` "
            f"(exit {verify.returncode}):\n\n```\n" + "\n".join(summary) + "\n```\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", default=None, help="default: smoke in-process, default with --fresh-clone")
    parser.add_argument("--fresh-clone", action="store_true")
    args = parser.parse_args()
    profile = args.profile or ("default" if args.fresh_clone else "smoke")
    text = fresh_clone(profile) if args.fresh_clone else in_process(profile)
    name = f"book-fresh-{profile}.md" if args.fresh_clone else f"book-{profile}.md"
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / name).write_text(text)
    print(text, file=sys.stdout)


if __name__ == "__main__":
    main()
