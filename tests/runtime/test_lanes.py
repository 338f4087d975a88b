"""A book's chapters in two lanes (:mod:`medeval.runtime.lanes`): balanced on the recorded times, the same results
as one lane, and a chapter the second lane cannot run fails as it would in the first."""

import pytest

from medeval.runtime import calibration, lanes
from medeval.runtime.params import ParameterError

#: what a run records about itself rather than about the chapter: it differs between two runs of the same code
PER_RUN = ("provenance", "wall_time_s", "peak_memory_bytes", "resource_estimate")


def test_the_lanes_are_balanced_on_the_recorded_times_longest_first(monkeypatch):
    seconds = {"a": 400, "b": 230, "c": 90, "d": 50, "e": 30, "f": 10}
    monkeypatch.setattr(calibration, "recorded_timings",
                        lambda c: {"default": {"wall_time_s": seconds[c]}} if c in seconds else {})
    first, second = lanes.split_lanes(["b", "a", "c", "new", "d", "e", "f"], "default")
    # a (400) | b, c, d, e (230 + 90 + 50 + 30 = 400); f joins the first (ties go there), the unmeasured one the other
    assert first == ["a", "f"]
    assert second == ["b", "c", "new", "d", "e"]


def test_lanes_other_than_one_or_two_are_refused_before_any_run():
    with pytest.raises(ValueError, match="lanes must be 1 or 2"):
        lanes.execute_chapters(["A2-rerun"], "smoke", lanes=3)


@pytest.mark.slow
def test_two_lanes_compute_what_one_lane_computes(run_chapter_smoke):
    ids = ["A1-data", "A2-rerun"]
    one = {c: run_chapter_smoke(c) for c in ids}
    two = lanes.execute_chapters(ids, "smoke", force=True, lanes=2)  # both executed anew, one in each lane
    assert [r.chapter for r in two] == ids
    for r in two:
        assert not r.cached or r.meta.get("run_id") != one[r.chapter].meta.get("run_id")
        mine = {k: v for k, v in r.results.items() if k not in PER_RUN}
        assert mine == {k: v for k, v in one[r.chapter].results.items() if k not in PER_RUN}


def test_a_chapter_the_second_lane_cannot_run_fails_as_in_one_lane(run_chapter_smoke):
    run_chapter_smoke("A2-rerun")  # cached: the first lane's part costs nothing
    with pytest.raises(ParameterError, match="no-such-chapter"):
        lanes.execute_chapters(["A2-rerun", "no-such-chapter"], "smoke", lanes=2)
