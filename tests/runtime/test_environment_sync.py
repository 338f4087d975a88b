"""environment.yml (for conda users) pins exactly what pyproject.toml pins."""

import tomllib

import yaml

from medeval.runtime.paths import project_root


def test_environment_yml_matches_pyproject():
    root = project_root()
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    wanted = set(project["dependencies"]) | set(project["optional-dependencies"]["dev"])
    env = yaml.safe_load((root / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    listed = {p for p in pip_section if not p.startswith("-e")}
    assert listed == wanted, f"only in environment.yml: {listed - wanted}; only in pyproject: {wanted - listed}"
    assert all("==" in d for d in wanted), "every dependency is pinned"
    py = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert py == "python=3.11"
