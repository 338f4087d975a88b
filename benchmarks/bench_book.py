"""A cached rebuild of the whole book against a build from scratch, on the same profile, in one run.

    .venv/bin/python benchmarks/bench_book.py [--profile smoke]
"""

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", default="smoke")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEDEVAL_RUNS"] = str(Path(tmp) / "runs")
        from medeval.runtime.book import build_book

        out = Path(tmp) / "book"
        t0 = time.perf_counter()
        build_book(args.profile, out_dir=out, log=lambda m: None)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        build_book(args.profile, out_dir=out, log=lambda m: None)
        warm = time.perf_counter() - t0
    text = (
        f"## Book build ({args.profile} profile)\n\n"
        f"`.venv/bin/python benchmarks/bench_book.py --profile {args.profile}` on {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores.\n\n"
        f"| build | seconds |\n|---|---|\n| from scratch (execute every page + render) | {cold:.1f} |\n"
        f"| cached, nothing changed | {warm:.1f} |\n\nRatio: {cold / warm:.0f}x.\n"
    )
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / f"book-{args.profile}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
