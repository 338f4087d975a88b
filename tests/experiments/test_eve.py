"""Chapter 3 machinery: subset pairs, LIBSVM folds, strategies, metrics, known-truth unbiasedness."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from medeval.data.phantoms.adni import ADNI_N_AD, ADNI_N_HC, adni_phantom_model, generate_adni_pool
from medeval.data.splits import (
    draw_balanced_subsets,
    draw_disjoint_subset_pairs,
    draw_parent,
    libsvm_fold_ids,
    libsvm_stratified_kfold,
    max_disjoint_subset_size,
    parse_strategy,
    strategy_fold_ids,
)
from medeval.experiments import eve
from medeval.experiments.eve import run_validation
from medeval.metrics.decision_values import decision_value_scores

Y = np.r_[np.zeros(370, int), np.ones(252, int)]


def test_pairs_are_disjoint_with_right_class_counts():
    pairs = draw_disjoint_subset_pairs(Y, 60, 200, rng=0)
    assert pairs.shape == (200, 2, 120)
    for a, b in pairs:
        assert not set(a) & set(b)
        assert len(set(a)) == len(set(b)) == 120
        assert Y[a].sum() == Y[b].sum() == 60
    # within a parent, pairs stay inside the parent
    parent = draw_parent(Y, 60, rng=1)
    assert Y[parent].sum() == 60 and parent.size == 120
    pairs = draw_disjoint_subset_pairs(Y, 30, 50, rng=2, pool=parent)
    assert set(pairs.ravel()) <= set(parent)


def test_pairs_are_uniform_over_subjects():
    counts = np.bincount(draw_disjoint_subset_pairs(Y, 10, 4000, rng=3).ravel(), minlength=Y.size)
    # each AD subject is used 4000*20/252 ~ 317 times on average; no positional bias
    ad = counts[Y == 1]
    assert abs(ad[:126].mean() - ad[126:].mean()) < 10


def test_too_large_subsets_raise_or_give_nan():
    assert max_disjoint_subset_size(Y) == 126
    with pytest.raises(ValueError, match="too large for disjoint subset pairs"):
        draw_disjoint_subset_pairs(Y, 127, 5, rng=0)
    with pytest.raises(ValueError, match="exceeds"):
        draw_balanced_subsets(Y, 253, 5, rng=0)
    config = {"dataset": "wdbc", "classifier": "nearest_centroid", "engine": "batched", "C": 1e4, "tol": 1e-3,
              "device": "cpu", "metric": "accuracy"}
    row = eve.characterization_unit(config, subset_size=107, n_pairs=3, n_splits=10, seed=0).iloc[0]
    assert np.isnan(row["eve"]) and "do not fit" in row["note"]
    ds = eve.drawstring_unit(config, parent_size=40, subset_size=25, n_parents=2, n_pairs=3, n_splits=10, seed=0)
    assert ds["eve"].isna().all() and ds["eve_note"].str.contains("no disjoint pair").all()
    assert (ds["neve"] >= 0).all()


def test_unbalanced_subsets_are_refused():
    X = np.random.default_rng(0).normal(size=(Y.size, 3))
    unbalanced = np.r_[np.arange(10), np.arange(370, 375)][None]
    with pytest.raises(ValueError, match="not balanced"):
        run_validation(X, Y, unbalanced, "3x1", rng=0, classifier="nearest_centroid")


@pytest.mark.parametrize("n_c, k", [(25, 10), (10, 10), (7, 3), (4, 4), (6, 10), (125, 10)])
def test_libsvm_fold_composition(n_c, k):
    y = np.r_[np.zeros(n_c, int), np.ones(n_c + 1, int)]
    expected = {c: [(i + 1) * n // k - i * n // k for i in range(k)] for c, n in ((0, n_c), (1, n_c + 1))}
    folds = libsvm_fold_ids(np.tile(y, (20, 1)), k, rng=0)
    for row in folds:
        for c in (0, 1):
            assert np.bincount(row[y == c], minlength=k).tolist() == expected[c]
    # the data-layer splitter (LIBSVM's exact rule) has the same composition
    for train, test in libsvm_stratified_kfold(y, k, seed=0):
        assert len(set(train) & set(test)) == 0
    their = [np.bincount(y[test], minlength=2).tolist() for _, test in libsvm_stratified_kfold(y, k, seed=0)]
    ours = [[expected[0][i], expected[1][i]] for i in range(k)]
    assert their == ours


def test_twenty_five_per_class_gives_folds_of_four_or_six():
    y = np.r_[np.zeros(25, int), np.ones(25, int)]
    sizes = np.bincount(libsvm_fold_ids(y, 10, rng=1), minlength=10)
    assert sizes.tolist() == [4, 6] * 5


def test_strategies_and_loo_is_deterministic():
    pool = generate_adni_pool(seed=0)
    X, y = pool.model.standardize(pool.features), pool.labels
    subsets = draw_disjoint_subset_pairs(y, 8, 3, rng=0).reshape(6, -1)
    a = run_validation(X, y, subsets, "LOO", rng=1)
    b = run_validation(X, y, subsets, "LOO", rng=99)
    np.testing.assert_array_equal(a.scores["accuracy"], b.scores["accuracy"])
    assert a.fold_scores["accuracy"].shape == (6, 16)
    folds, n_eval = strategy_fold_ids(y[subsets], "3x10", rng=0)
    assert folds.shape == (6, 10, 16) and n_eval == 3
    assert not np.all(folds[:, 0] == folds[:, 1])  # repeats re-partition
    folds, n_eval = strategy_fold_ids(y[subsets], "holdout0.25x2", rng=0)
    assert n_eval == 1 and ((folds == 0).sum(-1) == 4).all()
    assert parse_strategy("10x10").name == "10x10" and parse_strategy("loo").name == "LOO"
    with pytest.raises(ValueError, match="strategy must look like"):
        parse_strategy("ten-fold")


def test_batched_engine_matches_sklearn_loop():
    X, y, _ = eve.load_pool("wdbc")
    subsets = draw_disjoint_subset_pairs(y, 10, 4, rng=0).reshape(8, -1)
    kw = {"metrics": ("accuracy", "auc")}
    a = run_validation(X, y, subsets, "5x1", rng=3, engine="batched", **kw)
    b = run_validation(X, y, subsets, "5x1", rng=3, engine="sklearn", **kw)
    assert np.mean(a.scores["accuracy"] == b.scores["accuracy"]) >= 0.75
    assert np.max(np.abs(a.scores["auc"] - b.scores["auc"])) < 0.05


def test_decision_value_scores_against_sklearn():
    rng = np.random.default_rng(0)
    f = rng.normal(size=(5, 30)).round(1)  # ties included
    y = rng.integers(0, 2, size=(5, 30))
    mask = rng.random((5, 30)) < 0.8
    auc = decision_value_scores(f, y, mask, "auc")
    acc = decision_value_scores(f, y, mask, "accuracy")
    sens = decision_value_scores(f, y, mask, "sensitivity")
    spec = decision_value_scores(f, y, mask, "specificity")
    for r in range(5):
        m = mask[r]
        assert auc[r] == pytest.approx(roc_auc_score(y[r, m], f[r, m]))
        assert acc[r] == pytest.approx(np.mean((f[r, m] > 0) == y[r, m]))
        assert sens[r] == pytest.approx(np.mean(f[r, m][y[r, m] == 1] > 0))
        assert spec[r] == pytest.approx(np.mean(f[r, m][y[r, m] == 0] <= 0))
    assert np.isnan(decision_value_scores(f[:1], np.ones((1, 30)), mask[:1], "auc")[0])


def test_adni_phantom():
    pool = generate_adni_pool(seed=0)
    assert pool.features.shape == (ADNI_N_HC + ADNI_N_AD, 80)
    assert (pool.labels == 1).sum() == 252 and (pool.features > 0).all()
    model = adni_phantom_model(seed=0)
    corr = np.corrcoef(model.standardize(model.sample(4000, 0, 1)[0]).T)
    off = corr[~np.eye(80, dtype=bool)]
    assert 0.25 < off.mean() < 0.6  # strongly correlated regions
    X, y = model.sample(3000, 3000, 2)
    assert (X[y == 1][:, model.medial_temporal].mean(0) < X[y == 0][:, model.medial_temporal].mean(0)).all()
    a, _ = generate_adni_pool(seed=0).features, None
    np.testing.assert_array_equal(a, pool.features)


@pytest.mark.slow
def test_known_truth_unbiasedness_within_three_se():
    config = {"dataset": "adni_phantom", "classifier": "svm", "engine": "active_set", "C": 1e4, "tol": 1e-3,
              "device": "cpu", "metric": "accuracy", "data_seed": 0, "effect_size": 1.5, "n_features": 80}
    row = eve.known_truth_unit(config, subset_size=10, n_pools=10, pairs_per_pool=20, n_draws=400, n_splits=10, seed=0).iloc[0]
    assert abs(row["z"]) <= 3, row.to_dict()
    assert abs(row["z_half"]) <= 3, row.to_dict()
    assert row["eve"] > 0 and row["true_variance"] > 0


def test_params_validation():
    with pytest.raises(ValueError, match="LOO"):
        eve.Params(strategies=["10x1", "3x1"])
    with pytest.raises(ValueError):
        eve.Params(drawstring_n_pairs=1)
    with pytest.raises(ValueError, match="at least one subset"):
        eve.Params(drawstring_parent_sizes=[10, 50])
    with pytest.raises(ValueError, match="dataset must be"):
        eve.load_pool("mnist")


def test_full_profile_without_adni_data_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    from medeval.data.manifest import DatasetUnavailableError

    with pytest.raises(DatasetUnavailableError, match="adni"):
        eve.load_pool("adni")
    with pytest.raises(DatasetUnavailableError, match="adni"):
        eve.load_pool("adni", adni_csv=str(tmp_path / "missing.csv"))


def test_adni_csv_reader_path(tmp_path):
    model = adni_phantom_model(n_features=12, seed=1)
    X, y = model.sample(30, 30, 0)
    import pandas as pd

    frame = pd.DataFrame(X, columns=[f"r{i}" for i in range(12)])
    frame.insert(0, "diagnosis", np.where(y == 1, "AD", "HC"))
    frame.insert(0, "subject_id", [f"s{i}" for i in range(60)])
    path = tmp_path / "adni_regional_volumes.csv"
    frame.to_csv(path, index=False)
    Xs, ys, _ = eve.load_pool("adni", adni_csv=str(path))
    assert Xs.shape == (60, 12) and ys.sum() == 30
    np.testing.assert_allclose(Xs.mean(0), 0, atol=1e-12)


def test_active_set_engine_is_the_exact_svm():
    """The active-set engine solves the C-SVC exactly: it agrees with LIBSVM run to a tight tolerance on every
    held-out prediction, and problems with more training points than features go to LIBSVM."""
    from medeval.models.linear_svm import active_set_linear_svm, fit_decision_values

    X, y, _ = eve.load_pool("adni_phantom")
    rng = np.random.default_rng(4)
    subsets = draw_balanced_subsets(y, 20, 6, rng)
    folds = libsvm_fold_ids(y[subsets], 10, rng)
    m = subsets.shape[1]
    train = (folds[:, None, :] != np.arange(10)[None, :, None]).reshape(-1, m)
    sidx = np.repeat(np.arange(6), 10)
    ours, unconverged = fit_decision_values(X[subsets], y[subsets], train, sidx, engine="active_set")
    ref, _ = fit_decision_values(X[subsets], y[subsets], train, sidx, engine="sklearn", tol=1e-8)
    held = ~train
    assert unconverged == 0
    assert np.all((ours > 0) == (ref > 0))
    np.testing.assert_allclose(ours[held], ref[held], rtol=1e-3, atol=1e-3)
    dec, ok = active_set_linear_svm(X[subsets], y[subsets], train, sidx)
    assert ok.all() and np.array_equal(dec, ours)
    # 30 features < 36 training points: every problem goes to the LIBSVM loop (same answer as engine="sklearn")
    Xw, yw, _ = eve.load_pool("wdbc")
    sub = draw_balanced_subsets(yw, 20, 2, rng)
    tr = (libsvm_fold_ids(yw[sub], 10, rng)[:, None, :] != np.arange(10)[None, :, None]).reshape(-1, 40)
    a, _ = fit_decision_values(Xw[sub], yw[sub], tr, np.repeat(np.arange(2), 10), engine="active_set")
    b, _ = fit_decision_values(Xw[sub], yw[sub], tr, np.repeat(np.arange(2), 10), engine="sklearn")
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="engine must be one of"):
        fit_decision_values(X[subsets], y[subsets], train, sidx, engine="smo")


def test_repeat_scores_hold_the_unrepeated_strategy():
    X, y, _ = eve.load_pool("adni_phantom")
    subsets = draw_disjoint_subset_pairs(y, 10, 3, rng=0).reshape(6, -1)
    res = run_validation(X, y, subsets, "3x4", rng=1, engine="active_set", metrics=("accuracy", "auc"))
    assert res.repeat_scores["accuracy"].shape == (6, 4)
    np.testing.assert_allclose(res.repeat_scores["auc"].mean(axis=1), res.scores["auc"])
    # each repeat is a 3-fold run of its own partition (accuracies on 20 subjects: multiples of 1/20)
    acc = res.repeat_scores["accuracy"]
    np.testing.assert_allclose(acc * 20, np.round(acc * 20), atol=1e-12)
    assert not np.all(acc == acc[:, :1])


def test_strategy_unit_reads_kx1_off_kx10():
    config = {"dataset": "adni_phantom", "classifier": "svm", "engine": "active_set", "C": 1e4, "tol": 1e-3,
              "device": "cpu", "metric": "accuracy"}
    frame = eve.strategy_unit(config, 10, 4, ["10x1", "10x10", "3x1", "3x10", "LOO"], seed=0)
    assert list(frame["strategy"]) == ["10x1", "10x10", "3x1", "3x10", "LOO"]
    scores = dict(zip(frame["strategy"], frame["pair_scores"], strict=True))
    assert all(s.shape == (4, 2) for s in scores.values())
    loo = frame[frame["strategy"] == "LOO"].iloc[0]
    assert loo["bias"] == 0 and loo["mse_ratio"] == pytest.approx(1)
    merged = eve.merge_strategy_parts([frame, eve.strategy_unit(config, 10, 3, list(frame["strategy"]), seed=0, part=1)])
    assert len(merged) == 5 and (merged["n_pairs"] == 7).all()


def test_drawstring_slope_is_an_ols_line_over_parents():
    frame = pd.DataFrame({"parent_size": np.repeat([25, 50, 100], 4),
                          "eve": np.r_[[np.nan] * 4, [1.0, 1.1, 0.9, 1.0], [2.0, 2.1, 1.9, 2.0]]})
    s = eve.drawstring_slope(frame)
    assert s["n_p"] == 2 and s["n_parents"] == 8
    assert s["slope"] == pytest.approx(1 / 50) and s["relative_change"] == pytest.approx(1 / 1.5)
    assert s["slope_se"] > 0
    assert np.isnan(eve.drawstring_slope(frame[frame["parent_size"] <= 50])["slope"])


def test_truth_units_and_summary():
    config = {"dataset": "adni_phantom", "classifier": "svm", "engine": "active_set", "C": 1e4, "tol": 1e-3,
              "device": "cpu", "metric": "accuracy", "data_seed": 0, "effect_size": 1.5, "n_features": 80}
    draws = eve.truth_draws_unit(config, 10, 30, 10, seed=0)
    assert set(draws) == {"accuracy", "sensitivity", "specificity", "auc"} and draws["auc"].shape == (30,)
    pools = eve.truth_pools_unit(config, 10, 3, 4, 2, 10, seed=0)
    assert pools["scores"]["accuracy"].shape == (3, 4, 2) and pools["null_scores"]["accuracy"].shape == (3, 2, 2)
    # the null run re-validates the same subsets with another partition: close, not identical
    assert not np.array_equal(pools["null_scores"]["accuracy"], pools["scores"]["accuracy"][:, :2])
    row = eve.truth_summary(draws["accuracy"], pools["scores"]["accuracy"], 10)
    assert row["relative_bias"] == pytest.approx(row["eve"] / row["true_variance"] - 1)
    assert row["n_draws"] == 30 and row["n_pools"] == 3 and row["relative_bias_se"] > 0
    with pytest.raises(ValueError, match="adni_phantom"):
        eve.truth_draws_unit({**config, "dataset": "wdbc"}, 10, 5, 10, seed=0)


def test_chapter_grid_covers_every_experiment():
    P = eve.Params(truth_n_draws=2500, strategy_n_pairs=120)
    grid = eve.chapter_grid(P)
    kinds = {g["kind"] for g in grid}
    assert kinds == set(eve.UNITS)
    draws = [g["args"] for g in grid if g["kind"] == "truth_draws"]
    assert sum(a["n_draws"] for a in draws) == 2500 * len(P.truth_sizes)
    strat = [g["args"] for g in grid if g["kind"] == "strategies"]
    assert sum(a["n_pairs"] for a in strat) == 120 * len(P.strategy_sizes)
    assert len({(g["kind"], str(sorted(g["args"].items()))) for g in grid}) == len(grid)  # no duplicate runs
    pc = eve.pair_check(P)
    assert pc["valid"] == pc["n_pairs"] == P.strategy_n_pairs
    with pytest.raises(ValueError, match="truth_null_pairs"):
        eve.Params(truth_pairs_per_pool=3, truth_null_pairs=5)


#: a parameter set on which the whole chapter runs in a few seconds (P = 5 < 2n holds no disjoint pair)
TINY = {"device": "cpu", "max_workers": 1, "drawstring_parent_sizes": [5, 10], "drawstring_subset_size": 5,
        "drawstring_n_parents": 2, "drawstring_n_pairs": 2, "characterization_sizes": [5, 10],
        "characterization_n_pairs": 3, "strategy_sizes": [5], "strategy_n_pairs": 2, "truth_sizes": [5, 10],
        "truth_n_pools": 2, "truth_pairs_per_pool": 2, "truth_null_pairs": 1, "truth_n_draws": 10, "n_bootstrap": 100,
        "setting_sizes": [5], "setting_n_pairs": 2, "comparison_size": 5, "comparison_n_pairs": 2, "bridge_n_pairs": 2,
        "bridge_size": 40}


def test_run_returns_results_that_feed_the_claims():
    """``eve.run`` (the chapter protocol's entry point) on a tiny parameter set: a ``Results`` with every field
    filled, which ``claim_inputs`` turns into inputs from which every claim and check of the chapter is decided."""
    import dataclasses

    from medeval.experiments import eve_claims
    from medeval.runtime.params import resolve_params

    P = resolve_params("03-eve", "smoke", TINY)
    res = eve.run(P)
    assert isinstance(res, eve.Results)
    assert all(getattr(res, f.name) is not None for f in dataclasses.fields(res))
    assert res.pool == {"dataset": "adni_phantom", "n_negative": 370, "n_positive": 252, "n_features": 80}
    assert res.drawstring_omitted_parent_sizes == [5] and list(res.drawstring_summary["parent_size"]) == [5, 10]
    assert set(res.drawstring_summary_by_metric) == set(eve.METRICS)
    assert set(zip(res.known_truth["metric"], res.known_truth["subset_size"], strict=True)) == {
        (m, n) for m in eve.METRICS for n in (5, 10)} and res.truth_n_draws == 10
    assert "scores" not in res.comparison and set(res.comparison_scores) == {"svm", "nearest_centroid"}
    assert (res.strategies["mse_identity_error"] < 1e-12).all() and list(res.lowest_mse["subset_size"]) == [5]
    assert res.quality_band["floor"] == eve.QUALITY_FLOOR and len(res.quality_band["per_model"]) == 3
    inp = eve_claims.claim_inputs(res, P, gpu=resolve_params("03-eve", "gpu"))
    cl = eve_claims.CLAIMS.decide(inp, scale="smoke")
    assert [c.id for c in cl.claims] == [s.id for s in eve_claims.CLAIMS.specs]
    assert len(cl.checks) == 8 and all(c.passed for c in cl.checks)


def test_sklearn_loop_on_every_core_gives_the_one_core_result():
    """The scikit-learn loop split over processes returns the same decision values as one process, in order;
    inside a grid's worker process it stays on one core; a bad n_jobs is refused."""
    from concurrent.futures import ProcessPoolExecutor

    from medeval.data.phantoms.adni import generate_adni_pool
    from medeval.models.linear_svm import fit_decision_values, sklearn_jobs

    pool = generate_adni_pool(seed=0)
    X, y = pool.model.standardize(pool.features), pool.labels
    subsets = draw_balanced_subsets(y, 10, 15, rng=0)
    folds = libsvm_fold_ids(y[subsets], 10, rng=1)
    mask = (folds[:, None, :] != np.arange(10)[None, :, None]).reshape(-1, subsets.shape[1])
    sidx = np.repeat(np.arange(15), 10)
    one, u1 = fit_decision_values(X[subsets], y[subsets], mask, sidx, engine="sklearn", n_jobs=1)
    two, u2 = fit_decision_values(X[subsets], y[subsets], mask, sidx, engine="sklearn", n_jobs=2)
    np.testing.assert_array_equal(one, two)
    assert u1 == u2
    with ProcessPoolExecutor(1) as workers:
        assert workers.submit(sklearn_jobs).result() == 1
    assert sklearn_jobs(3) == 3
    for bad in (0, -2, 1.5):
        with pytest.raises(ValueError, match="n_jobs"):
            sklearn_jobs(bad)
    with pytest.raises(ValueError, match="n_jobs"):
        fit_decision_values(X[subsets], y[subsets], mask, sidx, engine="batched", n_jobs=0)


# ---- the schema refuses, before any compute, what would fail after the kernel started (issue #17) ----------
def _refusal(overrides) -> str:
    from medeval.runtime.params import ParameterError, resolve_params

    with pytest.raises(ParameterError) as err:
        resolve_params("03-eve", "smoke", overrides)
    return str(err.value)


def test_n_splits_above_the_smallest_subset_is_refused_naming_the_sizes():
    """A draw once ran n_splits = 21 on subsets of 2 x 10 subjects and died in the grid."""
    msg = _refusal({"n_splits": 21})
    assert "parameters n_splits=21, characterization_sizes=[10, 25], truth_sizes=[10, 20], setting_sizes=[10]" in msg
    assert "needs at least n_splits = 21 subjects in a subset" in msg and "has 20" in msg
    assert "n_splits=12" in _refusal({"n_splits": 12, "comparison_size": 5})


@pytest.mark.parametrize(("overrides", "expected"), [
    ({"strategy_sizes": [2]}, r"strategies=.*strategy_sizes=\[2\]: a 10-fold strategy needs at least 10 subjects"),
    ({"strategies": ["10x1", "LOO", "10X1"]}, r"strategies name the same strategy twice: \['10x1'\]"),
    ({"strategies": ["10x1", "LOO", "5fold"]}, r"'5fold' is not a strategy"),
    ({"strategies": ["1x1", "LOO"]}, r"K-fold needs K >= 2"),
    ({"dataset": "wdbc", "strategy_sizes": [107]}, r"strategy_sizes \[107\] too large .*'wdbc' pool .*at most 106"),
    ({"dataset": "wdbc", "drawstring_parent_sizes": [50, 213]}, r"\[213\] exceed the smaller class \(at most 212"),
    ({"setting_sizes": [110]}, r"setting_sizes \[110\] too large .*'wdbc' pool of the learner x data comparison"),
    ({"truth_sizes": [127]}, r"truth_sizes \[127\] too large .*370/252 phantom pool \(at most 126"),
    ({"characterization_sizes": [10, 127, 200]}, r"fewer than two sizes fit two disjoint subsets"),
    ({"comparison_size": 127}, r"comparison_size=127 too large"),
    ({"adni_csv": "my.csv"}, r"adni_csv='my.csv', dataset='adni_phantom': adni_csv is read only with dataset='adni'"),
    ({"truth_sizes": [10, 10]}, r"'truth_sizes' = \[10, 10\]: entries must be distinct"),
    ({"bridge_size": 1001}, r"'bridge_size' = 1001: .*less than or equal to 1000"),
])
def test_cross_field_rules_name_their_fields(overrides, expected):
    import re

    assert re.search(expected, _refusal(overrides)), _refusal(overrides)


def test_the_light_strategy_grammar_follows_parse_strategy():
    from medeval.experiments.eve_params import strategy_shape

    for spec in ["10x1", "10x10", "3X1", "3 x 10", "2×5", "LOO", "loo", "holdout", "holdout0.3x5", "holdout.25"]:
        shape, strategy = strategy_shape(spec), parse_strategy(spec)
        assert (shape.name, shape.n_splits, shape.n_repeats) == (strategy.name, strategy.n_splits, strategy.n_repeats)
    for spec in ["1x1", "10x0", "5fold", "holdout1.5"]:
        assert isinstance(strategy_shape(spec), str)
        with pytest.raises(ValueError):
            parse_strategy(spec)


def test_the_hard_margin_check_uses_the_chapters_folds():
    P = eve.Params(n_splits=4, characterization_sizes=[2, 10], drawstring_subset_size=2, truth_sizes=[2],
                   setting_sizes=[2], comparison_size=2, drawstring_parent_sizes=[4, 10], strategy_sizes=[2],
                   strategies=["4x1", "LOO"])
    (hm,) = [g["args"] for g in eve.chapter_grid(P) if g["kind"] == "hard_margin"]
    assert hm["n_splits"] == 4 and hm["subset_sizes"] == [2, 10]
    frame = eve.hard_margin_unit(hm["config"], [2], 100.0, seed=0, n_subsets=2, n_splits=4)
    assert frame["subset_size"].tolist() == [2]


def test_an_estimate_above_the_available_memory_is_refused_naming_its_drivers():
    """The sizes of a draw that asked for hundreds of GiB: a million pairs of 2 x 120 subjects."""
    from medeval.runtime.params import GIB, PreflightError, preflight, resolve_params

    params = resolve_params("03-eve", "smoke", {"characterization_n_pairs": 1_000_000,
                                                "characterization_sizes": [100, 120]})
    estimate = params.resource_estimate()
    assert estimate.peak_bytes > 48 * GIB
    assert {"characterization_n_pairs", "characterization_sizes"} <= set(estimate.drivers)
    with pytest.raises(PreflightError, match=r"exceeds the 24.00 GiB available.*lower characterization_n_pairs"):
        preflight("03-eve", params, available=24 * GIB)
    for profile in ("smoke", "default", "gpu"):
        preflight("03-eve", resolve_params("03-eve", profile, {"device": "cpu"}), available=24 * GIB)


def test_the_validation_term_matches_a_measurement(peak_growth):
    """The estimate of one characterization unit (24,000 subsets of 2 x 10, active-set engine), where the fold ids
    and the validation chunks dominate, against the peak resident memory it adds in a fresh interpreter."""
    measured = peak_growth("eve.characterization_unit(cfg, 10, 12_000, 10, 0)", setup=(
        "from medeval.experiments import eve\n"
        "cfg = {'dataset': 'adni_phantom', 'classifier': 'svm', 'engine': 'active_set', 'C': 1e4, 'tol': 1e-3,\n"
        "       'device': 'cpu', 'metric': 'accuracy', 'data_seed': 0, 'effect_size': 1.5, 'n_features': 80}\n"
        "eve.characterization_unit(cfg, 5, 3, 10, 0)"))
    estimated = eve.Params().validation_bytes(2 * 12_000, 10)
    assert 0.5 <= measured / estimated <= 2, (measured / 2**20, estimated / 2**20)




@pytest.mark.parametrize("profile", ["smoke", "default"])
def test_the_time_estimate_is_within_a_factor_two_of_the_recorded_wall_time(profile, recorded_time_within):
    """``Params.time_estimate`` against the wall time that results/timings.json records for the profile on the
    2-core reference machine (no time is measured here), with one costed unit per unit of the code's grid. A
    third run, measured when the model was made (default with n_splits=5, characterization sizes up to 125 at
    800 pairs, 48 drawstring parents, 300 setting pairs and strategy sizes [10, 25, 50]): 55 s estimated,
    63.5 s measured."""
    from medeval.runtime.params import resolve_params

    P = resolve_params("03-eve", profile)
    assert len(P.unit_seconds()) == len(eve.chapter_grid(P))
    assert resolve_params("03-eve", profile, {"device": "cuda"}).resource_estimate().seconds is None
    recorded_time_within("03-eve", profile, P.resource_estimate().seconds)
