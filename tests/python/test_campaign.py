"""The end of an offline campaign and vLLM-style per-shape folders (docs/shapes.md): a campaign
writes an artifact per key and a lookup table of exactly its keys (bucketed, as stored), naming
the keys it could not write; ``write_per_shape_json`` writes a folder of files named as vLLM names
them, and ``load_per_shape_dir`` serves this GPU's files of such a folder, a new M from the nearest
M of the file of its other key values. Plain Python tuned functions; no GPU, no torch."""

from __future__ import annotations

import json
import os
import re

import pytest
from conftest import run_mpi

import tunekit

H200 = {"kind": "cuda", "name": "NVIDIA H200", "arch": "sm_90", "units": 132, "count": 1}
SPACE = [{"BLOCK": b} for b in (16, 64, 256, 1024)]


class KeyCost:
    """The best BLOCK is the one nearest to the call's M (the key's first value)."""

    name = "simulated"

    def __init__(self):
        self.measured = 0

    def measure(self, run, request):
        self.measured += 1
        run()
        return [1.0 + abs(request.config["BLOCK"] - request.key[0]) / 100.0] * request.runs


def make(**kw):
    m = KeyCost()
    kw.setdefault("key_names", ["M", "E", "N"])
    kw.setdefault("hardware", H200)

    @tunekit.autotune(SPACE, lambda M, E=8, N=14336: (M, E, N), measurer=m, **kw)
    def moe(M, E=8, N=14336, *, BLOCK):
        return BLOCK

    return moe, m


# ---- artifacts and a table at the end of a campaign ------------------------------------------


def test_a_campaign_writes_artifacts_and_a_table_of_exactly_its_keys(tmp_path):
    other, _ = make(artifact_name="moe", key_buckets={"M": tunekit.pow2()})
    other(5000, 16)  # an entry of another key: in none of the campaign's outputs
    moe, m = make(artifact_name="moe", key_buckets={"M": tunekit.pow2()})
    moe.autotuner.tuner.seed((3, 8, 14336), 0)  # a shipped winner of M=3: not searched
    calls = [(1,), (16,), (100,), (120,), (3,)]  # 100 and 120 share the bucket 128
    art, table = tmp_path / "artifacts", tmp_path / "tables" / "moe.json"
    with pytest.warns(tunekit.TunekitWarning, match=r"1 of its 4 keys has no usable winner"):
        r = tunekit.campaign(moe, calls, artifact_dir=art, table=table, progress=False)
    # 120 is in the bucket of 100 and 3 in the one of the shipped winner: memory hits.
    assert r.tuned == 3 and m.measured == 3 * len(SPACE)
    assert r.missing == [((4, 8, 14336), "no winner cache entry")]
    assert len(r.artifacts) == 3 and sorted(map(str, art.iterdir())) == sorted(r.artifacts)
    docs = [json.loads(open(p).read()) for p in r.artifacts]
    assert [d["key"] for d in docs] == [[1, 8, 14336], [16, 8, 14336], [128, 8, 14336]]
    assert [d["config"] for d in docs] == [{"BLOCK": 16}, {"BLOCK": 16}, {"BLOCK": 64}]
    assert {d["artifact"] for d in docs} == {"moe"} and docs[0]["key_names"] == ["M", "E", "N"]
    assert r.table == str(table)
    written = json.loads(table.read_text())
    assert sorted(written) == [f"NVIDIA H200+({M}, 8, 14336)+moe" for M in (1, 128, 16)]
    assert written == {k: v for k, v in moe.autotuner.export_table().items() if k in written}

    # Run again: every call is answered as before, and the files come out the same.
    before = {p: open(p).read() for p in r.artifacts}
    again, m2 = make(artifact_name="moe", key_buckets={"M": tunekit.pow2()})
    again.autotuner.tuner.seed((3, 8, 14336), 0)
    with pytest.warns(tunekit.TunekitWarning):
        r2 = tunekit.campaign(again, calls, artifact_dir=art, table=table, progress=False)
    assert r2.tuned == 0 and m2.measured == 0
    assert [r2.sources[i] for i in range(5)] == ["cache", "cache", "cache", "memory", "memory"]
    assert {p: open(p).read() for p in r2.artifacts} == before


def test_the_campaign_names_its_artifacts_and_keys_its_table_as_asked(tmp_path):
    moe, _ = make()
    r = tunekit.campaign(moe, [(16,), (256,)], artifact_dir=tmp_path / "a",
                         artifact_name="fused_moe", table=tmp_path / "t.json", op_name="mm",
                         top_k=2, table_params={"alpha": 1}, table_key_format="inductor",
                         progress=False)
    assert all(os.path.basename(p).startswith("fused_moe-") for p in r.artifacts)
    written = json.loads((tmp_path / "t.json").read_text())
    assert sorted(written) == ["NVIDIA H200+(16, 8, 14336)+alpha=1+mm",
                               "NVIDIA H200+(256, 8, 14336)+alpha=1+mm"]
    assert all(len(v) == 2 for v in written.values())
    with pytest.raises(tunekit.Error, match="names a template that no choice has"):
        tunekit.campaign(moe, [(16,)], table=tmp_path / "x.json", template_hashes={"x": "h"},
                         progress=False)
    assert not (tmp_path / "x.json").exists()


def test_outputs_that_cannot_be_written_fail_before_anything_is_tuned(tmp_path):
    moe, m = make()
    with pytest.raises(tunekit.Error, match="artifacts need a name"):
        tunekit.campaign(moe, [(16,)], artifact_dir=tmp_path, progress=False)
    with pytest.raises(tunekit.Error, match="invalid artifact name"):
        tunekit.campaign(moe, [(16,)], artifact_dir=tmp_path, artifact_name="a b",
                         progress=False)
    with pytest.raises(tunekit.Error, match="top_k of at least 1"):
        tunekit.campaign(moe, [(16,)], table=tmp_path / "t.json", top_k=0, progress=False)
    with pytest.raises(ValueError, match="table_key_format"):
        tunekit.campaign(moe, [(16,)], table=tmp_path / "t.json", table_key_format="x",
                         progress=False)
    no_cache, m2 = make(use_disk_cache=False)
    with pytest.raises(tunekit.Error, match="use_disk_cache"):
        tunekit.campaign(no_cache, [(16,)], table=tmp_path / "t.json", progress=False)
    partial, m3 = make(artifact_name="moe",
                       hardware={"kind": "cuda", "name": "", "arch": "", "units": 0, "count": 1})
    with pytest.raises(tunekit.Error, match="device identity is incomplete"):
        tunekit.campaign(partial, [(16,)], artifact_dir=tmp_path, progress=False)
    assert m.measured == m2.measured == m3.measured == 0


# ---- vLLM-style per-shape folders ----------------------------------------------------------------


def test_per_shape_file_names_are_vllms():
    name = tunekit.per_shape_file_name
    assert name({"E": 8, "N": 14336}, "NVIDIA H200") == "E=8,N=14336,device_name=NVIDIA_H200.json"
    assert (name({"dtype": "fp8_w8a8", "E": 8, "N": 7168, "block_shape": [128, 128]},
                 "NVIDIA H100 80GB HBM3")
            == "E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3,dtype=fp8_w8a8,"
               "block_shape=[128,128].json")
    assert name({"E": 8}, "NVIDIA H200 NVL") == "E=8,device_name=NVIDIA_H200.json"  # as vLLM
    with pytest.raises(ValueError, match="cannot stand in a file name"):
        name({"mode": "a,b"}, "X")


def tune_two_files(ms=(1, 16, 256, 1024), es=(8, 64)):
    moe, _ = make()
    for e in es:
        for M in ms:
            moe(M, e)
    return moe


def test_a_folder_of_vllm_files_round_trips_and_serves_the_nearest_m(tmp_path, monkeypatch,
                                                                     capsys):
    folder = tmp_path / "configs"
    written = tunekit.write_per_shape_json(tune_two_files(), f"{folder}/", by="M",
                                           name_fields={"dtype": "fp8_w8a8"})
    e8 = str(folder / "E=8,N=14336,device_name=NVIDIA_H200,dtype=fp8_w8a8.json")
    e64 = str(folder / "E=64,N=14336,device_name=NVIDIA_H200,dtype=fp8_w8a8.json")
    assert sorted(written) == sorted([e8, e64])
    assert written[e8] == {"1": {"BLOCK": 16}, "16": {"BLOCK": 16}, "256": {"BLOCK": 256},
                           "1024": {"BLOCK": 1024}}
    # Another device's file, and a JSON file that is not a per-shape file.
    (folder / "E=8,N=14336,device_name=NVIDIA_A100-SXM4-80GB.json").write_text('{"1": {"x": 1}}')
    (folder / "notes.json").write_text("[]")

    monkeypatch.setenv("TUNEKIT_CACHE_DIR", str(tmp_path / "empty"))
    served, m = make(on_miss="nearest")
    with pytest.raises(ValueError, match=r"dtype='fp8_w8a8' of its name is not one of the key"):
        tunekit.load_per_shape_dir(served, folder, by="M")
    loaded = tunekit.load_per_shape_dir(served, folder, by="M", file_fields={"dtype": None},
                                        verbose=True)
    assert loaded == {e64: 4, e8: 4}
    err = capsys.readouterr().err
    assert "NVIDIA_A100-SXM4-80GB.json: a file of another device" in err
    assert "notes.json: its name holds no device_name" in err
    assert served(16, 64) == 16 and served.last_source() == "memory"
    assert served(300, 8) == 256 and served.last_source() == "nearest"
    assert served(900, 64) == 1024 and served.last_source() == "nearest"
    assert m.measured == 0


def test_fields_map_to_key_names_or_a_key_function(tmp_path, monkeypatch):
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "E=8,N=14336,device_name=NVIDIA_H200,dtype=fp8_w8a8.json").write_text(
        json.dumps({"1": {"BLOCK": 16}, "512": {"BLOCK": 256}}))
    # The dtype is a key value here, under another name.
    @tunekit.autotune(SPACE, lambda M, E=8, N=14336, quant="fp8_w8a8": (M, E, N, quant),
                      measurer=KeyCost(), key_names=["M", "E", "N", "quant"], hardware=H200,
                      on_miss="nearest")
    def quant(M, E=8, N=14336, quant="fp8_w8a8", *, BLOCK):
        return BLOCK

    assert tunekit.load_per_shape_dir(quant, folder, file_fields={"dtype": "quant"}) == {
        str(folder / "E=8,N=14336,device_name=NVIDIA_H200,dtype=fp8_w8a8.json"): 2}
    assert quant.autotuner.tuner.find((512, 8, 14336, "fp8_w8a8"), None) is not None
    # A key function builds each key from M and the name's fields.
    seen = []
    keyed, _ = make(on_miss="nearest")

    def key(M, fields):
        seen.append(fields)
        return (M, fields["E"], fields["N"])

    tunekit.load_per_shape_dir(keyed, folder, key=key)
    assert seen[0] == {"E": 8, "N": 14336, "dtype": "fp8_w8a8"}
    assert keyed(400) == 256 and keyed.last_source() == "nearest"
    # A key value no field gives, and a tuner whose key values have no names.
    wide, _ = make(key_names=["M", "E", "N", "K"])
    with pytest.raises(ValueError, match=r"gives no value for the key's \['K'\]"):
        tunekit.load_per_shape_dir(wide, folder, file_fields={"dtype": None})
    unnamed, _ = make(key_names=[])
    with pytest.raises(ValueError, match="have no names"):
        tunekit.load_per_shape_dir(unnamed, folder)


def test_bad_files_are_errors_naming_them(tmp_path):
    moe, _ = make()
    folder = tmp_path / "configs"
    folder.mkdir()
    bad = folder / "E=8,N=14336,device_name=NVIDIA_H200.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"E=8,N=14336,device_name=NVIDIA_H200\.json: not a per"):
        tunekit.load_per_shape_dir(moe, folder)
    bad.write_text('{"16": {"BLOCK": 333}}')
    with pytest.raises(ValueError, match=r"device_name=NVIDIA_H200\.json\['16'\].*not a config"):
        tunekit.load_per_shape_dir(moe, folder)
    bad.unlink()
    (folder / "E=8,N,device_name=NVIDIA_H200.json").write_text("{}")
    with pytest.raises(ValueError, match=r"E=8,N,device_name=NVIDIA_H200\.json: 'N' is not one"):
        tunekit.load_per_shape_dir(moe, folder)
    with pytest.raises(ValueError, match="is not a folder"):
        tunekit.load_per_shape_dir(moe, tmp_path / "nowhere")


def test_a_fifo_or_deep_nesting_in_a_per_shape_file_is_an_error_naming_it(tmp_path):
    moe, _ = make()
    folder = tmp_path / "configs"
    folder.mkdir()
    fifo = folder / "E=8,N=14336,device_name=NVIDIA_H200.json"
    os.mkfifo(fifo)  # no writer: a blocking open would wait forever
    with pytest.raises(ValueError,
                       match=r"NVIDIA_H200\.json: not a per-shape JSON file: .* is a FIFO"):
        tunekit.load_per_shape_dir(moe, folder)
    fifo.unlink()
    fifo.write_text('{"16": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(ValueError, match="nested too deeply"):
        tunekit.load_per_shape_json(moe, fifo, key=lambda M: (M, 8, 14336))


def test_files_whose_keys_come_near_each_other_are_warned_about(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "E=8,N=14336,device_name=NVIDIA_H200.json").write_text(
        json.dumps({"1": {"BLOCK": 16}, "1024": {"BLOCK": 1024}}))
    (folder / "E=16,N=14336,device_name=NVIDIA_H200.json").write_text(
        json.dumps({"512": {"BLOCK": 256}}))
    moe, _ = make(on_miss="nearest")
    with pytest.warns(tunekit.TunekitWarning, match="differ only in numeric key values, by 8"):
        tunekit.load_per_shape_dir(moe, folder)
    assert moe(512, 8) == 256  # E=16's M=512 is nearer than E=8's M=1 and M=1024


def test_a_folder_needs_the_unnamed_key_values_equal_and_a_file_one_shape(tmp_path):
    moe = tune_two_files(ms=(1, 16))
    with pytest.raises(ValueError, match="differ in other key values"):
        tunekit.write_per_shape_json(moe, tmp_path / "one.json", by="M")
    with pytest.raises(ValueError, match="name_fields names the files of a folder"):
        tunekit.write_per_shape_json(moe, tmp_path / "one.json", name_fields={"dtype": "x"})
    partly, _ = make(key_names=["M", "E"])
    partly(1, 8, 14336)
    partly(1, 8, 7168)
    with pytest.raises(ValueError, match="key values without a name"):
        tunekit.write_per_shape_json(partly, f"{tmp_path}/dir/", by="M")


def test_a_campaign_writes_a_per_shape_folder(tmp_path):
    moe, _ = make()
    folder = tmp_path / "configs"
    folder.mkdir()
    r = tunekit.campaign(moe, [(M, E) for E in (8, 16) for M in (1, 64)], per_shape_json=folder,
                         by="M", progress=False)
    assert r.per_shape == sorted(str(folder / f"E={E},N=14336,device_name=NVIDIA_H200.json")
                                 for E in (8, 16))
    assert json.loads(open(r.per_shape[0]).read()) == {"1": {"BLOCK": 16}, "64": {"BLOCK": 64}}


# ---- several ranks -------------------------------------------------------------------------------


def test_three_ranks_share_a_campaign_and_rank_zero_writes_its_outputs(tmp_path):
    r = run_mpi("mpi_campaign.py", 3, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(re.findall(r"rank (\d) ok", r.stdout)) == ["0", "1", "2"]
