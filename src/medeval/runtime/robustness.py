"""Every verdict's stability across seeds: ``medeval robustness CHAPTER --seeds K``.

A chapter is re-run under K master seeds (the profile's own seed and the K − 1 after it; every run is kept in the
run store like any other). Per claim the record says how many seeds gave each verdict. A row whose verdict is not
the same under at least :data:`AGREEMENT_NEEDED` of 5 seeds (the same share for another K) is *seed-sensitive*:
the Scorecard never counts it as [Re] or [¬Re], and its page says so.

The record keeps each row's rule text. A row whose rule has changed since, or whose verdict at the record's own
seed differs from the page's, is *stale*: its page says "not re-measured", and it counts as its verdict,
unconfirmed across seeds, until ``medeval robustness`` is run again.

The runs go through the grid executor (:func:`medeval.runtime.grid.run_grid`), one whole chapter per grid entry, so
a Dask cluster (``--scheduler``) can take them and an interrupted record resumes. ``--update`` writes the
committed record ``results/robustness/<profile>.json``, on purpose; otherwise it goes to the run store.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from medeval.runtime.paths import atomic_write_text, project_root, runs_dir

#: seeds out of 5 that must agree for a directional verdict to count
AGREEMENT_NEEDED = 4
ROBUSTNESS_VERSION = 1


def record_file(profile: str, *, committed: bool = True) -> Path:
    if committed:
        return project_root() / "results" / "robustness" / f"{profile}.json"
    return runs_dir() / "robustness" / f"{profile}.json"


def required_agreement(k: int) -> int:
    """Seeds of ``k`` that must agree: 4 of 5, and the same share (rounded up) for another ``k``."""
    return max(1, math.ceil(AGREEMENT_NEEDED / 5 * k))


def seed_verdicts(chapter_id: str, profile: str, seed: int) -> dict[str, Any]:
    """One grid entry: run (or reuse) the chapter with master seed ``seed``; its verdicts, the run's id, commit."""
    from medeval.runtime.execution import run_chapter

    res = run_chapter(chapter_id, profile, {"seed": seed}, log=lambda msg: None)
    prov = res.results.get("provenance", {})
    return {"seed": seed, "run_id": res.meta.get("run_id") or res.notebook.parent.name,
            "git_commit": str(prov.get("git_commit", "?")), "numerics": prov.get("numerics", "?"),
            "device": prov.get("device", "?"),
            "verdicts": {r["id"]: r["verdict"] for r in res.results.get("paper_vs_us") or []},
            "rules": {r["id"]: r.get("rule", "") for r in res.results.get("paper_vs_us") or []}}


def summarise(per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    """Per claim: the verdict of each seed, the counts, the modal verdict and whether it is seed-sensitive."""
    k = len(per_seed)
    need = required_agreement(k)
    ids: list[str] = []
    for entry in per_seed:
        ids += [c for c in entry["verdicts"] if c not in ids]
    claims = {}
    for cid in ids:
        verdicts = {str(e["seed"]): e["verdicts"].get(cid, "absent") for e in per_seed}
        counts: dict[str, int] = {}
        for v in verdicts.values():
            counts[v] = counts.get(v, 0) + 1
        modal, top = max(counts.items(), key=lambda kv: (kv[1], kv[0] == verdicts[str(per_seed[0]["seed"])]))
        claims[cid] = {"verdicts": verdicts, "counts": counts, "modal": modal, "agreement": f"{top}/{k}",
                       "seed_sensitive": top < need}
        rules = {e.get("rules", {}).get(cid) for e in per_seed} - {None}
        if len(rules) == 1:
            claims[cid]["rule"] = rules.pop()
    return {"seeds": [e["seed"] for e in per_seed], "required_agreement": f"{need}/{k}", "claims": claims,
            "runs": {str(e["seed"]): e["run_id"] for e in per_seed},
            "git_commit": per_seed[0]["git_commit"] if per_seed else "?",
            "numerics": per_seed[0]["numerics"] if per_seed else "?",
            "device": per_seed[0]["device"] if per_seed else "?"}


def robustness(chapter_ids: list[str], profile: str, seeds: int, *, scheduler: str | None = None,
               max_workers: int | None = 1, update: bool = False, log=print) -> Path:
    """Run each chapter under ``seeds`` master seeds and write the record (per chapter, merged into the file)."""
    from medeval.runtime.grid import run_grid
    from medeval.runtime.params import ParameterError, chapters, resolve_params

    registry = chapters()
    unknown = [c for c in chapter_ids if c not in registry]
    if unknown:
        raise ParameterError(f"unknown chapter(s) {unknown}; known: {', '.join(registry)}")
    if not 2 <= seeds <= 100:
        raise ParameterError(f"--seeds must be between 2 and 100, got {seeds}")
    path = record_file(profile, committed=update)
    data = json.loads(path.read_text()) if path.exists() else {}
    data.update(version=ROBUSTNESS_VERSION, profile=profile)
    data.setdefault("chapters", {})
    for cid in chapter_ids:
        base = resolve_params(cid, profile).seed
        for s in range(base, base + seeds):  # refused before any compute when out of the seed's range
            resolve_params(cid, profile, {"seed": s})
        grid = [{"chapter_id": cid, "profile": profile, "seed": s} for s in range(base, base + seeds)]
        log(f"[medeval] robustness {cid} ({profile}): seeds {base}..{base + seeds - 1}")
        cache = runs_dir() / "grid-cache" / "robustness" / profile / cid
        per_seed = run_grid(seed_verdicts, grid, cache_dir=cache, scheduler=scheduler, max_workers=max_workers,
                            desc=f"{cid} seeds")
        summary = summarise(per_seed)
        data["chapters"][cid] = summary
        sensitive = [c for c, v in summary["claims"].items() if v["seed_sensitive"]]
        log(f"[medeval] robustness {cid}: {len(summary['claims'])} claims, {len(sensitive)} seed-sensitive"
            + (f" ({', '.join(sensitive)})" if sensitive else ""))
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def committed_record(profile: str) -> dict[str, Any]:
    path = record_file(profile)
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return {}


def chapter_record_digest(chapter_id: str, profile: str) -> str:
    """A digest of the chapter's entry in the committed record (part of the chapter's cache key: its page shows it)."""
    import hashlib

    entry = committed_record(profile).get("chapters", {}).get(chapter_id)
    return hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()


def agreement(chapter_id: str, profile: str, claim_id: str, verdict: str, *, rule: str | None = None,
              seed: int | None = None) -> dict[str, Any] | None:
    """The committed record's view of one row: ``{"text": "[Re] 5/5 seeds", "seed_sensitive": False, ...}``.

    ``None`` when the record does not cover the row. When it covers it under another rule (the record keeps each
    row's rule text), or its run at this ``seed`` gave another verdict than the row shows, the record is *stale*
    for the row: ``{"text": "not re-measured since the rule changed", "stale": True}``, and the row counts as its
    own verdict, unconfirmed."""
    entry = committed_record(profile).get("chapters", {}).get(chapter_id)
    if not entry or claim_id not in entry.get("claims", {}):
        return None
    c = entry["claims"][claim_id]
    k = len(entry.get("seeds", []))
    if rule is not None and "rule" in c and c["rule"] != rule:
        return {"text": "not re-measured since the rule changed", "seed_sensitive": False, "stale": True,
                "same": 0, "k": 0}
    if seed is not None and c["verdicts"].get(str(seed), verdict) != verdict:
        return {"text": f"not re-measured: the record's run at seed {seed} gave {c['verdicts'][str(seed)]}",
                "seed_sensitive": False, "stale": True, "same": 0, "k": 0}
    same = c["counts"].get(verdict, 0)
    # seed-sensitive when the seeds disagree, and also when they agree on another verdict than the page's directional
    # one ([Re] at this seed, [~] at the 4 others): what the Scorecard counts (:func:`counted_verdict`)
    if c["seed_sensitive"] or (verdict in ("[Re]", "[¬Re]") and same < required_agreement(k)):
        parts = ", ".join(f"{v} {n}/{k}" for v, n in sorted(c["counts"].items(), key=lambda kv: -kv[1]))
        return {"text": f"seed-sensitive: {parts}", "seed_sensitive": True, "same": same, "k": k}
    return {"text": f"{c['modal']} {c['agreement']} seeds", "seed_sensitive": False, "same": same, "k": k}


def counted_verdict(chapter_id: str, profile: str, claim_id: str, verdict: str, *, rule: str | None = None,
                    seed: int | None = None) -> str:
    """What the Scorecard counts a row as: ``seed-sensitive`` for a directional verdict ([Re], [¬Re]) that fewer
    than the required seeds share, else the verdict itself (also where the record is stale or silent)."""
    if verdict not in ("[Re]", "[¬Re]"):
        return verdict
    a = agreement(chapter_id, profile, claim_id, verdict, rule=rule, seed=seed)
    return "seed-sensitive" if a is not None and a["seed_sensitive"] else verdict


def row_agreement(chapter_id: str, profile: str, row: dict[str, Any], seed: int | None) -> dict[str, Any] | None:
    """:func:`agreement` for a recorded paper-versus-us row."""
    return agreement(chapter_id, profile, row.get("id", ""), row.get("verdict", ""), rule=row.get("rule"), seed=seed)
