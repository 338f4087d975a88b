"""Gather benchmarks/results/*.md into benchmarks/RESULTS.md (one section per topic, in name order)."""

from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    parts = ["# Benchmark results", "",
             "Measured on this project's two kinds of development machine (2 cores, 24 GiB, no GPU): an Intel Xeon "
             "and an AMD EPYC. Every section names its machine; the files ending in `-amd-epyc` and "
             "`-AuthenticAMD` are the EPYC's.",
             "Each section was written by the script named in it; re-run it to refresh the figures.", ""]
    for path in sorted((HERE / "results").glob("*.md")):
        parts += [path.read_text().strip(), ""]
    (HERE / "RESULTS.md").write_text("\n".join(parts))
    print(HERE / "RESULTS.md")


if __name__ == "__main__":
    main()
