"""Tests of the chapter-1 experiment functions: schema, metric-only tables, datasets, splits, one training run."""

from __future__ import annotations

import numpy as np
import pytest

from medeval.experiments import mil_stability as ms


def test_params_validation():
    P = ms.Params()
    assert P.n_models == 5 and P.subset_fraction == 0.95 and P.threshold == 0.5 and P.jaccard_threshold == 0.1
    with pytest.raises(ValueError, match="n_models"):
        ms.Params(n_models=1)
    with pytest.raises(ValueError, match="operators"):
        ms.Params(operators=["attention"])
    with pytest.raises(ValueError, match="grid_size"):
        ms.Params(image_size=32, grid_size=8)
    with pytest.raises(ValueError, match="thresholds"):
        ms.Params(thresholds=[0.0, 0.5])


def test_paper_tables_and_fig9():
    t = ms.paper_tables()
    assert np.max(np.abs(t["S_APJ (ours)"] - t["S_APJ (paper)"])) <= 5e-3
    assert np.max(np.abs(t["S_AJ (ours)"] - t["S_AJ (paper)"])) <= 5e-3
    f = ms.fig9_lines()
    assert set(f.groupby("line").size()) == {11}
    assert np.all(f[["n00", "n01", "n10", "n11"]].sum(axis=1) == 200)
    ends = f[f.step == 50].set_index("line")["S_APJ"]
    assert ends.iloc[0] == pytest.approx(1 / 3) and ends.iloc[3] == pytest.approx(-0.2)
    with pytest.raises(ValueError, match="step"):
        ms.fig9_lines(7)


def test_chance_level_near_zero():
    c = ms.chance_level(1000, 256, seed=0).set_index("score")["mean"]
    assert abs(c["adjusted_positive_jaccard"]) < 0.02 and abs(c["spearman"]) < 0.02
    assert abs(c["positive_jaccard"] - 1 / 3) < 0.02


def test_digit_bags():
    d = ms.make_digit_bags(60, 4, target=3, seed=1)
    assert d.images.shape == (60, 32, 32) and d.instance_labels.shape == (60, 16)
    assert np.array_equal(d.bag_labels == 1, d.instance_labels.any(axis=1))
    assert 0.2 < d.bag_labels.mean() < 0.8
    c = ms.make_digit_bags(200, 4, target=3, seed=1, confounder=True, confounder_strength=1.0)
    marker = c.distractor.any(axis=1)
    assert np.array_equal(marker, c.bag_labels == 1)  # strength 1: the marker is a perfect shortcut
    assert not np.any(c.instance_labels & c.distractor)  # the marker tile is never a target instance
    again = ms.make_digit_bags(60, 4, target=3, seed=1)
    assert np.array_equal(again.images, d.images)
    with pytest.raises(ValueError, match="target"):
        ms.make_digit_bags(10, 4, target=11, seed=0)


def test_splits_subsets_and_cv():
    P = ms.Params(n_images=80)
    data = ms.build_data(ms.dataset_specs(P)["cxr"])
    train, test = ms.fixed_split(data, P.test_fraction, P.seed)
    assert not set(data.patient_id[train]) & set(data.patient_id[test])
    subsets = [ms.run_split("subset", k, data, P) for k in range(5)]
    for tr, te, _ in subsets:
        assert np.array_equal(te, test) and set(tr) <= set(train)
        assert len(tr) == int(np.ceil(0.95 * len(train)))
    assert len({tuple(s[0]) for s in subsets}) == 5  # the subsets differ
    assert len({s[2] for s in subsets}) == 5  # and so do the initialisation seeds
    for f in range(P.cv_folds):
        tr, te, _ = ms.run_split("cv", f, data, P)
        assert not set(data.patient_id[tr]) & set(data.patient_id[te])


@pytest.mark.slow
def test_one_training_run_and_stability():
    P = ms.Params(n_images=60, epochs=1, n_models=2, max_workers=1)
    spec = ms.dataset_specs(P)["digits"] | {"n_bags": 60}
    runs = [ms.train_and_predict(dataset=spec, operator="mean", kind="subset", index=k,
                                 params=P.model_copy(update={"digits_epochs": 1}).model_dump(mode="json")) for k in range(2)]
    assert runs[0]["probs"].shape == (len(runs[0]["test_idx"]), 16)
    assert np.array_equal(runs[0]["test_idx"], runs[1]["test_idx"])
    result = ms.collect_protocol(P, spec, ["mean"], runs, cv=False)
    assert result.predictions["mean"].shape[0] == 2
    summary = ms.stability_of(result, "mean", P).summary()
    assert set(summary["score"]) >= {"adjusted_positive_jaccard", "spearman"}


def test_real_data_absent_raises_clearly(tmp_path, monkeypatch):
    from medeval.data.manifest import DatasetUnavailableError

    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    for name, dataset_id in (("chestxray14", "chestxray14-images"), ("mura", "mura"), ("voc2005", "pascal-voc-2005")):
        with pytest.raises(DatasetUnavailableError, match=dataset_id):
            ms.load_real_bags(name, 64, 8, seed=0)
    with pytest.raises(ValueError, match="dataset"):
        ms.load_real_bags("imagenet", 64, 8, seed=0)


def test_cxr_difficulty_changes_contrast_not_size():
    easy = ms.make_cxr_bags(40, 64, 8, difficulty=1.0, seed=3, annotated_fraction=0.0)
    hard = ms.make_cxr_bags(40, 64, 8, difficulty=0.1, seed=3, annotated_fraction=0.0)
    assert np.array_equal(easy.instance_labels, hard.instance_labels)  # the same positive instances
    assert np.array_equal(easy.bag_labels, hard.bag_labels) and easy.bag_labels.any() and not easy.bag_labels.all()
    neg = easy.bag_labels == 0
    assert np.array_equal(easy.images[neg], hard.images[neg])  # a normal heart does not depend on the contrast
    pos = ~neg
    diff = np.abs(easy.images[pos] - hard.images[pos])
    assert diff.max() > 0.05
    # the blend is linear in the contrast: 0.55 lies half-way between 0.1 and 1.0
    mid = ms.make_cxr_bags(40, 64, 8, difficulty=0.55, seed=3, annotated_fraction=0.0)
    assert np.allclose(mid.images - hard.images, 0.5 * (easy.images - hard.images), atol=1e-5)
    with pytest.raises(ValueError, match="difficulty"):
        ms.make_cxr_bags(10, 64, 8, difficulty=0.0, seed=0, annotated_fraction=0.0)
