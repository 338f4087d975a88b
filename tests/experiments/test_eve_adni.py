"""Chapter 3's real-data path: the ADNI regional-volume CSV at the manifest location, its validation, the
data digest that keys the grid cache, the pool-size check of the full profile, and the bounded SVM fits."""

from __future__ import annotations

import hashlib
import time

import numpy as np
import pandas as pd
import pytest

from medeval.data.manifest import DatasetUnavailableError
from medeval.data.phantoms.adni import generate_adni_pool
from medeval.experiments import eve
from medeval.experiments.eve import verify_hard_margin_limit
from medeval.models.linear_svm import fit_decision_values
from medeval.runtime.grid import run_key
from medeval.runtime.params import resolve_params


def _adni_frame(n_hc: int, n_ad: int, n_regions: int, seed: int) -> pd.DataFrame:
    """ADNI format: subject_id, diagnosis (HC|AD), one GM/ICV column per region; rows not sorted by class."""
    pool = generate_adni_pool(n_hc=n_hc, n_ad=n_ad, seed=seed, n_features=n_regions)
    frame = pd.DataFrame(pool.features, columns=list(pool.region_names))
    frame.insert(0, "diagnosis", np.where(pool.labels == 1, "AD", "HC"))
    frame.insert(0, "subject_id", [f"{(i % 140) + 2:03d}_S_{4000 + i:04d}" for i in range(len(frame))])
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


@pytest.fixture
def adni_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    (tmp_path / "adni").mkdir()
    return tmp_path / "adni"


def test_load_pool_reads_the_manifest_location(adni_dir):
    frame = _adni_frame(40, 30, 12, seed=2)
    path = adni_dir / "adni_regional_volumes.csv"
    frame.to_csv(path, index=False)
    X, y, model = eve.load_pool("adni")
    assert model is None and X.shape == (70, 12)
    np.testing.assert_array_equal(y, (frame["diagnosis"] == "AD").to_numpy().astype(int))  # file order kept
    raw = frame.iloc[:, 2:].to_numpy()
    np.testing.assert_allclose(X, (raw - raw.mean(0)) / raw.std(0), rtol=1e-9, atol=1e-9)
    P = resolve_params("03-eve", "full", {"device": "cpu"})
    config = eve.make_config(P)
    assert config["data_digest"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert "data_digest" not in eve.make_config(P, dataset="adni_phantom")


@pytest.mark.parametrize(
    "edit, match",
    [
        # a follow-up visit of a subject already listed: chapter 3 takes one (baseline) scan per subject
        (lambda f: pd.concat([f, f.iloc[[3]]], ignore_index=True), "duplicate subject_id"),
        (lambda f: f.assign(diagnosis=f["diagnosis"].replace({"HC": "CN"})), "must be one of"),
        (lambda f: f[f["diagnosis"] == "HC"], "no subject with diagnosis 'AD'"),
        (lambda f: f.assign(hippocampus_l=0.004), r"\['hippocampus_l'\] are constant"),
        (lambda f: f.drop(columns="diagnosis"), "missing column 'diagnosis'"),
    ],
)
def test_load_pool_refuses_bad_adni_tables(adni_dir, edit, match):
    edit(_adni_frame(20, 20, 8, seed=3)).to_csv(adni_dir / "adni_regional_volumes.csv", index=False)
    with pytest.raises(ValueError, match=match):
        eve.load_pool("adni")


def test_missing_csv_names_the_parameter(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_DATA", str(tmp_path))
    with pytest.raises(DatasetUnavailableError, match="adni_csv='nope.csv'"):
        eve.make_config(resolve_params("03-eve", "full", {"device": "cpu", "adni_csv": "nope.csv"}))
    with pytest.raises(DatasetUnavailableError, match="adni"):
        eve.make_config(resolve_params("03-eve", "full", {"device": "cpu"}))


def test_changed_csv_changes_the_grid_key_and_stale_configs_fail(adni_dir):
    path = adni_dir / "adni_regional_volumes.csv"
    _adni_frame(30, 30, 10, seed=4).to_csv(path, index=False)
    P = resolve_params("03-eve", "full", {"device": "cpu"})
    old = eve.make_config(P)
    kwargs = {"config": old, "subset_size": 5, "n_pairs": 2, "n_splits": 5, "seed": 0}
    first = eve.characterization_unit(**kwargs)
    assert first["dataset"].iloc[0] == "adni" and np.isfinite(first["eve"].iloc[0])
    _adni_frame(30, 25, 10, seed=5).to_csv(path, index=False)  # the user rebuilt the CSV
    new = eve.make_config(P)
    assert new["data_digest"] != old["data_digest"]
    assert run_key(eve.characterization_unit, {**kwargs, "config": new}) != run_key(eve.characterization_unit, kwargs)
    with pytest.raises(ValueError, match="changed since the run was configured"):
        eve.characterization_unit(**kwargs)


def test_check_pool_fits_names_the_parameters():
    P = resolve_params("03-eve", "full", {"device": "cpu"})
    eve.check_pool_fits(P, np.r_[np.zeros(370), np.ones(252)])  # the paper's ADNI cohort holds every size
    with pytest.raises(ValueError, match=r"drawstring_parent_sizes \[.*155\] exceed the smaller class \(at most 100"):
        eve.check_pool_fits(P, np.r_[np.zeros(300), np.ones(100)])
    with pytest.raises(ValueError, match=r"strategy_sizes \[50\] too large.*at most 40.*comparison_size=45") as err:
        eve.check_pool_fits(P.model_copy(update={"comparison_size": 45}), np.r_[np.zeros(300), np.ones(80)])
    assert "characterization_sizes" not in str(err.value)
    with pytest.raises(ValueError, match="characterization_sizes.*fewer than two"):
        eve.check_pool_fits(P.model_copy(update={"drawstring_parent_sizes": [25, 50], "strategy_sizes": [10],
                                                 "comparison_size": 10}), np.r_[np.zeros(60), np.ones(20)])


def test_params_need_a_parent_size_that_holds_a_disjoint_pair():
    with pytest.raises(ValueError, match="at least one of drawstring_parent_sizes must be >= 2 x drawstring_subset_size = 50"):
        eve.Params(drawstring_parent_sizes=[25, 49])


def test_sklearn_engine_is_bounded_and_counts_unconverged_fits():
    """A huge C on a training set that is not linearly separable: LIBSVM without an iteration limit runs for
    minutes; the sklearn engine stops at the batched engine's limit and reports the fit as unconverged."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1, 60, 20))
    y = np.r_[np.zeros(30), np.ones(30)][None]
    X[0, y[0] == 1, :2] += 0.5  # overlapping classes: 54 training points in 20 dimensions are not separable
    mask = np.ones((1, 60), dtype=bool)
    mask[0, :6] = False
    t0 = time.perf_counter()
    _, n_unconverged = fit_decision_values(X, y, mask, np.array([0]), engine="sklearn", C=1e6)
    assert n_unconverged == 1 and time.perf_counter() - t0 < 10
    hm = verify_hard_margin_limit(X[0], y[0].astype(int), 25, 1e4, n_subsets=1, rng=0, engine="sklearn")
    assert hm["n_unconverged"] > 0 and hm["in_limit"] is False


def test_preflight_refuses_sizes_an_adni_csv_cannot_hold(adni_dir, tmp_path):
    """The pool of a CSV is known only once it is read: the pre-flight counts its HC / AD rows (no pandas) and
    refuses, before a kernel starts, the sizes that ``check_pool_fits`` would refuse after it started."""
    from medeval.runtime.params import PreflightError, preflight

    _adni_frame(70, 50, 10, seed=1).to_csv(adni_dir / "adni_regional_volumes.csv", index=False)
    full = resolve_params("03-eve", "full", {"device": "cpu"})
    with pytest.raises(PreflightError) as err:
        preflight("03-eve", full, available=2**40)
    msg = str(err.value)
    assert "drawstring_parent_sizes, dataset: drawstring_parent_sizes [51, 53" in msg
    assert "(at most 50 per class) of the ADNI CSV adni_regional_volumes.csv (70 HC, 50 AD)" in msg
    assert "strategy_sizes [50] too large" in msg and "setting_sizes [50, 100] too large" in msg
    fitting = {"device": "cpu", "drawstring_parent_sizes": [15, 20, 50], "drawstring_subset_size": 10,
               "characterization_sizes": [10, 20, 30], "strategy_sizes": [10], "comparison_size": 10,
               "setting_sizes": [10], "truth_sizes": [10]}
    preflight("03-eve", resolve_params("03-eve", "full", fitting), available=2**40)
    missing = resolve_params("03-eve", "full", {**fitting, "adni_csv": str(tmp_path / "none.csv")})
    with pytest.raises(PreflightError, match=r"adni_csv: the ADNI regional-volume CSV .*none.csv' does not exist"):
        preflight("03-eve", missing, available=2**40)
