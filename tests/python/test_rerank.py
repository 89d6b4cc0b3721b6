"""The re-rank of the leaders and the spread from Python (docs/search.md): a measurer whose first
timing of a loser is lucky, so that only the re-rank finds the real winner; the re-rank recorded
in the entry; `rerank=False` and `tunekit.Rerank` settings; and `nearest_over`, which serves only
keys whose other values are equal."""

from __future__ import annotations

import json

import pytest

import tunekit

SPACE = [{"algo": a} for a in ("A", "B", "C")]


class Lucky:
    """A is 0.98 ms, B 1.00 ms but 0.97 the first time it is measured, C 2.0 ms; runs alternate
    by 1e-4 around that, so there is some noise."""

    name = "scripted"

    def __init__(self):
        self.calls = {"A": 0, "B": 0, "C": 0}

    def measure(self, run, request):
        algo = request.config["algo"]
        first = self.calls[algo] == 0
        self.calls[algo] += 1
        for _ in range(request.warmup):
            run()
        base = {"A": 0.98, "B": 0.97 if first else 1.0, "C": 2.0}[algo]
        out = []
        for i in range(request.runs):
            run()
            out.append(base + (1e-4 if i % 2 == 0 else -1e-4))
        return out


def make(**kw):
    m = Lucky()

    @tunekit.autotune(SPACE, lambda n: (n,), measurer=m, warmup=1, runs=4, **kw)
    def pick(n, *, algo):
        return algo

    return pick, m


def test_a_lucky_loser_does_not_win_and_the_re_rank_is_in_the_entry():
    pick, m = make()
    assert pick(1) == "A"
    assert m.calls == {"A": 4, "B": 4, "C": 1}  # the search, then 3 rounds of the 2 leaders
    entry = json.loads(open(pick.cache_path(1)).read())
    rr = entry["rerank"]
    assert rr["leaders"][0]["index"] == 1 and rr["leaders"][1]["index"] == 0
    assert rr["winner_before"] == 1 and rr["rounds"] == 3 and rr["runs"] == 4
    assert rr["leaders"][1]["score_ms"] == pytest.approx(0.98, abs=1e-4)
    assert rr["leaders"][1]["stats"]["count"] == 12
    assert entry["candidates"][0]["stats"]["count"] == 4
    assert entry["candidates"][0]["stats"]["outliers"] == 0
    # The core's reader hands it to Python too.
    read = tunekit.read_entry(pick.cache_path(1))
    assert read["record"]["rerank"]["winner_before"] == 1
    assert read["record"]["rerank"]["leaders"][1]["stats"]["count"] == 12


def test_rerank_false_keeps_the_search_s_pick_and_settings_apply():
    pick, m = make(rerank=False)
    assert pick(1) == "B"
    assert m.calls == {"A": 1, "B": 1, "C": 1}
    pick2, m2 = make(rerank=tunekit.Rerank(rounds=1, runs=2), name="pick2")
    assert pick2(1) == "A"
    assert m2.calls == {"A": 2, "B": 2, "C": 1}
    entry = json.loads(open(pick2.cache_path(1)).read())
    assert entry["rerank"]["runs"] == 2 and entry["rerank"]["rounds"] == 1


@pytest.mark.parametrize("bad, message", [
    (dict(band=-0.1), "band must be a number >= 0"),
    (dict(rounds=-1), "rounds must be an int >= 0"),
    (dict(leaders=True), "leaders must be an int >= 0"),
])
def test_bad_rerank_settings_are_clear_errors(bad, message):
    with pytest.raises(ValueError, match=message):
        tunekit.Rerank(**bad)
    with pytest.raises(TypeError, match="rerank must be a tunekit.Rerank or a bool"):
        make(rerank="yes")


class KeyCost:
    name = "simulated"

    def measure(self, run, request):
        run()
        m = request.key[0]
        return [1.0 + abs(request.config["BLOCK"] - m) / 100.0] * request.runs


def test_nearest_over_m_serves_only_keys_with_the_same_other_values():
    @tunekit.autotune([{"BLOCK": b} for b in (256, 2048)], lambda m, e: (m, e),
                      measurer=KeyCost(), key_names=["M", "E"], on_miss="nearest",
                      nearest_over=["M"])
    def moe(m, e, *, BLOCK):
        return BLOCK

    assert moe(256, 16) == 256
    assert moe(2048, 8) == 2048
    assert moe(300, 8) == 2048  # over both values (256, 16) is nearer; over M only E = 8 counts
    assert moe.last_source() == "nearest"
    moe(300, 4)  # no key with E = 4: it tunes
    assert moe.last_source() == "search"
    with pytest.raises(ValueError, match="nearest_over names the key value 'N'"):
        tunekit.autotune([{"BLOCK": 1}], lambda m: (m,), key_names=["M"], nearest_over=["N"])(
            lambda m, *, BLOCK: BLOCK)
