"""The training-set builder reproduces the thesis's counts exactly (Tables 4.2, 4.3, 4.5-4.8, 5.3)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from medeval.data import training_sets as T

MLNTO_COUNTS = {"O": 90_374, "C": 15_328, "notC": 17_274, "mixed": 4_922}  # Table 4.2


@pytest.fixture(scope="module")
def mlnto_categories():
    cats = np.concatenate([np.full(n, k) for k, n in MLNTO_COUNTS.items()])
    return np.random.default_rng(0).permutation(cats)


def test_table_4_2_counts_and_unit(mlnto_categories):
    counts = T.category_counts(mlnto_categories)
    assert counts == MLNTO_COUNTS and sum(counts.values()) == 127_898
    assert T.unit_size(counts, round_down_to=1000) == 5_000
    assert T.unit_size({"C": 131_072, "notC": 131_072}) == 43_690  # PCam (8:1:1 split, half positive)
    assert T.unit_size({"C": 5_000, "notC": 45_000}) == 1_666  # CIFAR-10 automobile


@pytest.mark.parametrize(
    "name, size",
    [("Balanced_S", 4_922), ("C-biased", 20_250), ("notC-biased", 22_196), ("Balanced_L", 37_524), ("Natural", 127_898)],
)
def test_table_4_3_preliminary_sets(mlnto_categories, name, size):
    ts = T.build_training_set(mlnto_categories, T.PRELIMINARY_DISTRIBUTIONS[name], seed=1)
    assert ts.size == size and not ts.shortfalls
    assert np.unique(ts.indices).size == size


EXPECTED = {  # Tables 4.5-4.8 with U = 5,000
    "E1.a": {"O": 15_000, "C": 15_000, "notC": 15_000},
    "E1.b": {"O": 35_000, "C": 5_000, "notC": 5_000},
    "E2.a": {"C": 10_000, "notC": 10_000},
    "E2.b": {"C": 5_000, "notC": 15_000},
    "E2.c": {"C": 15_000, "notC": 5_000},
    "E3.a": {"C": 7_500, "notC": 7_500, "mixed": 5_000},
    "E3.b": {"notC": 15_000, "mixed": 5_000},
    "E3.c": {"C": 15_000, "mixed": 5_000},
    "E4.a": {"O": 5_000, "C": 5_000, "notC": 5_000, "mixed": 5_000},
    "E4.b": {"O": 5_000, "notC": 10_000, "mixed": 5_000},
    "E4.c": {"O": 5_000, "C": 10_000, "mixed": 5_000},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hypothesis_sets_exact_counts(mlnto_categories, name):
    dist = T.HYPOTHESIS_DISTRIBUTIONS[name]
    assert T.distribution_counts(dist, 5_000) == EXPECTED[name]
    assert sum(EXPECTED[name].values()) == (9 if name.startswith("E1") else 4) * 5_000
    ts = T.build_training_set(mlnto_categories, dist, 5_000, seed=2, shortfall="oversample")
    cats = mlnto_categories[ts.indices]
    got = {k: int((cats == k).sum()) for k in EXPECTED[name]}
    assert got == EXPECTED[name]
    assert ts.size == sum(EXPECTED[name].values())


def test_mixed_shortfall_policies_are_explicit_and_logged(mlnto_categories, caplog):
    dist = T.HYPOTHESIS_DISTRIBUTIONS["E3.b"]
    with caplog.at_level(logging.WARNING, logger="medeval.data.training_sets"):
        ts = T.build_training_set(mlnto_categories, dist, 5_000, seed=3)
    assert ts.taken == {"notC": 15_000, "mixed": 4_922} and ts.size == 19_922
    assert ts.shortfalls and "78" in ts.shortfalls[0]
    assert any("mixed" in r.message for r in caplog.records)
    over = T.build_training_set(mlnto_categories, dist, 5_000, seed=3, shortfall="oversample")
    assert over.size == 20_000 and np.unique(over.indices).size == 15_000 + 4_922
    with pytest.raises(ValueError, match="mixed"):
        T.build_training_set(mlnto_categories, dist, 5_000, shortfall="raise")


def test_pcam_e2_and_en_ep():
    cats = np.repeat(["C", "notC"], 131_072)
    u = T.unit_size(T.category_counts(cats))
    assert T.distribution_counts(T.BINARY_DISTRIBUTIONS["E2.b"], u) == {"C": 43_690, "notC": 131_070}
    assert T.distribution_counts(T.BINARY_DISTRIBUTIONS["E2.c"], u) == {"C": 131_070, "notC": 43_690}
    assert T.distribution_counts(T.BINARY_DISTRIBUTIONS["E2.a"], u) == {"C": 87_380, "notC": 87_380}
    assert T.distribution_counts(T.BINARY_DISTRIBUTIONS["En"], 1_666) == {"C": 1_666, "notC": 4_998}


def test_fractional_units_are_exact_and_reproducible():
    counts = T.distribution_counts(T.HYPOTHESIS_DISTRIBUTIONS["E3.a"], 7)  # 1.5 * 7 = 10.5
    assert sum(counts.values()) == 28 and counts["mixed"] == 7 and {counts["C"], counts["notC"]} == {10, 11}
    cats = np.repeat(list(T.CATEGORIES), 50)
    a = T.build_training_set(cats, T.HYPOTHESIS_DISTRIBUTIONS["E4.a"], 10, seed=5)
    b = T.build_training_set(cats, T.HYPOTHESIS_DISTRIBUTIONS["E4.a"], 10, seed=5)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert not np.array_equal(np.sort(a.indices), np.sort(T.build_training_set(
        cats, T.HYPOTHESIS_DISTRIBUTIONS["E4.a"], 10, seed=6).indices))


def test_bad_inputs():
    with pytest.raises(ValueError, match="categories"):
        T.category_counts(["O", "tumour"])
    with pytest.raises(ValueError, match="unit"):
        T.unit_size({"C": 2, "notC": 10})
    with pytest.raises(ValueError, match="shortfall"):
        T.build_training_set(["C"], T.BINARY_DISTRIBUTIONS["En"], 1, shortfall="ignore")
    tr, va = T.train_validation_split(100, seed=0)
    assert tr.size == 80 and va.size == 20 and not set(tr) & set(va)
