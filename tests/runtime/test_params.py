import ast
import re

import jupytext
import pytest

from medeval.runtime import notebook
from medeval.runtime.params import (
    PROFILES,
    ParameterError,
    chapters,
    describe_schema,
    parse_assignment,
    resolve_params,
)


def test_every_profile_of_every_chapter_validates():
    registry = chapters()
    assert "A2-rerun" in registry
    for cid in registry:
        for profile in PROFILES:
            resolve_params(cid, profile)


def test_cross_field_checks_pass_for_the_profiles_without_real_data():
    """Every rule across fields lives in the chapter's schema (``ChapterParams.violations``) and is checked whenever
    a parameter set is built, before a kernel starts: the smoke, default and gpu profiles break none; full needs
    the real data and is tested offline elsewhere. No notebook re-checks its parameters with a ``validate(P)``."""
    for cid, chapter in chapters().items():
        for profile in ("smoke", "default", "gpu"):
            P = resolve_params(cid, profile)
            assert P.violations() == [], (cid, profile, P.violations())
        assert not re.search(r"\bvalidate(_histology)?\(P\)", chapter.notebook.read_text()), chapter.notebook
    P = resolve_params("04a-class-distribution", "smoke")
    with pytest.raises(ParameterError, match="evaluation_tile=3, tile_sizes=.*must be one of tile_sizes"):
        resolve_params("04a-class-distribution", "smoke", {"evaluation_tile": 3})
    assert P.evaluation_tile in P.tile_sizes


def test_out_of_range_value_names_parameter_and_range():
    with pytest.raises(ParameterError) as err:
        resolve_params("A2-rerun", "default", {"n_repeats": 1})
    msg = str(err.value)
    assert "'n_repeats' = 1" in msg and ">= 2" in msg and "<= 10000" in msg


def test_nested_item_range_is_checked():
    with pytest.raises(ParameterError, match="test_sizes"):
        resolve_params("A2-rerun", "default", {"test_sizes": [5]})


def test_repeated_list_entries_are_refused_naming_them():
    """A repeated test-set size would be run twice and counted twice in its summary row (A2 once ran
    ``test_sizes=[20, 20, 20]``)."""
    with pytest.raises(ParameterError, match=r"'test_sizes' = \[20, 20, 20\]: entries must be distinct; repeated: \[20\]"):
        resolve_params("A2-rerun", "smoke", {"test_sizes": [20, 20, 20]})
    assert resolve_params("A2-rerun", "smoke", {"test_sizes": [20, 40]}).test_sizes == [20, 40]


def test_unknown_parameter_lists_valid_ones():
    with pytest.raises(ParameterError, match=r"unknown parameter 'bogus'; valid parameters: seed, device"):
        resolve_params("A2-rerun", "default", {"bogus": 3})


def test_unknown_chapter_and_profile():
    with pytest.raises(ParameterError, match="unknown chapter 'nope'; valid chapters: .*A2-rerun"):
        resolve_params("nope")
    with pytest.raises(ParameterError, match="unknown profile 'huge'; valid profiles: smoke, default, gpu, full"):
        resolve_params("A2-rerun", "huge")


def test_precedence_default_profile_override():
    assert resolve_params("A2-rerun", "default").n_repeats == 20
    assert resolve_params("A2-rerun", "smoke").n_repeats == 8
    assert resolve_params("A2-rerun", "smoke", {"n_repeats": 7}).n_repeats == 7


def test_parse_assignment_reads_yaml_values():
    assert parse_assignment("n=3") == ("n", 3)
    assert parse_assignment("sizes=[10, 20]") == ("sizes", [10, 20])
    assert parse_assignment("s=null") == ("s", None)
    with pytest.raises(ParameterError, match="key=value"):
        parse_assignment("novalue")


def test_describe_schema_shows_ranges_defaults_and_help():
    text = describe_schema("A2-rerun")
    assert "n_repeats  (integer, >= 2, <= 10000)" in text
    assert "smoke: 8" in text and "random hold-out splits" in text


def test_an_alias_bomb_in_set_is_refused_by_name_before_it_is_built(monkeypatch):
    """Nine levels of nine aliases: 9^9 leaves once expanded. It is refused from the composed graph, without
    building or walking the expansion (the refusal took 88 s and 6.7 GB when validation expanded it)."""
    import subprocess
    import sys

    levels = ["&a0 [x, x, x, x, x, x, x, x, x]"] + [
        f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    bomb = "[" + ", ".join(levels) + "]"
    from medeval import _yaml

    def never(*args, **kwargs):
        raise AssertionError("the document was constructed before it was refused")

    with monkeypatch.context() as patch:  # refused from the composed graph: nothing is built, however fast
        patch.setattr(_yaml.SafeLoader, "construct_document", never)
        with pytest.raises(ParameterError, match="test_sizes: the YAML expands to more than 100,000 nodes"):
            parse_assignment(f"test_sizes={bomb}")
    with pytest.raises(ParameterError, match="x: a YAML alias refers to the node that contains it"):
        parse_assignment("x=&a [1, *a]")
    assert parse_assignment("x=[&a 3, *a, *a]") == ("x", [3, 3, 3])  # a small alias is a value like any other
    # the command refuses it before any kernel starts, with the message and no traceback
    cmd = [sys.executable, "-m", "medeval.cli", "run", "03-eve", "--profile", "smoke", "--set", f"test_sizes={bomb}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "expands to more than 100,000 nodes" in done.stderr
    assert "Traceback" not in done.stderr


def test_notebook_setup_applies_papermill_style_injection():
    ns = {"profile": "smoke", "n_repeats": 9, "test_sizes": None}
    params = notebook.setup("A2-rerun", ns)
    assert params.n_repeats == 9 and params.test_sizes == [20, 80]
    with pytest.raises(ParameterError, match="n_repeats"):
        notebook.setup("A2-rerun", {"profile": "smoke", "n_repeats": 0})
    with pytest.raises(ParameterError, match=r"unknown parameter\(s\) \['epochs'\]"):
        notebook.setup("A2-rerun", {"profile": "smoke", "epochs": 3})


def _parameters_cell_names(path):
    nb = jupytext.read(path)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{path}: expected exactly one cell tagged 'parameters'"
    assert "remove-cell" in cells[0].metadata["tags"], f"{path}: the defaults cell must be hidden (remove-cell)"
    names = {}
    for node in ast.parse(cells[0].source).body:
        assert isinstance(node, ast.Assign), f"{path}: the parameters cell holds only assignments"
        names[node.targets[0].id] = ast.literal_eval(node.value)
    return names


@pytest.mark.parametrize("chapter_id", sorted(chapters()))
def test_parameters_cell_lists_exactly_the_schema_fields(chapter_id):
    chapter = chapters()[chapter_id]
    names = _parameters_cell_names(chapter.notebook)
    assert names.pop("profile") == "default"
    assert set(names) == set(chapter.schema.model_fields), chapter_id
    assert all(v is None for v in names.values()), "defaults live in the schema only: the cell holds None"


def test_chapter_ids_are_file_names():
    for cid, ch in chapters().items():
        assert re.fullmatch(r"(\d\d[a-z]?|A\d)-[a-z0-9-]+", cid), cid
        assert ch.notebook.name == f"{cid}.py"


def test_seeding_makes_torch_deterministic_without_importing_its_compiler():
    """``notebook.setup`` seeds every generator and switches torch to deterministic kernels (warn-only), in a fresh
    interpreter as a kernel would; it does so without importing torch's compiler (1.2 s in every kernel)."""
    import subprocess
    import sys

    code = ("import sys, torch\nfrom medeval.runtime.notebook import seed_everything\nseed_everything(7)\n"
            "a = torch.rand(3)\nseed_everything(7)\nassert torch.equal(a, torch.rand(3))\n"
            "assert torch.are_deterministic_algorithms_enabled()\n"
            "assert torch.is_deterministic_algorithms_warn_only_enabled()\n"
            "assert not torch.backends.cudnn.benchmark\n"
            "print('torch._inductor' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


def test_torch_loaded_after_seeding_is_seeded_and_deterministic_there_and_in_forked_workers():
    """A chapter that never uses torch does not load it; one that imports it after ``setup`` (in the kernel or in a
    grid worker forked from it) finds it seeded and deterministic before any of its code runs."""
    import subprocess
    import sys

    code = ("import sys, multiprocessing as mp\nfrom medeval.runtime.notebook import seed_everything\n"
            "seed_everything(7)\nassert 'torch' not in sys.modules\n"
            "def draw(_):\n    import torch\n"
            "    return torch.rand(3).tolist(), torch.are_deterministic_algorithms_enabled()\n"
            "with mp.get_context('fork').Pool(1) as pool:\n    in_worker, worker_det = pool.map(draw, [0])[0]\n"
            "assert 'torch' not in sys.modules\n"
            "import torch\nfirst = torch.rand(3).tolist()\n"
            "assert torch.are_deterministic_algorithms_enabled() and worker_det\n"
            "torch.manual_seed(7)\nassert first == in_worker == torch.rand(3).tolist(), (first, in_worker)\n"
            "seed_everything(8)\nafter = torch.rand(3).tolist()\n"  # torch already loaded: seeded at once
            "torch.manual_seed(8)\nassert after == torch.rand(3).tolist()\n"
            "from medeval.runtime.seeding import _SeedTorchOnImport\n"
            "print(sum(isinstance(f, _SeedTorchOnImport) for f in sys.meta_path))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "0"  # the hook is gone once torch is loaded, and not installed again


def test_peak_memory_counts_the_process_and_its_childrens_own_pages():
    """The sampler's figure is this process's RSS plus its children's private pages: a child holding 200 MiB of
    its own raises it by about that much, and the rollup agrees with psutil's reading of every mapping."""
    import subprocess
    import sys

    import psutil

    from medeval.runtime.notebook import PeakMemory

    me = psutil.Process()
    assert abs(PeakMemory._footprint(me, root=True) - me.memory_info().rss) < 8 * 2**20
    with open(f"/proc/{me.pid}/smaps_rollup") as f:  # the root's cheap reading (statm) is the page-table walk's Rss
        rollup = next(int(line.split()[1]) * 1024 for line in f if line.startswith("Rss:"))
    assert abs(PeakMemory._footprint(me, root=True) - rollup) < 0.01 * rollup
    before = PeakMemory().sample()
    child = subprocess.Popen([sys.executable, "-c", "import sys, time\nb = bytearray(200 * 2**20)\n"
                              "print('ready', flush=True)\ntime.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        grown = PeakMemory().sample() - before
    finally:
        child.kill()
        child.wait()
    assert 190 * 2**20 < grown < 260 * 2**20, grown / 2**20


def test_peak_memory_does_not_shrink_when_unrelated_processes_map_the_same_libraries(tmp_path):
    """Processes that are not descendants but load the same libraries (other kernels of a busy test suite) leave
    the figure as it is; a proportional set size would shrink by the shares they take of the shared pages."""
    import subprocess
    import sys
    import time

    import torch  # noqa: F401  (what the unrelated processes map too: beside three of them, PSS fell 218 -> 162 MB)

    from medeval.runtime.notebook import PeakMemory

    alone = PeakMemory().sample()
    ready = tmp_path / "ready"
    code = ("import torch, numpy, os, sys, time\n"
            "open(sys.argv[1] + str(os.getpid()), \"w\").close()\ntime.sleep(20)")
    # started through a shell that exits at once: the interpreters are orphans, not this process's descendants
    shell = " ".join(f"'{sys.executable}' -c '{code}' '{ready}.' >/dev/null 2>&1 &" for _ in range(3))
    subprocess.run(["sh", "-c", shell], check=True)
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("ready.*"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)  # until the three have imported their libraries
        assert len(list(tmp_path.glob("ready.*"))) == 3, "the three interpreters did not start"
        beside = PeakMemory().sample()
    finally:
        subprocess.run(["pkill", "-f", "time.sleep(20)"], check=False)
    assert beside >= 0.99 * alone, (alone / 2**20, beside / 2**20)


def test_yaml_files_read_alike_with_the_c_parser_and_pyyaml():
    """The parameter files, the manifest, the book's table of contents and ``--set`` values read the same through
    libyaml's parser (what medeval uses where PyYAML has it) as through PyYAML's own."""
    import yaml

    from medeval import _yaml
    from medeval.runtime.paths import project_root

    root = project_root()
    assert _yaml.SafeLoader is getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    files = [*sorted((root / "params").glob("*.yaml")), root / "data_manifest.yaml", root / "book" / "_toc.yml"]
    for path in files:
        assert _yaml.safe_load(path.read_text()) == yaml.safe_load(path.read_text()), path
    for value in ("3", "0.5", "1e-3", "true", "null", "[a, 1]", "{k: v}", "'0.10'", "2026-11-26", "~", "0o17"):
        assert _yaml.safe_load(value) == yaml.safe_load(value), value


def test_every_numeric_list_element_has_its_bounds():
    """A list parameter's elements are bounded like a scalar parameter (04a's tile_sizes=[-1, 0, 4] reached the
    kernel and died in cell 19 after 50 s): every list of numbers in every chapter's schema bounds each element
    below and above, and a bad element is refused by resolve_params, naming the field and the element."""
    import typing

    import annotated_types

    from medeval.runtime.params import chapters, get_chapter, resolve_params

    def element_type(annotation):
        for arg in typing.get_args(annotation) or ():
            if typing.get_origin(arg) is list:
                return typing.get_args(arg)[0]
            inner = element_type(arg)
            if inner is not None:
                return inner
        return None

    checked = []
    for cid in chapters():
        for name, info in get_chapter(cid).schema.model_fields.items():
            annotation = info.annotation
            element = (typing.get_args(annotation)[0] if typing.get_origin(annotation) is list
                       else element_type(annotation))
            if element is None:
                continue
            base = typing.get_args(element)[0] if typing.get_origin(element) is typing.Annotated else element
            if base not in (int, float):
                continue
            metadata = [m for a in typing.get_args(element)[1:] for m in getattr(a, "metadata", [a])]
            lower = any(isinstance(m, (annotated_types.Ge, annotated_types.Gt)) for m in metadata)
            upper = any(isinstance(m, (annotated_types.Le, annotated_types.Lt)) for m in metadata)
            assert lower and upper, f"{cid}.{name}: list elements without bounds ({element})"
            checked.append(f"{cid}.{name}")
    assert "04a-class-distribution.tile_sizes" in checked and len(checked) >= 19
    with pytest.raises(ParameterError, match="tile_sizes"):
        resolve_params("04a-class-distribution", "smoke", {"tile_sizes": [-1, 0, 4]})


@pytest.mark.parametrize("address", ["not-an-address", "tcp://host", "http://host:8786", "tcp://host:70000",
                                     "tcp://host:8786/extra"])
def test_a_malformed_scheduler_address_is_refused_by_the_schema(address):
    from medeval.runtime.params import resolve_params

    with pytest.raises(ParameterError, match="scheduler.*expected a Dask scheduler address tcp://host:port"):
        resolve_params("A2-rerun", "smoke", {"scheduler": address})


def test_unreachable_and_workerless_schedulers_are_refused_in_seconds(tmp_path):
    """scheduler=tcp://127.0.0.1:1 died mid-run after a 30-s connect timeout (48 s in all), and a scheduler
    without workers hung for ever: both are refused by the pre-flight, before any compute."""
    import os
    import subprocess
    import sys

    from distributed import LocalCluster

    from medeval.runtime.preflight import scheduler_problems

    done = subprocess.run([sys.executable, "-m", "medeval.cli", "run", "A2-rerun", "--profile", "smoke", "--set",
                           "scheduler=tcp://127.0.0.1:1"], env={**os.environ, "MEDEVAL_RUNS": str(tmp_path)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "nothing answers there" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "smoke").exists()  # refused by the pre-flight: no run was started
    with LocalCluster(n_workers=0, processes=False, protocol="tcp://", dashboard_address=None) as empty:
        problems = scheduler_problems(empty.scheduler_address)  # returns (a grid would have waited for ever)
        assert len(problems) == 1 and "has no workers" in problems[0]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://", dashboard_address=None) as cluster:
        assert scheduler_problems(cluster.scheduler_address) == []


def test_every_unknown_profile_is_named_at_once_by_one_check():
    from medeval.runtime.params import check_profile

    check_profile("smoke", None, "gpu")  # known profiles, and None for "not given", pass
    with pytest.raises(ParameterError, match=r"unknown profiles 'huge', 'tiny'; valid profiles: smoke, default"):
        check_profile("smoke", "huge", "tiny")
