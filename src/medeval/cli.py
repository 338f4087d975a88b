"""Command line: ``medeval book | run | runs | compare | verify | robustness | calibrate | params | chapters |
new-chapter | data | cache | student | grade | answers``."""

from __future__ import annotations

import argparse
import sys

from medeval.runtime.params import (
    PROFILES,
    ParameterError,
    chapters,
    check_profile,
    describe_schema,
    parse_assignment,
    resolve_params,
)
from medeval.runtime.preflight import preflight


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="medeval", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    book = sub.add_parser("book", help="execute every chapter (cached) and render the book")
    book.add_argument("--profile", default="default", help=f"one of {', '.join(PROFILES)} (default: default)")
    book.add_argument("--force", action="store_true", help="re-execute every chapter even if cached")
    book.add_argument("--yes", action="store_true", help="start chapters estimated above 2 h here")
    book.add_argument("--only", nargs="+", metavar="CHAPTER", help="build with these chapters only")
    book.add_argument("--runs", nargs="+", metavar="RUN", default=None,
                      help="add these kept runs (ids from `medeval runs`) to the book as a Re-runs part")
    book.add_argument("--no-solutions", action="store_true",
                      help="leave the exercises' solutions out of the book entirely (a student edition)")

    run = sub.add_parser("run", help="execute one chapter with a profile and parameter overrides")
    run.add_argument("chapter")
    run.add_argument("--profile", default="default", help=f"one of {', '.join(PROFILES)} (default: default)")
    run.add_argument("--set", dest="assignments", action="append", default=[], metavar="NAME=VALUE",
                     help="override one parameter (repeatable); the value is read as YAML")
    run.add_argument("--force", action="store_true", help="re-execute even if cached")
    run.add_argument("--yes", action="store_true", help="start even when the run is estimated above 2 h here")

    runs = sub.add_parser("runs", help="list the kept runs (id, date, profile, parameters that differ, status)")
    runs.add_argument("chapter", nargs="?", default=None)
    runs.add_argument("--profile", default=None, help="only this profile (default: all)")

    compare = sub.add_parser("compare", help="two runs side by side: parameters, numbers, verdicts that changed")
    compare.add_argument("run_a", metavar="RUN_A")
    compare.add_argument("run_b", metavar="RUN_B")
    compare.add_argument("--markdown", metavar="PATH", help="also write the report as Markdown")
    compare.add_argument("--html", metavar="PATH", help="also write the report as HTML")

    verify = sub.add_parser("verify", help="compare this build's recorded results with the committed reference "
                                           "(exit 1 when a verdict or a number beyond tolerance differs)")
    verify.add_argument("--profile", default="default", help=f"one of {', '.join(PROFILES)} (default: default)")
    verify.add_argument("--update", action="store_true",
                        help="write results/reference/<profile>.json from this build instead (review its diff)")
    verify.add_argument("--kernels", action="store_true",
                        help="instead, check in seconds that this machine's pinned kernels compute the recorded "
                             "bits (before a build of minutes)")

    robust = sub.add_parser("robustness", help="re-run chapters under K master seeds and count each claim's verdicts")
    robust.add_argument("chapters", nargs="+", metavar="CHAPTER", help="chapter ids, or 'all'")
    robust.add_argument("--seeds", type=int, default=5, help="number of master seeds (default 5)")
    robust.add_argument("--profile", default="default", help=f"one of {', '.join(PROFILES)} (default: default)")
    robust.add_argument("--scheduler", default=None, help="Dask scheduler address: one chapter run per task")
    robust.add_argument("--workers", type=int, default=1,
                        help="local chapter runs at once (default 1: each run already uses every core)")
    robust.add_argument("--update", action="store_true",
                        help="write the committed record results/robustness/<profile>.json (else _runs/robustness/)")

    calibrate = sub.add_parser("calibrate", help="write results/timings.json from this machine's measured runs "
                                                 "(the committed reference machine; run on purpose)")
    calibrate.add_argument("--profile", dest="profiles", action="append", default=None,
                           help="profile to take from this machine (repeatable; default: smoke and default)")

    params = sub.add_parser("params", help="print a chapter's parameter schema: ranges, defaults, help")
    params.add_argument("chapter")

    chapters_p = sub.add_parser("chapters", help="list the chapters")
    chapters_p.add_argument("--write-tables", action="store_true",
                            help="rewrite the chapter tables of README.md and book/intro.md from params/*.yaml")

    new = sub.add_parser("new-chapter", help="write a new chapter from the chapter template (runs as generated)")
    new.add_argument("chapter", metavar="ID", help="e.g. 06-my-paper (appendix pages: A3-...)")
    new.add_argument("--title", required=True)
    new.add_argument("--part", default="chapters", choices=["chapters", "appendix"])
    new.add_argument("--module", default=None, help="experiments module name (default: from the id)")

    student = sub.add_parser("student", help="write student notebooks (solutions removed) and the teacher's checks")
    student.add_argument("chapters", nargs="*", metavar="CHAPTER", help="chapters (default: all)")
    student.add_argument("--out", default=None, help="output folder (default: _build/teaching)")
    student.add_argument("--no-check", action="store_true",
                         help="do not execute the teacher version to prove every solution passes its checks")
    student.add_argument("--kit", default=None, metavar="DIR",
                         help="write instead a folder to hand out, without any solution: medeval's wheel, params/, "
                              "data/, the student notebooks and a README with the install steps")

    grade = sub.add_parser(
        "grade", help="grade a filled-in student notebook, or a class folder of them, exercise by exercise",
        description="Execute each notebook in a kernel of its own, in an empty folder, with a per-cell and a "
                    "whole-notebook timeout, and score it against the teacher's hidden checks (expected values "
                    "stored as constants by `medeval student`). A cell past its timeout or a dying kernel ends the "
                    "run; the exercises before it keep their scores. Code that imports otter, names a tests "
                    "folder, assigns to a module's attribute (np.isclose = ...) or uses the reference function an "
                    "exercise is checked against is FLAGGED in the report for the teacher to read.")
    grade.add_argument("notebook", metavar="NOTEBOOK_OR_DIR",
                       help="a handed-in .ipynb, or a folder of them (one per student, named after the student)")
    grade.add_argument("--chapter", default=None, help="the chapter, if the notebook's metadata lacks it")
    grade.add_argument("--teacher", default=None, metavar="DIR",
                       help="teacher folder of `medeval student` with hidden-checks.json (default: computed afresh "
                            "from the chapter's solutions)")
    grade.add_argument("--timeout", type=float, default=None, metavar="S",
                       help="seconds a whole notebook may run (default: 1200)")
    grade.add_argument("--cell-timeout", type=float, default=None, metavar="S",
                       help="seconds one cell may run (default: 300)")
    grade.add_argument("--json", action="store_true", help="print the scores as JSON")
    grade.add_argument("--csv", action="store_true",
                       help="print one CSV row per notebook: a column per exercise, total, possible, flags")
    grade.add_argument("--teacher-scores", default=None, metavar="CSV",
                       help="the teacher's scores of the exercises read by hand (columns student, exercise, "
                            "score; student = notebook file name without .ipynb), merged into --csv")

    answers = sub.add_parser("answers", help="collect the teacher-read answers of handed-in notebooks into one "
                                             "HTML page, each beside its model answer and rubric")
    answers.add_argument("folder", help="folder of handed-in student notebooks (searched recursively)")
    answers.add_argument("--out", default="answers.html", help="the HTML page to write (default: answers.html)")

    cache = sub.add_parser("cache", help="the grid cache: ls | verify | clear [CHAPTER] (executed notebooks are not "
                                         "touched)")
    cache.add_argument("action", choices=["ls", "verify", "clear"])
    cache.add_argument("chapter", nargs="?", default=None)
    cache.add_argument("--profile", default=None, help="only this profile (default: all)")

    data = sub.add_parser("data", help="datasets: list | fetch ID | verify", add_help=False)
    data.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        _check_environment()
        if args.command == "data":
            from medeval.data.cli import main as data_main

            return data_main(args.rest)
        if args.command == "chapters":
            if args.write_tables:
                from medeval.runtime.chapter_tables import write_chapter_tables

                changed = write_chapter_tables()
                print("\n".join(f"rewrote {p}" for p in changed) or "the chapter tables are up to date")
                return 0
            for cid, ch in chapters().items():
                print(f"{cid:28s} {ch.part:9s} {ch.title}")
            return 0
        if args.command == "new-chapter":
            from medeval.runtime.scaffold import new_chapter

            made = new_chapter(args.chapter, args.title, part=args.part, module=args.module)
            print(f"wrote chapter {made.chapter_id} (module {made.module}):")
            print("\n".join(f"  {p}" for p in made.files))
            print(f"next: .venv/bin/medeval run {made.chapter_id} --profile smoke; "
                  f".venv/bin/python -m pytest tests/notebooks/test_{made.chapter_id}.py")
            return 0
        if args.command == "cache":
            return _cache(args)
        if args.command == "verify":
            return _verify(args)
        if args.command == "calibrate":
            from medeval.runtime.calibration import CalibrationError, calibrate

            profiles = args.profiles or ["smoke", "default"]
            check_profile(*profiles)
            try:
                calibrate(profiles)
            except CalibrationError as exc:
                print(f"medeval: error: {exc}", file=sys.stderr)
                return 1
            return 0
        if args.command == "robustness":
            from medeval.runtime.robustness import robustness

            check_profile(args.profile)
            if args.workers < 1:
                raise ParameterError(f"--workers must be >= 1, got {args.workers}")
            ids = list(chapters()) if args.chapters == ["all"] else args.chapters
            _terminate_as_interrupt()
            path = robustness(ids, args.profile, args.seeds, scheduler=args.scheduler, max_workers=args.workers,
                              update=args.update)
            print(path)
            return 0
        if args.command in ("runs", "compare"):
            return _runs(args)
        if args.command in ("student", "grade"):
            return _teaching(args)
        if args.command == "answers":
            from pathlib import Path

            from medeval.runtime.answers import AnswersError, write_answers
            from medeval.runtime.course import CourseError
            from medeval.runtime.exercises import ExerciseFormatError

            try:
                print(write_answers(Path(args.folder), Path(args.out)))
            except (AnswersError, CourseError, ExerciseFormatError) as exc:
                print(f"medeval: error: {exc}", file=sys.stderr)
                return 2
            return 0
        if args.command == "params":
            print(describe_schema(args.chapter))
            return 0
        if args.command == "run":  # refuse bad parameters and what this machine cannot run before heavy imports
            check_profile(args.profile)
            overrides = dict(parse_assignment(a) for a in args.assignments)
            preflight(args.chapter, resolve_params(args.chapter, args.profile, overrides))
        from medeval.runtime.book import build_book
        from medeval.runtime.execution import ChapterExecutionError, run_chapter

        _terminate_as_interrupt()

        try:
            if args.command == "run":
                res = run_chapter(args.chapter, args.profile, overrides, force=args.force, confirm_long=args.yes)
                print(res.notebook)
                return 0
            if args.command == "book":
                html = build_book(args.profile, force=args.force, chapters_only=args.only,
                                  solutions=not args.no_solutions, reruns=args.runs, confirm_long=args.yes)
                print(html / "index.html")
                return 0
        except ChapterExecutionError as exc:
            print(f"medeval: error: {exc}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("medeval: interrupted; the run is kept with status 'interrupted' (`medeval runs`)", file=sys.stderr)
            return 130
    except ParameterError as exc:
        print(f"medeval: error: {exc}", file=sys.stderr)
        return 2
    return 2


def _terminate_as_interrupt() -> None:
    """SIGTERM stops a run the way Ctrl-C does: the kernel and its workers are stopped and the run is kept."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def _runs(args) -> int:
    from pathlib import Path

    from medeval.runtime import runs
    from medeval.runtime.paths import runs_dir

    root = runs_dir()
    if args.command == "compare":
        for option, target in (("--markdown", args.markdown), ("--html", args.html)):
            if target and not Path(target).resolve().parent.is_dir():
                raise ParameterError(f"{option} {target}: the folder {Path(target).resolve().parent} does not exist")
            if target and Path(target).is_dir():
                raise ParameterError(f"{option} {target}: a folder; give a file name")
        try:
            a, b = runs.find_run(args.run_a, root), runs.find_run(args.run_b, root)
        except LookupError as exc:
            raise ParameterError(str(exc)) from None
        report = runs.compare(a, b)
        print(report.to_text())
        if args.markdown:
            Path(args.markdown).write_text(report.to_markdown())
            print(f"\nMarkdown report: {args.markdown}")
        if args.html:
            Path(args.html).write_text(report.to_html())
            print(f"HTML report: {args.html}")
        return 0
    if args.chapter is not None and args.chapter not in chapters():
        raise ParameterError(f"unknown chapter {args.chapter!r}; known: {', '.join(chapters())}")
    check_profile(args.profile)
    profiles = [args.profile] if args.profile else [p for p in PROFILES if (root / p).is_dir()]
    rows = [r for p in profiles for r in runs.list_runs(root / p, args.chapter)]
    if not rows:
        print("no runs kept yet; `medeval run CHAPTER` makes one")
        return 0
    print(runs.runs_table(rows))
    return 0


def _verify(args) -> int:
    from medeval.runtime import reference

    if args.kernels:
        return _verify_kernels()
    check_profile(args.profile)
    results = reference.current_results(args.profile)
    if args.update:
        missing = [c for c, r in results.items() if r is None]
        if missing:
            raise ParameterError(f"no run of the current code for {missing}; `medeval book --profile "
                                 f"{args.profile}` first")
        print(f"wrote {reference.write_reference(results, args.profile)}")
        return 0
    try:
        ref = reference.load_reference(args.profile)
    except (FileNotFoundError, ValueError) as exc:
        raise ParameterError(str(exc)) from None
    report = reference.verify(results, ref)
    print(report.to_text())
    return 1 if report.failed else 0


def _verify_kernels() -> int:
    from medeval.runtime import numerics

    seen = numerics.check_kernels()
    for name, digest in seen["parts"].items():
        print(f"{name}: {'same bits' if name not in seen['moved'] else 'DIFFERENT bits'} "
              f"({digest}; recorded {numerics.KERNEL_BITS.get(name, 'nothing')})")
    for problem in seen["problems"]:
        print(f"not pinned: {problem}")
    ok = not seen["moved"] and not seen["problems"]
    print(f"medeval verify --kernels: {'the pinned kernels compute the recorded bits here' if ok else 'FAIL'} "
          f"({numerics.cpu_vendor() or 'unknown'} CPU)")
    return 0 if ok else 1


def _check_environment() -> None:
    """Every ``MEDEVAL_*`` variable checked before any command acts (a bad one is refused by name), and the
    folders made absolute, so that a chapter kernel started in another folder reads the same ones."""
    import os
    from pathlib import Path

    from medeval.runtime.environment import check_environment

    check_environment()
    for name in ("MEDEVAL_RUNS", "MEDEVAL_DATA", "MEDEVAL_ROOT"):
        if os.environ.get(name):
            os.environ[name] = str(Path(os.environ[name]).expanduser().absolute())
    from medeval.runtime.paths import runs_dir
    from medeval.runtime.runs import reap_stale

    reap_stale(runs_dir())  # what runners killed with SIGKILL left behind


def _cache(args) -> int:
    from medeval.runtime.execution import clear_grid_cache, grid_cache_summary, verify_grid_cache

    if args.chapter is not None and args.chapter not in chapters():
        raise ParameterError(f"unknown chapter {args.chapter!r}; known: {', '.join(chapters())}")
    check_profile(args.profile)
    if args.action == "ls":
        rows = [r for r in grid_cache_summary(args.chapter) if args.profile in (None, r["profile"])]
        if not rows:
            print("the grid cache is empty")
        for r in rows:
            print(f"{r['profile']:8s} {r['chapter']:26s} {r['entries']:6d} entries {r['bytes'] / 1e6:9.1f} MB  {r['path']}")
        return 0
    if args.action == "verify":
        report = verify_grid_cache(args.chapter, args.profile)
        print(f"checked {report['checked']} grid-cache entries: "
              + ("all usable" if not report["bad"] else f"{len(report['bad'])} cannot be used (a run recomputes them)"))
        for b in report["bad"]:
            print(f"  {b['path']}: {b['problem']}")
        return 1 if report["bad"] else 0
    removed = clear_grid_cache(args.chapter, args.profile)
    print(f"removed {len(removed)} grid-cache folder(s)" + "".join(f"\n  {p}" for p in removed))
    return 0


def _teaching(args) -> int:
    import json
    from pathlib import Path

    from medeval.runtime import grading
    from medeval.runtime.exercises import ExerciseFormatError
    from medeval.runtime.grading import GradingError
    from medeval.runtime.student_notebooks import write_student_notebooks

    try:
        if args.command == "student" and args.kit:
            from medeval.runtime.kit import write_student_kit

            print(write_student_kit(args.chapters or None, Path(args.kit), run_tests=not args.no_check))
            return 0
        if args.command == "student":
            for m in write_student_notebooks(args.chapters or None, Path(args.out) if args.out else None,
                                             run_tests=not args.no_check):
                print(f"{m.chapter}: student {m.student_notebook}  teacher {m.teacher_notebook.parent}")
            return 0
        options = {"chapter": args.chapter, "teacher_dir": Path(args.teacher) if args.teacher else None,
                   "cell_timeout": grading.DEFAULT_CELL_TIMEOUT_S if args.cell_timeout is None else args.cell_timeout,
                   "timeout": grading.DEFAULT_TIMEOUT_S if args.timeout is None else args.timeout}
        if args.teacher_scores and not args.csv:
            raise GradingError("--teacher-scores is merged into the CSV: add --csv")
        teacher_scores = grading.read_teacher_scores(Path(args.teacher_scores)) if args.teacher_scores else None
        target = Path(args.notebook)
        reports = (grading.grade_folder(target, **options) if target.is_dir()
                   else [grading.grade_notebook(target, **options)])
        if args.csv:
            print(grading.reports_csv(reports, teacher_scores), end="")
        elif args.json:
            data = [r.to_dict() for r in reports]
            print(json.dumps(data if target.is_dir() else data[0], indent=1))
        else:
            print("\n\n".join(r.to_text() for r in reports))
        return 0
    except (GradingError, ExerciseFormatError, ValueError) as exc:
        print(f"medeval: error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        print(f"medeval: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
