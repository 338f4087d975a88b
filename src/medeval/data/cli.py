"""``medeval data list | fetch ID | verify [ID ...] | where`` (wired into the ``medeval`` CLI by ``medeval.cli``).

``verify`` checks every file against what was recorded for it (``data_manifest.yaml`` for shipped files and
published archives, the dataset's content record for the files a fetch unpacked or a user placed) and prints
one line per file: OK, MISSING, TRUNCATED, CORRUPT, UNCHECKED or UNRECORDED (a file in a recorded dataset
folder that its record does not list), with the dataset id, the expected sha256 and size, and the remedy.
``--quick`` compares sizes only; ``--record`` writes the content record of a dataset you placed by hand, so that
later damage is detected; ``--strict`` fails on UNRECORDED files too.

Exit codes: 0 success (UNCHECKED and UNRECORDED files do not fail, except UNRECORDED with ``--strict``); 1 a file
is missing, truncated or corrupt (verify), a
download failed, or the dataset must be obtained manually / is private (fetch prints how); 2 usage errors
(unknown id, bad arguments).
"""

from __future__ import annotations

import argparse
import sys

from medeval.data import manifest as m

#: a dataset with at most this many files is listed file by file; larger ones show their problems and a count
LIST_ALL_UP_TO = 20
#: problem lines printed per dataset without --verbose
MAX_PROBLEM_LINES = 50


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="medeval data", description="Datasets of the compendium (data_manifest.yaml)."
    )
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list every dataset: id, access, local status, title")
    f = sub.add_parser(
        "fetch", help="download an 'auto' dataset (pooch, checksummed) or print how to obtain it"
    )
    f.add_argument("dataset_id", help="manifest id, e.g. cifar10")
    f.add_argument("--keep-archives", action="store_true", help="keep downloaded archives after unpacking")
    f.add_argument("--no-progress", action="store_true", help="no progress bar")
    f.add_argument(
        "--force",
        action="store_true",
        help="download and unpack every file again, replacing the dataset's content record (repairs damage)",
    )
    v = sub.add_parser(
        "verify",
        help="check files against their recorded sha256 and size; names every missing, truncated or corrupt file",
    )
    v.add_argument(
        "dataset_ids",
        nargs="*",
        help="ids to check (default: all; unfetched datasets are listed as unavailable)",
    )
    v.add_argument("--quick", action="store_true", help="compare sizes only (no hashing): finds truncation fast")
    v.add_argument(
        "--record",
        action="store_true",
        help="hash the files of the named datasets as they are now and write their content record "
        "(for datasets you placed by hand; later runs of verify compare against it)",
    )
    v.add_argument("-v", "--verbose", action="store_true", help="one line per file, also for large datasets")
    v.add_argument("--strict", action="store_true",
                   help="also fail (exit 1) on files a dataset's content record does not list (UNRECORDED)")
    sub.add_parser("where", help="print the data folder ($MEDEVAL_DATA or the user cache)")
    return p


def _status(entry: m.DatasetEntry) -> str:
    try:
        m.require(entry.id)
        return "available"
    except m.DatasetCorruptError:
        return "damaged"
    except m.DatasetUnavailableError:
        return {"private": "private", "manual": "not placed", "auto": "not fetched"}.get(
            entry.access, "missing"
        )


def _cmd_list(out) -> int:
    manifest = m.load_manifest()
    rows = [(e.id, e.access, _status(e), e.title) for e in manifest.datasets]
    w0 = max(len(r[0]) for r in rows)
    print(f"{'id':{w0}s}  {'access':8s}  {'status':11s}  title", file=out)
    for r in rows:
        print(f"{r[0]:{w0}s}  {r[1]:8s}  {r[2]:11s}  {r[3]}", file=out)
    print(f"\ndata folder: {m.data_dir()} (set MEDEVAL_DATA to change it)", file=out)
    return 0


def _cmd_fetch(dataset_id: str, keep_archives: bool, progress: bool, force: bool, out, err) -> int:
    entry = m.get_dataset(dataset_id)
    if entry.access in ("manual", "private"):
        print(f"{dataset_id}: access is {entry.access!r}; nothing can be downloaded automatically.", file=out)
        print(m._how_to_get(entry), file=out)
        print(f"Default stand-in: {entry.stand_in}", file=out)
        return 1
    try:
        path = m.fetch(dataset_id, progress=progress, keep_archives=keep_archives, force=force)
    except Exception as exc:  # network errors, checksum mismatches (pooch raises ValueError)
        print(f"fetch {dataset_id} failed: {exc}", file=err)
        return 1
    print(f"{dataset_id}: available at {path}", file=out)
    return 0


def _print_statuses(statuses: list[m.FileStatus], quick: bool, verbose: bool, out) -> None:
    groups: dict[str, list[m.FileStatus]] = {}
    for s in statuses:
        groups.setdefault(s.dataset_id, []).append(s)
    for dataset_id, group in groups.items():
        if verbose or len(group) <= LIST_ALL_UP_TO:
            for s in group:
                print(s.line(), file=out)
            continue
        others = [s for s in group if s.status != "ok"]
        for s in others[:MAX_PROBLEM_LINES]:
            print(s.line(), file=out)
        if len(others) > MAX_PROBLEM_LINES:
            print(f"{'':11s} {dataset_id}: {len(others) - MAX_PROBLEM_LINES} more (--verbose lists them)", file=out)
        n_ok = len(group) - len(others)
        if n_ok:
            what = "sizes match (not hashed: --quick)" if quick else "sha256 match"
            print(f"{'OK':11s} {dataset_id}: {n_ok} files, {what} (--verbose lists them)", file=out)


def _cmd_verify(ids: list[str], quick: bool, verbose: bool, out, strict: bool = False) -> int:
    statuses = m.verify(ids or None, quick=quick)
    _print_statuses(statuses, quick, verbose, out)
    extra = [s for s in statuses if s.status == "unrecorded"]
    if extra:
        print(f"\n{'error' if strict else 'warning'}: {len(extra)} file(s) not in their dataset's content record "
              "(UNRECORDED)" + (": --strict fails on them" if strict else ""), file=out)
    bad = [s for s in statuses if s.is_problem or (strict and s.status == "unrecorded")]
    unchecked = [s for s in statuses if s.status == "unchecked"]
    if bad:
        print(f"\n{len(bad)} file(s) missing, truncated or corrupt" + (" (or unrecorded)" if strict else "") + ":",
              file=out)
        for dataset_id in dict.fromkeys(s.dataset_id for s in bad):
            mine = [s for s in bad if s.dataset_id == dataset_id]
            counts = {k: sum(s.status == k for s in mine) for k in (*m.PROBLEM_STATUSES, "unrecorded")}
            summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
            print(f"  {dataset_id}: {summary}", file=out)
            for remedy in dict.fromkeys(s.remedy for s in mine if s.remedy):
                print(f"    remedy: {remedy}", file=out)
        return 1
    if unchecked:
        print(
            f"\nno file is missing, truncated or corrupt; {len(unchecked)} UNCHECKED (nothing recorded to compare "
            "with; see their lines for how to record it)",
            file=out,
        )
    elif quick:
        print("\nall checked files are present with their recorded sizes (--quick: contents not hashed)", file=out)
    else:
        print("\nall checked files are present and match their checksums", file=out)
    return 0


def _cmd_record(ids: list[str], out, err) -> int:
    if not ids:
        print("medeval data verify --record: name the dataset(s) to record, e.g. `verify mura --record`", file=err)
        return 2
    for dataset_id in ids:
        result = m.record_content(dataset_id)
        print(
            f"{dataset_id}: recorded {result.n_files} file(s), {result.n_bytes} bytes, in {result.path}", file=out
        )
        for label, paths in (("changed", result.changed), ("removed", result.removed)):
            if paths:
                shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
                print(f"  {len(paths)} file(s) {label} since the previous record: {shown}", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run ``medeval data ...`` with ``argv`` (without the leading "data"); return the exit code."""
    out, err = sys.stdout, sys.stderr
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help (0) and on usage errors (2)
        return int(exc.code or 0)
    try:
        if args.command == "list":
            return _cmd_list(out)
        if args.command == "fetch":
            return _cmd_fetch(args.dataset_id, args.keep_archives, not args.no_progress, args.force, out, err)
        if args.command == "verify":
            if args.record:
                return _cmd_record(args.dataset_ids, out, err)
            return _cmd_verify(args.dataset_ids, args.quick, args.verbose, out, strict=args.strict)
        if args.command == "where":
            print(m.data_dir(), file=out)
            return 0
    except m.DatasetUnavailableError as exc:  # data missing or damaged (DatasetCorruptError is also a ValueError)
        print(f"medeval data: {exc}", file=err)
        return 1
    except ValueError as exc:  # unknown dataset id and other bad input
        print(f"medeval data: {exc}", file=err)
        return 2
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
