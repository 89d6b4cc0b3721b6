"""Arguments the tuned function writes: restore_value, reset_to_zero, pre_hook and post_hook. The
caller's buffers after the first call equal what one call with the winner makes."""

from __future__ import annotations

import pytest

import tunekit
from conftest import CostMeasurer

try:
    import numpy as np
except ImportError:
    np = None

needs_numpy = pytest.mark.skipif(np is None, reason="numpy is not installed")

SPACE = [{"BLOCK": b} for b in (256, 512, 1024)]


def by_block(cfg):
    return {256: 3.0, 512: 1.0, 1024: 2.0}[cfg["BLOCK"]]


class UntimedResetMeasurer(CostMeasurer):
    """Calls request.reset before each run, as tunekit's own measurers do."""

    def measure(self, run, request):
        self.measured.append(dict(request.config))
        self.requests.append(request)
        for _ in range(request.warmup + request.runs):
            if request.reset is not None:
                request.reset()
            run()
        return [float(self.cost(request.config))] * request.runs


@needs_numpy
@pytest.mark.parametrize("measurer", [CostMeasurer, UntimedResetMeasurer])
def test_numpy_buffers_after_the_first_call_equal_one_call_with_the_winner(measurer):
    def axpy_inplace(x, acc, *, BLOCK):
        x *= 2.0                 # writes its input
        acc += x * BLOCK         # accumulates into its output

    m = measurer(by_block)
    tuned = tunekit.autotune(SPACE, lambda x, acc: (x.shape[0],), measurer=m,
                             restore_value=["x"], reset_to_zero=["acc"])(axpy_inplace)
    x = np.arange(4, dtype=np.float64)
    acc = np.full(4, 7.0)
    tuned(x, acc)
    assert len(m.measured) == 3
    # One call with BLOCK=512 on (x, zeroed acc): x doubled once, acc = 2x * 512.
    np.testing.assert_array_equal(x, np.arange(4) * 2.0)
    np.testing.assert_array_equal(acc, np.arange(4) * 2.0 * 512)
    # A resolved call resets nothing: it is the caller's call.
    tuned(x, acc)
    np.testing.assert_array_equal(x, np.arange(4) * 4.0)


def test_lists_and_bytearrays_are_restored_and_zeroed():
    def fill(out, counter, *, BLOCK):
        out.append(BLOCK)
        counter[0] += 1

    m = CostMeasurer(by_block)
    tuned = tunekit.autotune(SPACE, lambda out, counter: (len(out),), measurer=m,
                             restore_value=["out"], reset_to_zero=["counter"])(fill)
    out, counter = [1, 2], bytearray(b"\x05")
    tuned(out, counter)
    assert out == [1, 2, 512] and counter == bytearray(b"\x01")


def test_without_restore_value_the_search_runs_pile_up():
    def fill(out, *, BLOCK):
        out.append(BLOCK)

    tuned = tunekit.autotune(SPACE, lambda out: (0,), measurer=CostMeasurer(by_block))(fill)
    out: list[int] = []
    tuned(out)
    assert len(out) == 3 * 15 + 1


def test_hooks_run_around_every_candidate_run_with_the_arguments_and_the_config():
    events = []

    def fn(n, buf, *, BLOCK):
        if BLOCK == 1024:
            raise RuntimeError("too big")
        buf.append(BLOCK)

    def pre(nargs):
        events.append(("pre", nargs["BLOCK"], nargs["n"]))

    def post(nargs, exception):
        events.append(("post", nargs["BLOCK"], type(exception).__name__ if exception else None))

    m = CostMeasurer(by_block)
    tuned = tunekit.autotune(SPACE, lambda n, buf: (n,), measurer=m, restore_value=["buf"],
                             pre_hook=pre, post_hook=post)(fn)
    buf: list[int] = []
    tuned(3, buf)
    assert buf == [512]
    runs = [e for e in events if e[0] == "post"]
    assert ("post", 1024, "RuntimeError") in runs
    assert ("post", 512, None) in runs
    # Every run is preceded by a pre_hook of the same config.
    for i, e in enumerate(events):
        if e[0] == "post":
            assert events[i - 1][:2] == ("pre", e[1])
    count = len(events)
    tuned(3, buf)  # resolved: no hooks
    assert len(events) == count


def test_none_arguments_are_skipped():
    def fn(x, out=None, *, BLOCK):
        return BLOCK

    tuned = tunekit.autotune(SPACE, lambda x, out=None: (x,), measurer=CostMeasurer(by_block),
                             restore_value=["out"], reset_to_zero=["out"])(fn)
    assert tuned(1) == 512


def test_a_name_that_is_not_a_parameter_is_refused_at_decoration():
    def fn(x, *, BLOCK):
        return BLOCK

    with pytest.raises(ValueError, match="restore_value names 'y', which is not a parameter"):
        tunekit.autotune(SPACE, lambda x: (x,), restore_value=["y"])(fn)
    with pytest.raises(TypeError, match="list of argument names"):
        tunekit.autotune(SPACE, lambda x: (x,), reset_to_zero="x")(fn)


def test_a_value_that_cannot_be_copied_fails_the_candidates_with_its_reason():
    def fn(x, *, BLOCK):
        return BLOCK

    tuned = tunekit.autotune(SPACE, lambda x: (1,), measurer=CostMeasurer(by_block),
                             restore_value=["x"])(fn)
    with pytest.raises(tunekit.NoValidConfigError, match="no clone\\(\\) or copy\\(\\) method"):
        tuned(object())
