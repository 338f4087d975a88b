"""Every ``MEDEVAL_*`` environment variable, checked when a command starts.

A variable is read where it acts (the run store when a run is stored, the number of runs kept when old ones are
pruned), which can be minutes into a run: ``MEDEVAL_KEEP_RUNS=abc`` crashed with a traceback after the run had
computed for 18-33 s. :func:`check_environment` reads them all first and refuses a bad one with the variable,
its value and what is expected, before any compute; a ``MEDEVAL_`` name that medeval does not know (a typo such as
``MEDEVAL_KEEP_RUN``) is refused with the known names, since it would otherwise be ignored silently.
"""

from __future__ import annotations

import os
from pathlib import Path

#: every variable medeval reads, with what it means (``medeval --help`` and the README list the user-facing ones)
VARIABLES: dict[str, str] = {
    "MEDEVAL_RUNS": "the run store (a folder; default _runs in the project)",
    "MEDEVAL_DATA": "the data folder (default data/ in the project)",
    "MEDEVAL_ROOT": "the project root (default: found from the package)",
    "MEDEVAL_KEEP_RUNS": "runs kept per chapter and profile (a whole number >= 1; default 10)",
    "MEDEVAL_MEMORY_LIMIT": "memory a run may use (bytes, or with a K/M/G suffix)",
    "MEDEVAL_NUMERICS": "pinned or native",
    "MEDEVAL_PROBE_SECONDS": "this machine's speed-probe time (a positive number of seconds)",
    "MEDEVAL_ONEDNN": "1 to keep oneDNN on under pinned numerics (0 or 1)",
    "MEDEVAL_GRID_FRESH": "1 to recompute every grid run (set by --force; 0 or 1)",
    "MEDEVAL_RECORD_TIMINGS": "0 to keep runs out of _runs/timings.json (0 or 1)",
    "MEDEVAL_RESULTS_FILE": "set by medeval for a chapter kernel: where it records its results",
    "MEDEVAL_GRID_PROFILE": "set by medeval for a chapter kernel: the file its grids' time records go to",
    # read by the test suite (tests/), which starts medeval commands with them set
    "MEDEVAL_FUZZ_EXAMPLES": "tests: draws of the parameter fuzz test",
    "MEDEVAL_FUZZ_REPORT": "tests: where the fuzz test writes its counts",
    "MEDEVAL_TEST_SCREENSHOTS": "tests: where the browser test saves screenshots",
    "MEDEVAL_TEST_ARTEFACTS": "tests: where tests keep what they produced",
}

_FLAGS = ("MEDEVAL_ONEDNN", "MEDEVAL_GRID_FRESH", "MEDEVAL_RECORD_TIMINGS")


def environment_problems(environ: dict[str, str] | None = None) -> list[str]:
    """What is wrong with the ``MEDEVAL_*`` variables of ``environ`` (default: this process's), one line each."""
    env = dict(os.environ if environ is None else environ)
    problems = []
    for name in sorted(k for k in env if k.startswith("MEDEVAL_") and k not in VARIABLES):
        problems.append(f"{name}: not a variable medeval reads (a typo?); known: {', '.join(VARIABLES)}")
    keep = env.get("MEDEVAL_KEEP_RUNS")
    if keep is not None:
        try:
            ok = int(keep.strip()) >= 1
        except ValueError:
            ok = False
        if not ok:
            problems.append(f"MEDEVAL_KEEP_RUNS={keep!r}: expected a whole number >= 1")
    for name in _FLAGS:
        if name in env and env[name].strip() not in ("0", "1"):
            problems.append(f"{name}={env[name]!r}: expected 0 or 1")
    numerics = env.get("MEDEVAL_NUMERICS")
    if numerics is not None and numerics.strip().lower() not in ("", "pinned", "native"):
        problems.append(f"MEDEVAL_NUMERICS={numerics!r}: expected pinned or native")
    from medeval.runtime.params import ParameterError

    probe = env.get("MEDEVAL_PROBE_SECONDS")
    if probe:
        from medeval.runtime.calibration import parse_probe_seconds

        try:
            parse_probe_seconds(probe)
        except ParameterError as exc:
            problems.append(str(exc))
    limit = env.get("MEDEVAL_MEMORY_LIMIT")
    if limit:
        from medeval.runtime.resources import parse_memory

        try:
            if parse_memory(limit) <= 0:
                problems.append(f"MEDEVAL_MEMORY_LIMIT={limit!r}: expected a positive size, e.g. 8G or 512M")
        except ParameterError as exc:
            problems.append(str(exc))
    for name in ("MEDEVAL_RUNS", "MEDEVAL_DATA", "MEDEVAL_ROOT"):
        value = env.get(name)
        if value is None:
            continue
        if not value.strip():
            problems.append(f"{name}='': expected a folder")
            continue
        path = Path(value).expanduser()
        if path.exists() and not path.is_dir():
            problems.append(f"{name}={value!r}: expected a folder, found a file")
        elif name == "MEDEVAL_ROOT" and not path.is_dir():
            problems.append(f"{name}={value!r}: expected an existing folder (the project root)")
        elif name == "MEDEVAL_RUNS" and path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
            problems.append(f"{name}={value!r}: the folder is not writable")
    return problems


def check_environment(environ: dict[str, str] | None = None) -> None:
    """Raise :class:`~medeval.core.schema.ParameterError` naming every bad ``MEDEVAL_*`` variable."""
    problems = environment_problems(environ)
    if problems:
        from medeval.runtime.params import ParameterError

        raise ParameterError("environment:\n" + "\n".join(f"  {p}" for p in problems))
