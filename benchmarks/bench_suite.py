"""How long `make test` takes, and where the time goes, on a fresh clone of the committed HEAD.

    .venv/bin/python benchmarks/bench_suite.py [--top 15]

The clone uses this checkout's ``.venv`` (a symbolic link: the environment's install time is `bench_book.py
--fresh-clone`'s subject) and runs the README's test command, ``python -m pytest`` with the project's options (one
xdist worker per core), adding ``--durations=0``. Reported: the suite's wall time, the CPU time of it and all its
processes, the worker time per test module (setup + call + teardown of its tests, summed), largest first, and the
slowest tests.
Writes ``results/test-suite.md``.
"""

import argparse
import collections
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from _report import machine  # noqa: E402

#: the suite's budgets (issue #33)
BUDGET = "4 min on the AMD EPYC the project was first timed on, 8 min on a machine 2x slower"
DURATION = re.compile(r"^\s*([\d.]+)s (?:call|setup|teardown)\s+(\S+)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEDEVAL_", "PYTHONPATH"))}
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "medeval"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        (clone / ".venv").symlink_to(ROOT / ".venv")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider",
                               "-q", "--durations=0"], cwd=clone, env={**env, "PYTHONPATH": str(clone / "src")},
                              capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = proc.stdout
    summary = next((line for line in reversed(out.splitlines()) if " passed" in line or " failed" in line), "?")
    per_module: collections.Counter = collections.Counter()
    per_test: collections.Counter = collections.Counter()
    for line in out.splitlines():
        if m := DURATION.match(line):
            per_module[m.group(2).split("::")[0]] += float(m.group(1))
            per_test[m.group(2)] += float(m.group(1))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    worker = sum(per_module.values())
    rows = "\n".join(f"| `{mod}` | {t:.1f} |" for mod, t in per_module.most_common(args.top))
    rest = worker - sum(t for _, t in per_module.most_common(args.top))
    slowest = "\n".join(f"| `{test}` | {t:.1f} |" for test, t in per_test.most_common(args.top))
    text = (f"# Test suite\n\n"
            f"Command: `.venv/bin/python benchmarks/bench_suite.py` (commit {head}: a fresh clone running "
            f"`python -m pytest` with the project's options, one xdist worker per core).  \n"
            f"Machine: {machine()}, Python {platform.python_version()}; "
            f"load average at the end {', '.join(f'{x:.1f}' for x in os.getloadavg())}.\n\n"
            f"Result: {summary.strip(' =')} (exit {proc.returncode}).\n\n"
            f"| measure | value |\n|---|---|\n| wall time | **{wall:.1f} s** ({wall / 60:.1f} min; budget {BUDGET}) |\n"
            f"| CPU time, every process of the suite | {cpu:.0f} s ({cpu / wall:.2f} cores busy on average) |\n"
            f"| worker time (test durations summed) | {worker:.0f} s |\n\n"
            f"Worker time per module, largest first:\n\n| module | seconds |\n|---|---|\n{rows}\n"
            f"| the other {len(per_module) - min(args.top, len(per_module))} modules | {rest:.1f} |\n\n"
            f"The {args.top} slowest tests (setup + call + teardown; a module-scoped fixture's setup counts in the "
            f"first test that uses it):\n\n| test | seconds |\n|---|---|\n{slowest}\n")
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "test-suite.md").write_text(text)
    print(text)
    if proc.returncode != 0:
        print(out[-5000:])
        raise SystemExit(proc.returncode)


if __name__ == "__main__":
    main()
