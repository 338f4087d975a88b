import pytest

from medeval.runtime.execution import build_book


@pytest.fixture(scope="session")
def smoke_book(tmp_path_factory):
    """The whole book built from the smoke-profile notebooks into a temporary folder."""
    out = tmp_path_factory.mktemp("book")
    logs: list[str] = []
    html = build_book("smoke", out_dir=out, log=logs.append)
    return html, out, logs
