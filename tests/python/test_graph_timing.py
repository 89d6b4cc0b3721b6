"""Graph timing (``timing="graph"``, ``CudaGraphMeasurer``): per-launch times from graph replays,
warmup and early stop counted in replays, the reset hook captured with each run, capture failures
that fail the candidate and leave nothing capturing. The first part runs anywhere, over a stand-in
for torch (no torch needed); the GPU part needs PyTorch and a CUDA device and skips itself
elsewhere."""

from __future__ import annotations

import contextlib
import json
import math
import sys
import types
import warnings

import pytest

import tunekit
from tunekit import _core
from tunekit._measure import CAPTURE_HINT, CudaGraphMeasurer


# ---- a stand-in for torch ----------------------------------------------------------------------

class FakeDevice:
    """The state of one fake GPU: a clock that eager work advances at once, captured work that
    replays advance, and a log of what was asked."""

    def __init__(self):
        self.clock = 0.0
        self.log = []
        self.capture = None  # the FakeGraph capturing, if any
        self.replays = 0
        self.graphs_reset = 0
        self.modes = []
        self.end_error = None  # what capture_end raises, if anything

    def launch(self, cost_ms, stream=None):
        """Work of ``cost_ms`` on ``stream`` (default: the current one)."""
        stream = stream or self.cuda.current_stream()
        if self.capture is not None and stream is self.capture.stream:
            self.capture.nodes.append(cost_ms)
        else:
            self.clock += cost_ms


class FakeStream:
    def __init__(self, dev, name):
        self.dev, self.name = dev, name

    def wait_stream(self, other):
        self.dev.log.append(("wait_stream", self.name, other.name))

    def synchronize(self):
        if self.dev.capture is not None and self.dev.capture.stream is self:
            self.dev.capture.invalidated = True
            raise RuntimeError("CUDA error: operation not permitted when stream is capturing")
        self.dev.log.append(("sync", self.name))


class FakeEvent:
    dev: FakeDevice

    def __init__(self, enable_timing=False):
        assert enable_timing
        self.t = None

    def record(self, stream):
        self.t = self.dev.clock

    def synchronize(self):
        self.dev.log.append(("event_sync",))

    def elapsed_time(self, other):
        return other.t - self.t


class FakeGraph:
    dev: FakeDevice

    def __init__(self):
        self.nodes = []
        self.stream = None
        self.invalidated = False
        self.ready = False

    def capture_begin(self, pool=None, capture_error_mode="global"):
        dev = self.dev
        assert dev.capture is None, "nested capture"
        self.stream = dev.cuda.current_stream()
        assert self.stream.name != "default", "torch refuses to capture on the default stream"
        dev.modes.append(capture_error_mode)
        dev.capture = self
        dev.log.append(("capture_begin", self.stream.name))

    def capture_end(self):
        dev = self.dev
        assert dev.capture is self
        dev.capture = None
        dev.log.append(("capture_end",))
        if self.invalidated:
            raise RuntimeError("CUDA error: operation failed due to a previous error during "
                               "capture")
        if dev.end_error is not None:
            raise dev.end_error
        if not self.nodes:
            warnings.warn("The CUDA Graph is empty. This usually means that the graph was "
                          "attempted to be captured on wrong device or stream.", UserWarning)
        self.ready = True

    def replay(self):
        assert self.ready
        self.dev.replays += 1
        self.dev.clock += sum(self.nodes)

    def reset(self):
        self.dev.graphs_reset += 1
        self.nodes = []
        self.ready = False


def fake_torch(available=True):
    """A module with what CudaGraphMeasurer and tunekit read of torch."""
    dev = FakeDevice()
    default = FakeStream(dev, "default")
    state = {"current": default, "streams": 0}

    @contextlib.contextmanager
    def stream_ctx(s):
        before = state["current"]
        state["current"] = s
        try:
            yield
        finally:
            state["current"] = before

    def new_stream():
        state["streams"] += 1
        return FakeStream(dev, f"side{state['streams']}")

    event = type("Event", (FakeEvent,), {"dev": dev})
    graph = type("CUDAGraph", (FakeGraph,), {"dev": dev})
    cuda = types.SimpleNamespace(
        is_available=lambda: available, current_device=lambda: 0,
        current_stream=lambda: state["current"], Stream=new_stream, stream=stream_ctx,
        Event=event, CUDAGraph=graph,
        is_current_stream_capturing=lambda: dev.capture is not None
        and dev.capture.stream is state["current"],
        synchronize=lambda: None, device_count=lambda: 1,
        get_device_properties=lambda i: types.SimpleNamespace(
            name="Fake GPU", major=9, minor=0, multi_processor_count=132))
    dev.cuda = cuda
    torch = types.ModuleType("torch")
    torch.__version__ = "0.0+fake"
    torch.version = types.SimpleNamespace(cuda="13.0")
    torch.cuda = cuda
    torch.dev = dev
    return torch


@pytest.fixture
def torch_stub(monkeypatch):
    t = fake_torch()
    monkeypatch.setitem(sys.modules, "torch", t)
    return t


def request(warmup=2, runs=5, best_ms=math.inf, reset=None):
    return types.SimpleNamespace(tuner="t", key=(1,), config={"x": 1}, index=0, count=1,
                                 best_ms=best_ms, warmup=warmup, runs=runs, reset=reset)


# ---- times, warmup, early stop -----------------------------------------------------------------

def test_each_sample_is_a_replay_divided_by_the_launches(torch_stub):
    dev = torch_stub.dev
    calls = []

    def run():
        calls.append(dev.capture is not None)
        dev.launch(0.003 if len(calls) % 2 else 0.005)

    samples = CudaGraphMeasurer(launches=8).measure(run, request(warmup=2, runs=6))
    assert len(samples) == 6
    assert all(abs(s - 0.004) < 1e-12 for s in samples)
    assert calls == [False] + [True] * 8  # one eager run, then eight captured
    assert dev.replays == 2 + 6
    assert dev.modes == ["thread_local"]
    assert dev.capture is None and dev.graphs_reset == 1


def test_runs_on_a_side_stream_that_follows_and_is_followed_by_the_callers(torch_stub):
    dev = torch_stub.dev
    m = CudaGraphMeasurer(launches=4)
    streams = []

    def run():
        streams.append(torch_stub.cuda.current_stream().name)
        dev.launch(0.001)

    m.measure(run, request())
    assert set(streams) == {"side1"}
    assert dev.log[0] == ("wait_stream", "side1", "default")
    assert dev.log[1] == ("sync", "side1")  # the eager run is waited for before the capture
    assert dev.log[2] == ("capture_begin", "side1")
    assert ("wait_stream", "default", "side1") in dev.log
    assert torch_stub.cuda.current_stream().name == "default"
    m.measure(run, request())
    assert set(streams) == {"side1"}, "the side stream is kept"


@pytest.mark.parametrize("warmup", [0, 1, 5])
def test_warmup_is_counted_in_replays_and_at_least_one(torch_stub, warmup):
    dev = torch_stub.dev
    runs = []
    CudaGraphMeasurer(launches=10).measure(lambda: (runs.append(1), dev.launch(0.002)),
                                           request(warmup=warmup, runs=4))
    assert dev.replays == max(1, warmup) + 4
    assert len(runs) == 1 + 10


def test_early_stop_returns_the_first_samples_of_a_slow_candidate(torch_stub):
    dev = torch_stub.dev
    m = CudaGraphMeasurer(launches=5, early_stop_factor=2.0, early_stop_after=3)

    def run():
        dev.launch(0.004)

    assert len(m.measure(run, request(warmup=1, runs=8, best_ms=0.001))) == 3
    assert dev.replays == 1 + 3
    dev.replays = 0
    assert len(m.measure(run, request(warmup=1, runs=8, best_ms=0.003))) == 8
    assert dev.replays == 1 + 8 + 1  # and one replay after the check refills the stream
    dev.replays = 0
    assert len(m.measure(run, request(warmup=1, runs=8))) == 8  # no best yet: no check
    assert dev.replays == 1 + 8


def test_the_reset_is_captured_before_every_run_and_timed_with_it(torch_stub):
    dev = torch_stub.dev
    events = []

    def reset():
        events.append("reset")
        dev.launch(0.001)  # a copy_ on the stream: captured too

    def run():
        events.append("captured run" if dev.capture is not None else "eager run")
        dev.launch(0.004)

    samples = CudaGraphMeasurer(launches=4).measure(run, request(warmup=1, runs=3, reset=reset))
    assert events == ["reset", "eager run"] + ["reset", "captured run"] * 4
    assert all(abs(s - 0.005) < 1e-12 for s in samples)


# ---- failures ----------------------------------------------------------------------------------

def test_a_run_that_cannot_be_captured_fails_and_ends_the_capture(torch_stub):
    dev = torch_stub.dev
    calls = []

    def run():
        calls.append(1)
        dev.launch(0.001)
        if dev.capture is not None and len(calls) == 3:
            torch_stub.cuda.current_stream().synchronize()  # what .item() does

    with pytest.raises(RuntimeError) as info:
        CudaGraphMeasurer(launches=8).measure(run, request())
    text = str(info.value)
    assert "captured run 2/8" in text and CAPTURE_HINT in text
    assert "operation not permitted when stream is capturing" in text
    assert dev.capture is None and dev.graphs_reset == 1 and dev.replays == 0
    assert torch_stub.cuda.current_stream().name == "default"


def test_a_capture_that_fails_at_its_end_fails_the_candidate(torch_stub):
    dev = torch_stub.dev
    dev.end_error = RuntimeError("CUDA error: operation would make the legacy stream depend on "
                                 "a capturing blocking stream")
    with pytest.raises(RuntimeError) as info:
        CudaGraphMeasurer(launches=4).measure(lambda: dev.launch(0.001), request())
    assert "ending the capture" in str(info.value) and CAPTURE_HINT in str(info.value)
    assert dev.capture is None and dev.graphs_reset == 1 and dev.replays == 0


def test_a_capture_that_holds_no_work_fails(torch_stub):
    dev = torch_stub.dev
    other = torch_stub.cuda.Stream()

    def run():
        dev.launch(0.001, stream=other)  # a stream of the function's own, not the current one

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's own warning is turned into the failure
        with pytest.raises(RuntimeError, match="holds no work on the current stream"):
            CudaGraphMeasurer(launches=4).measure(run, request())
    assert dev.graphs_reset == 1 and dev.replays == 0


def test_a_failure_of_the_eager_run_is_reported_as_it_is(torch_stub):
    def run():
        raise ValueError("BLOCK too large")

    with pytest.raises(ValueError, match="BLOCK too large"):
        CudaGraphMeasurer(launches=4).measure(run, request())
    assert torch_stub.dev.log[-1] == ("wait_stream", "default", "side1")


def test_fatal_errors_and_interrupts_pass_through_and_still_end_the_capture(torch_stub):
    dev = torch_stub.dev
    for exc in (_core.FatalCandidateError("the device is gone"), KeyboardInterrupt()):
        dev.graphs_reset = 0

        def run():
            dev.launch(0.001)
            if dev.capture is not None:
                raise exc

        with pytest.raises(type(exc)):
            CudaGraphMeasurer(launches=4).measure(run, request())
        assert dev.capture is None and dev.graphs_reset == 1


def test_without_cuda_graph_timing_stops_the_search(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", fake_torch(available=False))
    with pytest.raises(_core.FatalCandidateError, match="needs PyTorch with a CUDA device"):
        CudaGraphMeasurer().measure(lambda: None, request())


def test_launches_must_be_a_positive_int():
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError):
            CudaGraphMeasurer(launches=bad)


# ---- through tunekit.autotune --------------------------------------------------------------------

def test_autotune_timing_graph_records_cuda_graph_and_each_candidates_failure(torch_stub):
    dev = torch_stub.dev
    space = [{"us": 6}, {"us": 0}, {"us": 4}]
    acc = [1.0, 2.0]
    seen = []

    @tunekit.autotune(space, key_fn=lambda acc: (len(acc),), timing="graph",
                      reset_to_zero=["acc"])
    def kernel(acc, us):
        seen.append(list(acc))
        acc[0] += 1.0
        if us == 0 and dev.capture is not None:
            torch_stub.cuda.current_stream().synchronize()
        dev.launch(max(us, 1) / 1000.0)

    kernel(acc)
    entry = json.loads(tunekit.read_entry(kernel.cache_path(acc))["entry"])
    assert entry["measurer"] == "cuda-graph"
    assert entry["hardware"]["name"] == "Fake GPU"
    assert kernel.best_config(acc) == {"us": 4}
    by_us = {c["config"]["us"]: c for c in entry["candidates"]}
    assert by_us[6]["time_ms"] == pytest.approx(0.006)
    assert by_us[4]["time_ms"] == pytest.approx(0.004)
    assert by_us[0]["status"] == "failed" and CAPTURE_HINT in by_us[0]["reason"]
    # Every run, captured ones included, started from the zeroed argument.
    assert all(a == [0.0, 0.0] for a in seen[:-1])
    assert dev.capture is None


def test_timing_is_checked_when_decorating():
    with pytest.raises(ValueError, match="timing must be one of"):
        tunekit.autotune([{"x": 1}], key_fn=lambda: (), timing="cudagraph")(lambda x: x)
    with pytest.raises(ValueError, match="not both"):
        tunekit.autotune([{"x": 1}], key_fn=lambda: (), timing="graph",
                         measurer=CudaGraphMeasurer())(lambda x: x)


def test_eager_timing_is_the_default(torch_stub):
    dev = torch_stub.dev

    @tunekit.autotune([{"x": 1}, {"x": 2}], key_fn=lambda: ())
    def f(x):
        dev.launch(0.001 * x)

    f()
    entry = json.loads(tunekit.read_entry(f.cache_path())["entry"])
    assert entry["measurer"] == "cuda"
    assert dev.replays == 0


# ---- on a GPU ----------------------------------------------------------------------------------

def _real_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


gpu = pytest.mark.skipif(_real_torch() is None, reason="needs PyTorch and a CUDA device")


@gpu
def test_gpu_a_small_kernel_timed_both_ways():
    import torch

    x = torch.randn(4096, device="cuda")
    eager = tunekit.CudaEventMeasurer()
    graph = CudaGraphMeasurer(launches=100)
    run = lambda: x.mul_(1.0)  # noqa: E731
    t_eager, t_graph = [], []
    for _ in range(5):
        t_eager.append(sorted(eager.measure(run, request(warmup=5, runs=20)))[10])
        t_graph.append(sorted(graph.measure(run, request(warmup=5, runs=20)))[10])
    e, g = sorted(t_eager)[2], sorted(t_graph)[2]
    print(f"mul_ of 4096 floats: eager {e * 1000:.2f} us, in a graph {g * 1000:.2f} us")
    assert 0 < g <= 1.1 * e
    assert not torch.cuda.is_current_stream_capturing()


@gpu
def test_gpu_a_function_that_synchronizes_fails_and_the_next_one_is_timed():
    import torch

    x = torch.randn(4096, device="cuda")
    m = CudaGraphMeasurer(launches=8)
    with pytest.raises(RuntimeError) as info:
        m.measure(lambda: x.sum().item(), request())
    assert CAPTURE_HINT in str(info.value)
    assert len(m.measure(lambda: x.mul_(1.0), request())) == 5


@gpu
def test_gpu_autotune_timing_graph():
    import torch

    x = torch.randn(1 << 12, device="cuda")

    @tunekit.autotune([{"reps": 8}, {"reps": 1}], key_fn=lambda x: (x.numel(),),
                      timing="graph")
    def work(x, reps):
        for _ in range(reps):
            x.mul_(1.0)

    work(x)
    entry = json.loads(tunekit.read_entry(work.cache_path(x))["entry"])
    assert entry["measurer"] == "cuda-graph"
    assert work.best_config(x) == {"reps": 1}
    times = [c["time_ms"] for c in entry["candidates"]]
    assert times[0] > times[1] > 0
