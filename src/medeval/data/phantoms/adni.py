"""A synthetic ADNI-like pool of regional grey-matter volumes (stand-in for chapter 3's ADNI data).

Mendelson et al. (MICCAI 2014) classify 252 AD patients against 370 healthy controls (HC) from ADNI
with features "the sum of the grey matter compartment in each of the cerebral regions, normalized by
the intra-cranial volume" of an 83-region atlas. ADNI is access-restricted, so the default stand-in is
this generator, whose distribution is explicit: the *true* variance of any validation strategy at any
subset size can be computed by Monte Carlo on fresh draws (:meth:`AdniPhantomModel.sample`), which the
paper could not do.

Model (all choices ours; the paper gives no feature statistics):

* d regions (default 80), each belonging to one of six lobes (frontal, temporal, parietal, occipital,
  cingulate/insula, subcortical/central); mean GM/ICV fractions μ_k drawn once in [0.002, 0.012]
  (they sum to ≈ 0.55 of ICV), SD 10 % of the mean;
* a factor covariance: z_k = λ_g G + λ_l L_lobe(k) + √(1 - λ_g² - λ_l²) ε_k with standard normal global
  factor G, lobar factors L and noise ε, so regions correlate at λ_g² across lobes and λ_g² + λ_l²
  within a lobe (defaults 0.36 and 0.61);
* an AD atrophy pattern: AD means shift down by ``effect_size`` SDs in medial temporal regions, half
  that in the rest of the temporal and the parietal lobes, plus a global shift of
  ``global_effect`` SDs (the AD group is also a little more variable, SD x ``ad_sd_ratio``).

Defaults give a hard-margin linear SVM 10-fold accuracy of roughly 0.80-0.90 at 25-125 per class
(see the chapter). Everything is deterministic given ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from medeval.data.seeding import as_generator

__all__ = ["ADNI_N_HC", "ADNI_N_AD", "LOBES", "AdniPhantomModel", "AdniPool", "adni_phantom_model", "generate_adni_pool"]

ADNI_N_HC = 370
ADNI_N_AD = 252
LOBES = ("frontal", "temporal", "parietal", "occipital", "cingulate_insula", "subcortical_central")
# share of the regions per lobe (roughly that of the Hammers 83-region atlas' cerebral regions)
_LOBE_SHARE = np.array([0.28, 0.26, 0.14, 0.10, 0.12, 0.10])


@dataclass(frozen=True)
class AdniPhantomModel:
    """The generating distribution: HC ~ N(μ, Σ), AD ~ N(μ - Δ, ad_sd_ratio² Σ)."""

    region_names: tuple[str, ...]
    lobe: np.ndarray = field(repr=False)  # (d,) lobe index of each region
    medial_temporal: np.ndarray = field(repr=False)  # (d,) bool
    mean_hc: np.ndarray = field(repr=False)  # (d,)
    mean_ad: np.ndarray = field(repr=False)  # (d,)
    sd: np.ndarray = field(repr=False)  # (d,) HC standard deviations
    loadings: np.ndarray = field(repr=False)  # (d, 1 + n_lobes) factor loadings (in SD units)
    unique_sd: np.ndarray = field(repr=False)  # (d,) idiosyncratic SD (in SD units)
    ad_sd_ratio: float = 1.1

    @property
    def n_features(self) -> int:
        return len(self.region_names)

    def covariance(self, group: str = "HC") -> np.ndarray:
        """Σ for "HC" (or ad_sd_ratio² Σ for "AD") in feature units."""
        corr = self.loadings @ self.loadings.T + np.diag(self.unique_sd**2)
        cov = corr * np.outer(self.sd, self.sd)
        return cov * (self.ad_sd_ratio**2 if group == "AD" else 1.0)

    def _draw(self, n: int, mean: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
        factors = rng.standard_normal((n, self.loadings.shape[1]))
        noise = rng.standard_normal((n, self.n_features))
        z = factors @ self.loadings.T + noise * self.unique_sd
        return mean + scale * z * self.sd

    def sample(self, n_hc: int, n_ad: int, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """Fresh subjects: features (n_hc + n_ad, d) (GM/ICV fractions) and labels (1 = AD), HC first."""
        if n_hc < 0 or n_ad < 0:
            raise ValueError(f"n_hc and n_ad must be >= 0, got {n_hc} and {n_ad}")
        rng = as_generator(rng, name="rng")
        hc = self._draw(n_hc, self.mean_hc, 1.0, rng)
        ad = self._draw(n_ad, self.mean_ad, self.ad_sd_ratio, rng)
        labels = np.r_[np.zeros(n_hc, dtype=np.int64), np.ones(n_ad, dtype=np.int64)]
        return np.vstack([hc, ad]), labels

    def standardize(self, features) -> np.ndarray:
        """z-score with the HC population mean and SD (a fixed map, identical for pools and fresh draws)."""
        return (np.asarray(features, dtype=float) - self.mean_hc) / self.sd


@dataclass(frozen=True)
class AdniPool:
    """A finite ADNI-like sample (default 370 HC / 252 AD) and the model it was drawn from."""

    features: np.ndarray
    labels: np.ndarray
    model: AdniPhantomModel
    seed: int

    @property
    def region_names(self) -> tuple[str, ...]:
        return self.model.region_names


def adni_phantom_model(
    n_features: int = 80,
    *,
    effect_size: float = 0.9,
    global_effect: float = 0.2,
    global_loading: float = 0.6,
    lobar_loading: float = 0.5,
    ad_sd_ratio: float = 1.1,
    seed: int = 0,
) -> AdniPhantomModel:
    """Build the generating model (see the module docstring for the meaning of each argument)."""
    if not 6 <= n_features <= 200:
        raise ValueError(f"n_features must be in [6, 200], got {n_features}")
    if global_loading < 0 or lobar_loading < 0 or global_loading**2 + lobar_loading**2 >= 1:
        raise ValueError("global_loading and lobar_loading must be >= 0 with global_loading² + lobar_loading² < 1")
    if effect_size < 0 or ad_sd_ratio <= 0:
        raise ValueError("effect_size must be >= 0 and ad_sd_ratio > 0")
    rng = np.random.default_rng(seed)
    counts = np.maximum(1, np.round(_LOBE_SHARE * n_features).astype(int))
    counts[0] += n_features - counts.sum()
    lobe = np.repeat(np.arange(len(LOBES)), counts)
    names, medial = [], np.zeros(n_features, dtype=bool)
    for k in range(n_features):
        within = int(np.sum(lobe[:k] == lobe[k]))
        names.append(f"{LOBES[lobe[k]]}_{within + 1:02d}_{'L' if within % 2 == 0 else 'R'}")
    temporal = np.flatnonzero(lobe == LOBES.index("temporal"))
    medial[temporal[: max(2, len(temporal) // 3)]] = True  # hippocampus, amygdala, parahippocampal, ...
    mean_hc = rng.uniform(0.002, 0.012, n_features)
    sd = 0.10 * mean_hc
    loadings = np.zeros((n_features, 1 + len(LOBES)))
    loadings[:, 0] = global_loading
    loadings[np.arange(n_features), 1 + lobe] = lobar_loading
    unique_sd = np.full(n_features, np.sqrt(1 - global_loading**2 - lobar_loading**2))
    shift = np.where(medial, effect_size, 0.0)
    shift += np.where(~medial & np.isin(lobe, [LOBES.index("temporal"), LOBES.index("parietal")]), effect_size / 2, 0.0)
    shift += global_effect
    mean_ad = mean_hc - shift * sd
    return AdniPhantomModel(
        tuple(names), lobe, medial, mean_hc, mean_ad, sd, loadings, unique_sd, float(ad_sd_ratio)
    )


def generate_adni_pool(
    n_hc: int = ADNI_N_HC, n_ad: int = ADNI_N_AD, *, seed: int = 0, model: AdniPhantomModel | None = None, **model_kwargs
) -> AdniPool:
    """A finite pool drawn from :func:`adni_phantom_model` (model seed ``seed``, subjects seed ``seed + 1``)."""
    model = model if model is not None else adni_phantom_model(seed=seed, **model_kwargs)
    features, labels = model.sample(n_hc, n_ad, np.random.default_rng([seed, 1]))
    return AdniPool(features, labels, model, seed)
