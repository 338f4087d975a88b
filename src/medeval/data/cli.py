"""``medeval data list | fetch ID | verify [ID ...]`` (wired into the ``medeval`` CLI by ``medeval.cli``).

Exit codes: 0 success; 1 a file is missing or corrupt (verify), a download failed, or the dataset
must be obtained manually / is private (fetch prints how); 2 usage errors (unknown id, bad arguments).
"""

from __future__ import annotations

import argparse
import sys

from medeval.data import manifest as m


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
    v = sub.add_parser(
        "verify", help="check files against their checksums; names every missing or corrupt file"
    )
    v.add_argument(
        "dataset_ids",
        nargs="*",
        help="ids to check (default: all; unfetched datasets are listed as unavailable)",
    )
    sub.add_parser("where", help="print the data folder ($MEDEVAL_DATA or the user cache)")
    return p


def _status(entry: m.DatasetEntry) -> str:
    try:
        m.require(entry.id)
        return "available"
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


def _cmd_fetch(dataset_id: str, keep_archives: bool, progress: bool, out, err) -> int:
    entry = m.get_dataset(dataset_id)
    if entry.access in ("manual", "private"):
        print(f"{dataset_id}: access is {entry.access!r}; nothing can be downloaded automatically.", file=out)
        print(m._how_to_get(entry), file=out)
        print(f"Default stand-in: {entry.stand_in}", file=out)
        return 1
    try:
        path = m.fetch(dataset_id, progress=progress, keep_archives=keep_archives)
    except Exception as exc:  # network errors, checksum mismatches (pooch raises ValueError)
        print(f"fetch {dataset_id} failed: {exc}", file=err)
        return 1
    print(f"{dataset_id}: available at {path}", file=out)
    return 0


def _cmd_verify(ids: list[str], out) -> int:
    statuses = m.verify(ids or None)
    bad = [s for s in statuses if s.status in ("missing", "corrupt")]
    for s in statuses:
        print(s.line(), file=out)
    if bad:
        print(f"\n{len(bad)} file(s) missing or corrupt:", file=out)
        for s in bad:
            print(f"  {s.path}: {s.status}, expected {s.expected or 'no published checksum'}", file=out)
        return 1
    print("\nall checked files are present and match their checksums", file=out)
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
            return _cmd_fetch(args.dataset_id, args.keep_archives, not args.no_progress, out, err)
        if args.command == "verify":
            return _cmd_verify(args.dataset_ids, out)
        if args.command == "where":
            print(m.data_dir(), file=out)
            return 0
    except ValueError as exc:  # unknown dataset id and other bad input
        print(f"medeval data: {exc}", file=err)
        return 2
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
