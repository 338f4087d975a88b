"""CIFAR-10 "automobile vs rest" En/Ep trial-models (thesis §5.5): subsets, seeds, a tiny end-to-end run."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

from medeval.data import training_sets as ts
from medeval.data.manifest import DatasetUnavailableError
from medeval.data.one_vs_rest import biased_subset, equal_counts
from medeval.experiments import cifar10_binary as cb

# ------------------------------------------------------------------------------------------------ fixtures


def _write_batch(path, labels, rng):
    n = len(labels)
    hwc = rng.integers(0, 200, (n, 32, 32, 3), dtype=np.uint8)
    hwc[np.asarray(labels) == 1] += 55  # automobiles are brighter: something to learn
    with open(path, "wb") as fh:
        pickle.dump(
            {b"labels": list(map(int, labels)), b"data": hwc.transpose(0, 3, 1, 2).reshape(n, 3072)},
            fh,
            protocol=2,
        )


@pytest.fixture
def fake_cifar(tmp_path, monkeypatch):
    """A CIFAR-10 folder under $MEDEVAL_DATA: 5 x 60 training images (31 automobiles, 29 airplanes, 30 of
    every other class) and 100 test images (10 per class), with the fetch marker ``require`` checks."""
    root = tmp_path / "cifar10"
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for b in range(1, 6):
        labels = np.arange(60) % 10
        if b == 1:
            labels[0] = 1  # one airplane becomes an automobile: 31 positives, U = floor(31 / 3) = 10
        _write_batch(folder / f"data_batch_{b}", rng.permutation(labels), rng)
    _write_batch(folder / "test_batch", rng.permutation(np.arange(100) % 10), rng)
    (root / "cifar-10-python.tar.gz.unpacked").write_text("unpacked into .\n")
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    threads = torch.get_num_threads()
    yield root
    torch.set_num_threads(threads)  # cifar10_run limits the CPU threads of its process


def _cifar_labels(seed=0):
    return np.random.default_rng(seed).permutation(np.repeat(np.arange(10), 5000))


# ------------------------------------------------------------------------------------------------ subsets


def test_equal_counts_splits_the_remainder_over_the_first_groups():
    assert equal_counts(4998, 9).tolist() == [556] * 3 + [555] * 6
    assert equal_counts(1666, 9).tolist() == [186] + [185] * 8
    assert equal_counts(5, 9).tolist() == [1] * 5 + [0] * 4
    with pytest.raises(ValueError, match="n_groups"):
        equal_counts(3, 0)
    with pytest.raises(ValueError, match="total"):
        equal_counts(-1, 3)


@pytest.mark.parametrize(
    "distribution,n_pos,n_neg,per_class",
    [("En", 1666, 4998, [556] * 3 + [555] * 6), ("Ep", 4998, 1666, [186] + [185] * 8)],
)
def test_cifar_sized_subset_has_the_thesis_counts(distribution, n_pos, n_neg, per_class):
    labels = _cifar_labels()
    s = cb.biased_subset(labels, distribution, positive_class=cb.POSITIVE_CLASS, seed=0)
    assert s.unit == 1666 == 5000 // 3
    assert s.size == 6664 == 4 * s.unit
    assert (s.n_pos, s.n_neg) == (n_pos, n_neg)
    assert np.unique(s.indices).size == s.size  # no image twice
    drawn = labels[s.indices]
    assert int(np.sum(drawn == 1)) == n_pos
    negatives = [c for c in range(10) if c != 1]
    assert s.negatives_per_class == dict(zip(negatives, per_class, strict=True))
    counts = [int(np.sum(drawn == c)) for c in negatives]
    assert counts == per_class and max(counts) - min(counts) <= 1
    # shuffled, not grouped by class
    assert not np.all(np.diff(drawn) >= 0)


def test_unit_comes_from_the_data_and_can_be_capped():
    labels = np.r_[np.full(31, 1), np.repeat([0, 2, 3, 4, 5, 6, 7, 8, 9], 30)]
    s = biased_subset(labels, "Ep", positive_class=1, seed=1)
    assert s.unit == 10 and s.size == 40 and (s.n_pos, s.n_neg) == (30, 10)
    capped = biased_subset(_cifar_labels(), "En", positive_class=1, seed=1, unit_cap=100)
    assert capped.unit == 100 and capped.size == 400 and capped.n_neg == 300
    balanced = biased_subset(labels, "E2.a", positive_class=1, seed=1)
    assert (balanced.n_pos, balanced.n_neg) == (20, 20)


def test_subset_refuses_short_negative_classes_and_bad_arguments():
    labels = np.r_[np.full(30, 1), np.full(30, 0), np.full(2, 2)]  # En needs 15 of class 2
    with pytest.raises(ValueError, match="negative class 2 has 2"):
        biased_subset(labels, "En", positive_class=1)
    with pytest.raises(ValueError, match="distribution must be one of"):
        biased_subset(labels, "E9", positive_class=1)
    with pytest.raises(ValueError, match="positive_class 7"):
        biased_subset(labels, "En", positive_class=7)
    with pytest.raises(ValueError, match="labels must be a 1-D integer"):
        biased_subset(labels.astype(float), "En", positive_class=1)


def test_run_streams_are_reproducible_and_distinct():
    labels = _cifar_labels()

    def draw(seed, run, dist):
        return cb.biased_subset(labels, dist, positive_class=1, seed=cb.run_rng(seed, run, dist)).indices

    same = draw(0, 3, "En")
    np.testing.assert_array_equal(same, draw(0, 3, "En"))
    assert not np.array_equal(np.sort(same), np.sort(draw(0, 4, "En")))  # another trial, another subset
    assert not np.array_equal(np.sort(same), np.sort(draw(1, 3, "En")))
    assert not np.array_equal(np.sort(draw(0, 3, "Ep")), np.sort(draw(0, 3, "E2.c")))


def test_thesis_validation_split_is_80_20():
    tr, va = ts.train_validation_split(6664, validation_fraction=0.2, seed=0)
    assert (tr.size, va.size) == (5331, 1333)
    assert np.intersect1d(tr, va).size == 0 and np.union1d(tr, va).size == 6664


def test_scored_test_indices_keep_every_class_equal():
    labels = np.repeat(np.arange(10), 1000)
    np.testing.assert_array_equal(cb.scored_test_indices(labels, None, seed=0), np.arange(10_000))
    idx = cb.scored_test_indices(labels, 200, seed=0)
    assert idx.size == 200 and np.bincount(labels[idx]).tolist() == [20] * 10
    np.testing.assert_array_equal(idx, cb.scored_test_indices(labels, 200, seed=0))
    with pytest.raises(ValueError, match="test_size"):
        cb.scored_test_indices(labels, 0, seed=0)


# ------------------------------------------------------------------------------------------------ model


def test_classifier_heads_give_two_logits():
    x = torch.rand(2, 3, 32, 32) * 255
    assert cb.build_classifier("small_cnn")(x).shape == (2, 2)
    assert cb.build_classifier("resnet18").eval()(x).shape == (2, 2)
    assert cb.build_classifier("resnet18", input_size=64).eval()(x).shape == (2, 2)
    with pytest.raises(ValueError, match="model must be one of"):
        cb.build_classifier("vgg16")
    with pytest.raises(ValueError, match="weights_path"):
        cb.build_classifier("small_cnn", weights_path="w.pt")
    with pytest.raises(ValueError, match="input_size"):
        cb.build_classifier("resnet18", input_size=16)


class _Identity(torch.nn.Module):
    out_channels = 3

    def forward(self, x):
        return x


def test_inputs_are_scaled_to_unit_range_and_imagenet_normalised():
    x = torch.full((1, 3, 4, 4), 127.5)
    plain = cb.BinaryImageClassifier(_Identity(), 3)
    norm = cb.BinaryImageClassifier(_Identity(), 3, mean=cb.IMAGENET_MEAN, std=cb.IMAGENET_STD)
    for m in (plain, norm):
        torch.nn.init.eye_(m.classifier.weight)
        torch.nn.init.zeros_(m.classifier.bias)
    torch.testing.assert_close(plain(x), torch.full((1, 3), 0.5))
    expected = (0.5 - torch.tensor(cb.IMAGENET_MEAN)) / torch.tensor(cb.IMAGENET_STD)
    torch.testing.assert_close(norm(x), expected[None])


# ------------------------------------------------------------------------------------------------ runs


def test_absent_dataset_raises_dataset_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    with pytest.raises(DatasetUnavailableError, match="cifar10"):
        cb.cifar10_run(distribution="En", run=0, model="small_cnn", max_epochs=1)


def test_bad_names_are_refused_before_reading_data(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))  # no data: the parameter check must come first
    with pytest.raises(ValueError, match="distribution must be one of"):
        cb.cifar10_run(distribution="Eq", run=0)
    with pytest.raises(ValueError, match="model must be one of"):
        cb.cifar10_run(distribution="En", run=0, model="resnet101")


def _tiny_run(run=0, distribution="En", **kw):
    args = {"model": "small_cnn", "max_epochs": 2, "batch_size": 16, "device": "cpu", "eval_batch_size": 64}
    return cb.cifar10_run(distribution=distribution, run=run, seed=5, **{**args, **kw})


def test_tiny_end_to_end_run(fake_cifar):
    out = _tiny_run()
    assert out["distribution"] == "En" and out["run"] == 0 and out["model"] == "small_cnn"
    assert (out["unit"], out["n_pos"], out["n_neg"]) == (10, 10, 30)
    assert out["negatives_per_class"] == {0: 4, 2: 4, 3: 4, 4: 3, 5: 3, 6: 3, 7: 3, 8: 3, 9: 3}
    assert (out["train_size"], out["val_size"], out["test_size"]) == (32, 8, 100)
    assert out["epochs_run"] == 2 and 1 <= out["best_epoch"] <= 2
    assert len(out["history"]["val_loss"]) == 2 and out["history"]["lr"] == [1e-4, 1e-4]
    imb = out["imbalanced"]
    assert imb["y_true"].dtype == bool and imb["y_true"].shape == (100,) and imb["y_true"].sum() == 10
    assert imb["score_c"].dtype == np.float32 and imb["score_c"].shape == (100,)
    assert np.all((imb["score_c"] >= 0) & (imb["score_c"] <= 1))
    assert imb["argmax_c"].dtype == bool and imb["argmax_c"].shape == (100,)
    decided = np.abs(imb["score_c"] - 0.5) > 1e-6
    np.testing.assert_array_equal(imb["argmax_c"][decided], imb["score_c"][decided] > 0.5)
    assert torch.get_num_threads() == 1  # one thread per run on the CPU


def test_runs_are_reproducible_and_trials_differ(fake_cifar):
    a = _tiny_run(run=1, distribution="Ep", augment=True)
    b = _tiny_run(run=1, distribution="Ep", augment=True)
    np.testing.assert_array_equal(a["imbalanced"]["score_c"], b["imbalanced"]["score_c"])
    assert a["history"] == b["history"]
    assert (a["n_pos"], a["n_neg"], a["train_size"]) == (30, 10, 32)
    c = _tiny_run(run=2, distribution="Ep", augment=True, test_size=50)
    assert c["test_size"] == 50 and c["imbalanced"]["y_true"].sum() == 5
    assert not np.array_equal(a["imbalanced"]["score_c"][:50], c["imbalanced"]["score_c"])


def test_weights_digest_keys_the_grid_and_guards_the_run(tmp_path):
    import torch

    from medeval.data.manifest import file_hash
    from medeval.experiments import evaluation_measures as em
    from medeval.experiments.cifar10_binary import cifar10_run
    from medeval.models.backbones import resnet18

    weights = tmp_path / "r18.pth"
    torch.save(resnet18(in_channels=3).state_dict(), weights)
    P = em.Params(cifar_weights=str(weights), cifar_model="resnet18", n_cifar_trials=2)
    grid = em.cifar10_grid(P)
    assert {g["weights_sha256"] for g in grid} == {file_hash(weights)}
    assert em.cifar10_grid(em.Params())[0]["weights_sha256"] is None
    with pytest.raises(ValueError, match="changed since the run was configured"):
        cifar10_run(distribution="En", run=0, model="resnet18", weights_path=weights, weights_sha256="0" * 64)
    with pytest.raises(ValueError, match="without weights_path"):
        cifar10_run(distribution="En", run=0, weights_sha256="0" * 64)
