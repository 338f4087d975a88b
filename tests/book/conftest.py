import pytest

from medeval.runtime.execution import build_book, run_chapter


@pytest.fixture(scope="session")
def smoke_book(tmp_path_factory):
    """The whole book built from the smoke-profile notebooks into a temporary folder."""
    out = tmp_path_factory.mktemp("book")
    logs: list[str] = []
    rerun = run_chapter("A2-rerun", "smoke", {"n_repeats": 5}, log=logs.append)  # shown in the Re-runs part
    html = build_book("smoke", out_dir=out, log=logs.append, reruns=[rerun.meta["run_id"]])
    return html, out, logs
