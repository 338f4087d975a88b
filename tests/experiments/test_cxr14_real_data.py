"""The real-data loaders of chapters 2 (``rodeo.chestxray14_detection_data``) and 5 (``multilabel_cxr14.run_real_cnn``)
on a small ChestX-ray14-layout phantom folder: which images they use, how they split them, the NIH boxes they
evaluate against, and their errors (too few images, no boxed test image, ``device='cuda'`` without CUDA)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from medeval.data.chestxray14 import load_boxes, load_labels, patient_id_of
from medeval.data.phantoms.formats import add_chestxray14_copies, write_chestxray14_like
from medeval.experiments import multilabel_cxr14 as ml5
from medeval.experiments import rodeo as R
from medeval.runtime.params import resolve_params

no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error raised without CUDA")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("cxr14")
    names = write_chestxray14_like(root / "chestxray14-images", 30, 64, seed=1, boxed_images=3)
    names += add_chestxray14_copies(root / "chestxray14-images" / "images", 2, 3)
    mp = pytest.MonkeyPatch()
    mp.setenv("MEDEVAL_DATA", str(root))
    yield root / "chestxray14-images" / "images", names
    mp.undo()


def test_rodeo_detection_data_uses_the_present_images_split_by_patient(folder):
    image_dir, names = folder
    params = R.Params(detector_data="chestxray14", n_train=16, image_size=96, device="cpu")
    with pytest.warns(UserWarning, match=r"of the 436 boxed test images are missing"):
        x_train, y_train, x_test, targets, info = R.chestxray14_detection_data(params, 0)
    boxes = load_boxes()
    boxed_patients = set(patient_id_of(boxes["image_index"].unique()))
    train, test = info["train_image_index"], info["test_image_index"]
    # test: the oracle test half of the box list (same split), restricted to the images present
    _, oracle = R.load_oracle_targets(params.oracle_test_fraction, params.seed)
    assert sorted(test) == sorted(set(names) & set(oracle["image_index"])) and len(test) >= 5
    assert info["n_test"] == len(test) == x_test.shape[0] == targets.n_images
    assert info["n_test_missing"] == 436 - len(test)
    # train: n_train images of patients without any boxed image (follow-ups of boxed patients are excluded)
    pool = [n for n in names if patient_id_of(n)[0] not in boxed_patients]
    assert len(pool) < len([n for n in names if n not in set(boxes["image_index"])])
    assert info["n_train_pool"] == len(pool) and len(train) == 16 and set(train) <= set(pool)
    assert not set(patient_id_of(train)) & (set(patient_id_of(test)) | boxed_patients)
    assert x_train.shape == (16, 96, 96) and x_test.shape[1:] == (96, 96)
    table = load_labels().set_index("image_index")
    np.testing.assert_array_equal(y_train, table.loc[train, list(R.CLASSES)].to_numpy(np.float32))
    expected = np.asarray(Image.open(image_dir / test[0]).convert("L").resize((96, 96), Image.BILINEAR)) / 255.0
    np.testing.assert_allclose(x_test[0], expected, atol=1e-6)
    # targets: the NIH boxes of each test image, rescaled from 1024 px to image_size
    assert len(targets) == info["n_test_boxes"] == int(boxes["image_index"].isin(test).sum())
    for i, name in enumerate(test):
        nih = boxes[boxes["image_index"] == name]
        want = sorted(zip(nih["finding"].map(R.CLASSES.index), *(nih[c] * 96 / 1024 for c in "xywh"), strict=True))
        mine = targets.image_ids == i
        got = sorted(zip(targets.labels[mine], *targets.boxes[mine].T, strict=True))
        np.testing.assert_allclose(np.array(got, float), np.array(want, float), rtol=1e-12)


def test_rodeo_detection_data_errors(folder, tmp_path, monkeypatch):
    _, names = folder
    with pytest.warns(UserWarning), pytest.raises(ValueError, match=r"n_train=200 but only \d+ images"):
        R.chestxray14_detection_data(R.Params(detector_data="chestxray14", n_train=200), 0)
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    write_chestxray14_like(tmp_path / "chestxray14-images", 3, 64, seed=0)  # no boxed image at all
    with pytest.raises(FileNotFoundError, match="none of the 436 boxed test images"):
        R.chestxray14_detection_data(R.Params(detector_data="chestxray14", n_train=16), 0)


@no_cuda
def test_cuda_without_cuda_fails_first_naming_device(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))  # no data: the device error must come before the data's
    with pytest.raises(ValueError, match=r"device='cuda'.*CUDA is not available.*'auto'"):
        R.train_cam_detector(resolve_params("02-rodeo", "full", {"device": "cuda"}), 0)  # full: device auto
    p5 = resolve_params("05-multilabel", "full")
    assert p5.device == "cuda" and p5.data_source == "real"
    with pytest.raises(ValueError, match=r"device='cuda'.*CUDA is not available.*'auto'"):
        ml5.run_real_cnn(p5, 0, "holdout_70_10_20")


def test_real_cnn_uses_every_present_image_with_patient_level_folds(folder):
    image_dir, names = folder
    params = resolve_params("05-multilabel", "full", {"device": "auto", "image_size": 64, "backbone": "small_cnn",
                                                      "epochs": 0, "batch_size": 16})
    with pytest.warns(UserWarning, match=f"the CNN uses the {len(names)} present"):
        runs = ml5.run_real_cnn(params, 0, "kfold_5")
    patients = patient_id_of(names)
    assert len(runs) == 5 and len(set(patients)) < len(names)  # some patients have several images
    tested = [set(r.patient_test) for r in runs]
    assert sum(len(t) for t in tested) == len(set().union(*tested)) == len(set(patients))  # patient-disjoint
    assert sum(r.info["n_test"] for r in runs) == len(names)
    for r in runs:
        assert r.info["n_images"] == len(names) and r.n_train + r.info["n_validation"] + r.info["n_test"] == len(names)
        assert r.p_test.shape == r.y_test.shape == (r.info["n_test"], 14)
        assert np.all((r.p_test >= 0) & (r.p_test <= 1))
    # the labels scored are those of the label table for the images present
    table = load_labels().set_index("image_index").loc[names]
    assert sum(int(r.y_test.sum()) for r in runs) == int(table[list(ml5.PUBLISHED_AUC.index)].to_numpy().sum())
