"""Phantom data sets in real formats read back through the real readers and the data layer's require()."""

import numpy as np
import pytest

from medeval.data.chestxray14 import LABELS, load_labels
from medeval.data.manifest import require
from medeval.data.phantoms.formats import write_chestxray14_like, write_cifar10_like, write_pcam_like
from medeval.data.readers import ChestXray14Images, PCamH5, read_cifar10


def test_chestxray14_like_joins_the_label_table(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    names = write_chestxray14_like(tmp_path / "chestxray14-images", 12, 96, seed=3, boxed_images=2)
    assert len(set(names)) == 14
    reader = ChestXray14Images(require("chestxray14-images") / "images")
    assert sorted(reader.table["image_index"]) == sorted(names)
    assert reader.image(0).shape == (96, 96)
    # the first 12 carry the label set of the phantom drawn for them
    from medeval.data.phantoms.chest import generate_chest_phantoms

    ph = generate_chest_phantoms(14, 96, seed=3)
    table = load_labels().set_index("image_index")
    for i, name in enumerate(names[:12]):
        np.testing.assert_array_equal(table.loc[name, list(LABELS)].to_numpy(dtype=np.uint8), ph.labels[i])
        got = reader.image(int(np.flatnonzero(reader.table["image_index"] == name)[0]))
        np.testing.assert_allclose(got, np.rint(ph.images[i] * 255) / 255, atol=1e-6)
    with pytest.raises(ValueError, match="n_images"):
        write_chestxray14_like(tmp_path / "x", 0, 96)


def test_pcam_like_is_balanced_and_readable(tmp_path):
    counts = write_pcam_like(tmp_path, n_train=20, n_valid=4, n_test=6, seed=1)
    assert counts["train"] == {"positive": 10, "negative": 10}
    for split, n in (("train", 20), ("valid", 4), ("test", 6)):
        with PCamH5.from_dir(tmp_path, split) as r:
            assert len(r) == n and r.labels().sum() == n // 2
            x, y = r[:2]
            assert x.shape == (2, 96, 96, 3) and x.dtype == np.uint8


def test_cifar10_like_is_readable(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    write_cifar10_like(tmp_path / "cifar10", n_train_per_class=5, n_test_per_class=2, seed=0)
    x, y = read_cifar10(require("cifar10"), "train")
    assert x.shape == (50, 32, 32, 3) and np.bincount(y).tolist() == [5] * 10
    xt, yt = read_cifar10(require("cifar10"), "test")
    assert xt.shape == (20, 32, 32, 3) and np.bincount(yt).tolist() == [2] * 10
