"""medeval.data.seeding.as_generator: the one seed coercion, its accepted inputs and its refusals."""

import numpy as np
import pytest

from medeval.data.seeding import as_generator


def test_generators_pass_through_and_seeds_are_reproducible():
    g = np.random.default_rng(3)
    assert as_generator(g) is g
    assert as_generator(5).integers(1 << 30) == np.random.default_rng(5).integers(1 << 30)
    assert as_generator(np.int64(5)).integers(1 << 30) == np.random.default_rng(5).integers(1 << 30)
    assert as_generator([1, 2]).integers(1 << 30) == np.random.default_rng([1, 2]).integers(1 << 30)
    ss = np.random.SeedSequence(9)
    assert as_generator(ss).integers(1 << 30) == np.random.default_rng(np.random.SeedSequence(9)).integers(1 << 30)
    assert isinstance(as_generator(None), np.random.Generator)


@pytest.mark.parametrize("bad", [True, 1.5, -1, "3", [], [1, -1], [0.5]])
def test_refusals_name_the_parameter(bad):
    with pytest.raises(ValueError, match="^rng must be"):
        as_generator(bad, name="rng")


def test_required_refuses_none():
    with pytest.raises(ValueError, match="seed must be .* got None"):
        as_generator(None, required=True)


def test_every_module_that_draws_uses_the_one_coercion():
    """No function coerces a seed itself (isinstance checks beside default_rng)."""
    import re
    from pathlib import Path

    import medeval

    pattern = re.compile(r"isinstance\(\w+, np\.random\.Generator\)")
    root = Path(medeval.__file__).parent
    found = [str(p.relative_to(root)) for p in root.rglob("*.py") if p.name != "seeding.py" and pattern.search(p.read_text())]
    assert not found, found
