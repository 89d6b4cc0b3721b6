"""PyTorch Inductor's lookup tables from Python (shared/seeds/001): ``tunekit.inductor_input_key``
builds Inductor's input key, ``table_key_format="inductor"`` looks tables up by Inductor's keys,
``tunekit.export_table(key_format="inductor")`` writes them, and template ids, template hashes and
nulls go through. No torch here: stand-in tensors have what the key reads."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

import tunekit
from conftest import CostMeasurer
from tunekit import _measure

H200 = {"kind": "cuda", "name": "NVIDIA H200", "arch": "sm_90", "units": 132, "count": 1}
HASH = "0717af5834e39dcca7ea817f896b8d85b4886422da7a3ab5f6911b4cfe568896"

# Inductor's key of a 512x512 fp16 mm on an H200 (torch 2.11).
MM_KEY = ("NVIDIA H200+((torch.float16, [512, 512], [512, 1]), "
          "(torch.float16, [512, 512], [512, 1]))+mm")
SEED_INPUT = ("((torch.float16, [128, 256], [0, 1]), (torch.float16, [128, 64], [64, 1]), "
              "(torch.float16, [64, 256], [256, 1]))")

# The seed's example table verbatim, with its trailing comma (not JSON) removed.
SEED_TABLE = (Path(__file__).resolve().parents[1] / "core" / "data" /
              "inductor_seed_table.json").read_text()


class Dtype:
    """Prints as torch's dtype does."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    __str__ = __repr__


class Tensor:
    """Has what inductor_input_key reads: .dtype, .shape, .stride()."""

    def __init__(self, shape, stride, dtype="float16"):
        self.dtype = Dtype(dtype)
        self.shape = tuple(shape)
        self._stride = tuple(stride)

    def stride(self):
        return self._stride


def contiguous(*shape):
    stride, step = [], 1
    for s in reversed(shape):
        stride.insert(0, step)
        step *= s
    return Tensor(shape, stride)


def triton_mm(block_m, **extra):
    """A config of Inductor's triton::mm template with the seed's fields."""
    return {"template_id": "triton::mm", "EVEN_K": True, "USE_FAST_ACCUM": False,
            "ACC_TYPE": "tl.float32", "num_stages": 2, "num_warps": 4, "BLOCK_M": block_m,
            "BLOCK_N": 32, "BLOCK_K": 64, "GROUP_M": 8, **extra}


def mm_cost(cfg):
    return {16: 3.0, 32: 2.0, 64: 1.0, 128: 3.0}.get(cfg.get("BLOCK_M"), 9.0)


def mm(*tensors, **config):
    return config.get("BLOCK_M", 0)


def make(space=None, op_name="mm", **kw):
    space = space if space is not None else [triton_mm(b) for b in (16, 32, 64, 128)]
    m = CostMeasurer(mm_cost)
    opts = {"name": "mm", "hardware": H200, "table_key_format": "inductor", "op_name": op_name,
            **kw}
    tuned = tunekit.autotune(space, lambda *ts: (tunekit.inductor_input_key(*ts),), measurer=m,
                             **opts)(mm)
    return tuned, m


def test_inductor_input_key_is_inductors_text():
    a, b = contiguous(512, 512), contiguous(512, 512)
    assert MM_KEY == "NVIDIA H200+" + tunekit.inductor_input_key(a, b) + "+mm"
    assert tunekit.inductor_input_key(contiguous(64, 128), contiguous(128, 256)) == \
        "((torch.float16, [64, 128], [128, 1]), (torch.float16, [128, 256], [256, 1]))"
    # The seed's addmm: a broadcast bias (stride 0), mat1, mat2.
    bias = Tensor((128, 256), (0, 1))
    assert tunekit.inductor_input_key(bias, contiguous(128, 64), contiguous(64, 256)) == \
        SEED_INPUT
    # One input prints as a one-tuple does; other dtypes as torch prints them.
    assert tunekit.inductor_input_key(Tensor((8,), (1,), "bfloat16")) == \
        "((torch.bfloat16, [8], [1]),)"
    with pytest.raises(ValueError):
        tunekit.inductor_input_key()
    with pytest.raises(TypeError, match="stride"):
        tunekit.inductor_input_key(object())


def test_the_device_part_is_the_cuda_device_name_inductor_uses(monkeypatch):
    # Inductor's device key is props.gcnArchName, which CUDA builds of torch give as the device
    # name; tunekit's hardware name for a torch device is props.name.
    props = types.SimpleNamespace(name="NVIDIA H200", gcnArchName="NVIDIA H200", major=9,
                                  minor=0, multi_processor_count=132)
    cuda = types.SimpleNamespace(is_available=lambda: True, current_device=lambda: 0,
                                 get_device_properties=lambda dev=None: props,
                                 device_count=lambda: 1)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    hw = _measure.torch_hardware()
    assert hw["name"] == props.gcnArchName == MM_KEY.split("+")[0]


def test_a_table_in_inductors_exact_form_is_served():
    a = contiguous(512, 512)
    table = {MM_KEY: [{**triton_mm(128), "hint_override": None}]}
    tuned, m = make(lookup_table=table)
    assert tuned(a, a) == 128
    assert tuned.autotuner.last_source() == "table"
    assert m.measured == []

    # The same table read as tunekit's own format: another key, no hit.
    other, m2 = make(lookup_table=table, table_key_format="tunekit", name="mm_tunekit")
    assert other(a, a) == 64
    assert other.autotuner.last_source() == "search"


def test_the_seeds_table_is_served_with_its_params_and_template_hash():
    space = [triton_mm(b) for b in (16, 32, 64, 128)] + [{"template_id": "aten::bias_addmm"}]
    bias, mat1, mat2 = Tensor((128, 256), (0, 1)), contiguous(128, 64), contiguous(64, 256)
    table = json.loads(SEED_TABLE)
    tuned, m = make(space, op_name="addmm", table_params={"alpha": 1, "beta": 1},
                    lookup_table=table, template_hashes={"triton::mm": HASH})
    assert tuned(bias, mat1, mat2) == 32  # two choices measured, triton::mm BLOCK_M=32 faster
    assert tuned.autotuner.last_source() == "table_search"
    assert len(m.measured) == 2

    # A template whose source changed: its choice is stale, aten::bias_addmm is served.
    with pytest.warns(tunekit.TunekitWarning, match="stale"):
        stale, m2 = make(space, op_name="addmm", table_params={"alpha": 1, "beta": 1},
                         lookup_table=table, template_hashes={"triton::mm": "changed"},
                         name="addmm_stale", use_disk_cache=False)
        assert stale(bias, mat1, mat2) == 0
    assert stale.autotuner.last_source() == "table"


def test_an_inductor_format_export_has_inductors_keys_and_is_served_back(tmp_path):
    a = contiguous(512, 512)
    space = [triton_mm(b, template_hash=HASH) for b in (16, 32, 64, 128)]
    tuned, _ = make(space)
    assert tuned(a, a) == 64
    assert tuned.autotuner.last_source() == "search"

    table = tunekit.export_table("mm", op="mm", key_format="inductor", top_k=2,
                                 template_hashes={"triton::mm": HASH})
    assert list(table) == [MM_KEY]
    first = table[MM_KEY][0]
    assert first == {**triton_mm(64), "template_hash": HASH}
    assert [c["BLOCK_M"] for c in table[MM_KEY]] == [64, 32]
    # The tuner's own export: the same keys, its configs' template_hash recorded.
    assert tuned.autotuner.export_table(top_k=2) == table
    # What tunekit's own format writes: the string quoted in a tuple.
    own = tunekit.export_table("mm", op="mm")
    assert list(own) == ['NVIDIA H200+("' + MM_KEY.split("+")[1] + '")+mm']

    # Its first choice read back (as a dict and as a file) by a tuner without a cache: nothing
    # measured.
    top = tunekit.export_table("mm", op="mm", key_format="inductor",
                               template_hashes={"triton::mm": HASH})
    assert top == {MM_KEY: [first]}
    path = tmp_path / "table.json"
    path.write_text(json.dumps(top))
    for source in (top, str(path)):
        served, m = make(space, lookup_table=source, use_disk_cache=False, name="mm_served")
        assert served(a, a) == 64
        assert served.autotuner.last_source() == "table"
        assert m.measured == []


def test_template_ids_and_hashes_go_through_export_and_back():
    a = contiguous(512, 512)
    space = [{"template_id": "triton::mm", "BLOCK_M": b, "template_hash": "h1"} for b in (32, 64)]
    space.append({"template_id": "aten::mm"})
    tuned, _ = make(space)
    assert tuned(a, a) == 64
    table = tuned.autotuner.export_table(top_k=3)
    assert [c["template_id"] for c in table[MM_KEY]] == ["triton::mm", "triton::mm", "aten::mm"]
    assert [c.get("template_hash") for c in table[MM_KEY]] == ["h1", "h1", None]

    served, m = make(space, lookup_table={MM_KEY: table[MM_KEY][:1]}, use_disk_cache=False,
                     name="mm_ids")
    assert served(a, a) == 64
    assert served.autotuner.last_source() == "table"

    # The template was edited since (another hash in the space): the entry is stale.
    edited = [{**c, "template_hash": "h2"} if c["template_id"] == "triton::mm" else c
              for c in space]
    with pytest.warns(tunekit.TunekitWarning, match="stale"):
        fresh, _ = make(edited, lookup_table={MM_KEY: table[MM_KEY][:1]}, use_disk_cache=False,
                        name="mm_edited")
        assert fresh(a, a) == 64
    assert fresh.autotuner.last_source() == "search"


def test_export_refuses_a_hash_of_a_template_it_does_not_have():
    a = contiguous(512, 512)
    tuned, _ = make()
    tuned(a, a)
    with pytest.raises(ValueError, match="'triton::bmm'.*'triton::mm'"):
        tunekit.export_table("mm", key_format="inductor", template_hashes={"triton::bmm": "x"})
    with pytest.raises(ValueError, match="key_format"):
        tunekit.export_table("mm", key_format="torch")
    assert tunekit.export_table("nothing-here") == {}


def test_table_key_format_is_checked():
    with pytest.raises(ValueError, match="table_key_format"):
        make(table_key_format="Inductor")
    assert tunekit.TABLE_KEY_FORMATS == ("tunekit", "inductor")
