"""Verdicts across master seeds: counts, agreement, seed-sensitive rows and what the Scorecard counts."""

from __future__ import annotations

import json

import pytest

from medeval.runtime import robustness


def _entry(seed, verdicts):
    return {"seed": seed, "run_id": f"r{seed}", "git_commit": "abc", "numerics": "pinned", "device": "CPU: x",
            "verdicts": verdicts}


def test_agreement_counts_and_seed_sensitivity():
    per_seed = [_entry(0, {"a": "[Re]", "b": "[Re]", "c": "[~]"}),
                _entry(1, {"a": "[Re]", "b": "[~]", "c": "[~]"}),
                _entry(2, {"a": "[Re]", "b": "[Re]", "c": "[~]"}),
                _entry(3, {"a": "[Re]", "b": "[~]", "c": "[~]"}),
                _entry(4, {"a": "[¬Re]", "b": "[Re]", "c": "[~]"})]
    s = robustness.summarise(per_seed)
    assert s["required_agreement"] == "4/5"
    assert s["claims"]["a"]["agreement"] == "4/5" and not s["claims"]["a"]["seed_sensitive"]
    assert s["claims"]["b"]["counts"] == {"[Re]": 3, "[~]": 2} and s["claims"]["b"]["seed_sensitive"]
    assert s["claims"]["c"]["agreement"] == "5/5"
    assert robustness.required_agreement(5) == 4 and robustness.required_agreement(10) == 8


def test_the_scorecard_counts_a_knife_edge_verdict_as_seed_sensitive(tmp_path, monkeypatch):
    per_seed = [_entry(s, {"a": v, "b": "[Re]"}) for s, v in enumerate(["[Re]", "[~]", "[Re]", "[~]", "[Re]"])]
    record = {"version": 1, "profile": "smoke", "chapters": {"01-mil-stability": robustness.summarise(per_seed)}}
    path = tmp_path / "smoke.json"
    path.write_text(json.dumps(record))
    monkeypatch.setattr(robustness, "record_file", lambda profile, committed=True: path)
    assert robustness.counted_verdict("01-mil-stability", "smoke", "a", "[Re]") == "seed-sensitive"
    assert robustness.counted_verdict("01-mil-stability", "smoke", "b", "[Re]") == "[Re]"
    assert robustness.counted_verdict("01-mil-stability", "smoke", "a", "[~]") == "[~]"  # never upgraded
    assert robustness.counted_verdict("01-mil-stability", "smoke", "zz", "[Re]") == "[Re]"  # not measured
    assert robustness.agreement("01-mil-stability", "smoke", "b", "[Re]")["text"] == "[Re] 5/5 seeds"
    assert robustness.agreement("01-mil-stability", "smoke", "a", "[Re]")["text"] == \
        "seed-sensitive: [Re] 3/5, [~] 2/5"

    from medeval.runtime import book
    from medeval.runtime.execution import ExecutionResult

    rows = [{"id": i, "verdict": "[Re]", "basis": "phantom", "claim": i, "scale": "smoke", "n": "1", "test": "t",
             "reason": ""} for i in ("a", "b")]
    res = ExecutionResult("01-mil-stability", "smoke", tmp_path / "x.ipynb", {"paper_vs_us": rows},
                          {"title": "T", "part": "chapters"}, True)
    totals = book.scorecard_totals([res])
    assert totals["verdict"]["[Re]"] == 1 and totals["verdict"]["seed-sensitive"] == 1
    assert "seed-sensitive: [Re] 3/5, [~] 2/5" in book.scorecard_markdown([res])


def test_bad_requests_are_refused_before_any_run(tmp_path, monkeypatch):
    from medeval.runtime.params import ParameterError

    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path))
    with pytest.raises(ParameterError, match="unknown chapter"):
        robustness.robustness(["99-nope"], "smoke", 5)
    with pytest.raises(ParameterError, match="--seeds must be between 2 and 100"):
        robustness.robustness(["A2-rerun"], "smoke", 1)
    assert not any(tmp_path.rglob("meta.json"))


@pytest.mark.slow
def test_a_chapter_runs_under_each_seed_and_every_run_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path))
    path = robustness.robustness(["05-multilabel"], "smoke", 2, log=lambda m: None)
    assert path == tmp_path / "robustness" / "smoke.json"
    entry = json.loads(path.read_text())["chapters"]["05-multilabel"]
    assert entry["seeds"] == [0, 1] and set(entry["runs"]) == {"0", "1"}
    assert entry["claims"] and all(sum(c["counts"].values()) == 2 for c in entry["claims"].values())
    kept = {p.parent.name for p in (tmp_path / "smoke" / "05-multilabel").glob("*/meta.json")}
    assert set(entry["runs"].values()) <= kept


def test_a_record_made_under_another_rule_or_verdict_is_stale_not_evidence(tmp_path, monkeypatch):
    """A row whose rule text changed since the record, or whose verdict at the record's own seed differs, is not
    confirmed by the record: it shows 'not re-measured' and counts as its verdict, never as seed-agreement."""
    record = {"version": 1, "profile": "smoke", "chapters": {"01-mil-stability": {"seeds": [0, 1, 2, 3, 4], "claims": {
        "a": {"verdicts": {str(s): "[~]" for s in range(5)}, "counts": {"[~]": 5}, "modal": "[~]",
              "agreement": "5/5", "seed_sensitive": False, "rule": "old rule"},
        "b": {"verdicts": {"0": "[Re]", "1": "[Re]", "2": "[~]", "3": "[~]", "4": "[Re]"},
              "counts": {"[Re]": 3, "[~]": 2}, "modal": "[Re]", "agreement": "3/5", "seed_sensitive": True}}}}}
    monkeypatch.setattr(robustness, "committed_record", lambda profile: record)
    assert robustness.agreement("01-mil-stability", "smoke", "a", "[~]", rule="old rule", seed=0)["text"] == \
        "[~] 5/5 seeds"
    stale = robustness.agreement("01-mil-stability", "smoke", "a", "[Re]", rule="new rule", seed=0)
    assert stale["stale"] and "rule changed" in stale["text"]
    assert robustness.counted_verdict("01-mil-stability", "smoke", "a", "[Re]", rule="new rule", seed=0) == "[Re]"
    # the record's run at seed 2 gave [~]: a [Re] at seed 2 is not what the record measured
    other = robustness.agreement("01-mil-stability", "smoke", "b", "[Re]", seed=2)
    assert other["stale"] and "seed 2 gave [~]" in other["text"]
    assert robustness.counted_verdict("01-mil-stability", "smoke", "b", "[Re]", seed=0) == "seed-sensitive"
    # a record without rule texts is judged by the seed's verdict only
    assert robustness.agreement("01-mil-stability", "smoke", "b", "[Re]", rule="anything", seed=0)["seed_sensitive"]


def test_a_directional_verdict_the_other_seeds_do_not_share_is_marked_seed_sensitive_on_its_page(tmp_path,
                                                                                               monkeypatch):
    """[Re] at the page's seed and [~] at the 4 others: the seeds agree (4/5, so the record's own flag is off), but
    not on the page's verdict. Its row and the Key findings call it seed-sensitive, as the Scorecard counts it; a
    [~] row the other seeds would call [Re] is left as it is (never upgraded)."""
    per_seed = [_entry(s, {"a": v, "c": w}) for s, (v, w) in
                enumerate([("[Re]", "[~]"), ("[~]", "[Re]"), ("[~]", "[Re]"), ("[~]", "[Re]"), ("[~]", "[Re]")])]
    record = {"version": 1, "profile": "smoke", "chapters": {"01-mil-stability": robustness.summarise(per_seed)}}
    assert not record["chapters"]["01-mil-stability"]["claims"]["a"]["seed_sensitive"]
    path = tmp_path / "smoke.json"
    path.write_text(json.dumps(record))
    monkeypatch.setattr(robustness, "record_file", lambda profile, committed=True: path)
    shown = robustness.agreement("01-mil-stability", "smoke", "a", "[Re]", seed=0)
    assert shown["seed_sensitive"] and shown["text"] == "seed-sensitive: [~] 4/5, [Re] 1/5"
    assert robustness.counted_verdict("01-mil-stability", "smoke", "a", "[Re]", seed=0) == "seed-sensitive"
    undecided = robustness.agreement("01-mil-stability", "smoke", "c", "[~]", seed=0)
    assert not undecided["seed_sensitive"] and undecided["text"] == "[Re] 4/5 seeds"
