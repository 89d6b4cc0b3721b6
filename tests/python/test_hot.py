"""The function tunekit.autotune returns (tunekit._core.HotFunction): it looks like the decorated
function, binds as a method, and its resolved calls pass the caller's arguments and the winner's
fields through unchanged, whatever their number."""

from __future__ import annotations

import gc
import inspect
import weakref

import pytest

import tunekit
from conftest import CostMeasurer

SPACE = [{"BLOCK": b} for b in (256, 512, 1024)]


def by_block(cfg):
    return {256: 3.0, 512: 1.0, 1024: 2.0}[cfg["BLOCK"]]


def scale(x, alpha=1.0, *, BLOCK):
    """Scales x."""
    return (x, alpha, BLOCK)


def make(fn=scale, key_fn=lambda x, *a, **k: (x,), space=SPACE):
    return tunekit.autotune(space, key_fn, measurer=CostMeasurer(by_block))(fn)


def test_it_carries_the_functions_identity_and_signature():
    tuned = make()
    assert tuned.__name__ == "scale" and tuned.__doc__ == "Scales x."
    assert tuned.__wrapped__ is scale and tuned.fn is scale
    assert str(inspect.signature(tuned)) == "(x, alpha=1.0, *, BLOCK)"
    assert isinstance(tuned.autotuner, tunekit.AutoTuner)


def test_resolved_calls_pass_positional_arguments_and_fields_through():
    tuned = make()
    assert tuned(1, 2.0) == (1, 2.0, 512)
    assert tuned(1, 2.0) == (1, 2.0, 512) and tuned.last_source() == "memory"
    assert tuned(1) == (1, 1.0, 512)
    assert tuned(1, alpha=3.0) == (1, 3.0, 512)  # keyword arguments take the slow path


def test_many_arguments_and_fields():
    names = [f"F{i}" for i in range(20)]
    space = [{n: i + j for j, n in enumerate(names)} for i in range(2)]

    def wide(*args, **fields):
        return args, fields

    tuned = tunekit.autotune(space, lambda *a: (len(a),),
                             measurer=CostMeasurer(lambda c: 1.0 + c["F0"]))(wide)
    args = tuple(range(30))
    tuned(*args)
    out_args, out_fields = tuned(*args)
    assert out_args == args and out_fields == space[0]


def test_errors_of_key_fn_and_of_the_function_propagate():
    def boom_key(x, *a):
        raise KeyError("no key")

    with pytest.raises(KeyError, match="no key"):
        make(key_fn=boom_key)(1)

    def fails_later(x, *, BLOCK):
        if x == "late":
            raise RuntimeError("late failure")
        return BLOCK

    tuned = make(fn=fails_later, key_fn=lambda x: (1,))
    assert tuned(0) == 512
    with pytest.raises(RuntimeError, match="late failure"):
        tuned("late")


def test_a_list_key_works_through_the_core_on_every_call():
    tuned = make(key_fn=lambda x, *a: [x])
    assert tuned(1) == (1, 1.0, 512) and tuned.last_source() == "search"
    assert tuned(1) == (1, 1.0, 512) and tuned.last_source() == "memory"


def test_it_binds_as_a_method():
    class Layer:
        def __init__(self, k):
            self.k = k

        @tunekit.autotune(SPACE, lambda self, x: (self.k, x), measurer=CostMeasurer(by_block))
        def forward(self, x, *, BLOCK):
            return (self.k, x, BLOCK)

    layer = Layer(3)
    assert layer.forward(4) == (3, 4, 512)
    assert layer.forward(4) == (3, 4, 512)
    assert Layer.forward(layer, 4) == (3, 4, 512)


def test_it_is_collected_with_its_tuner():
    tuned = make()
    tuned(1)
    ref = weakref.ref(tuned)
    del tuned
    gc.collect()
    assert ref() is None
