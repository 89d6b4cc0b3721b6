"""A lookup table written by tunekit, read by PyTorch Inductor (torch 2.11, one CUDA GPU).

tunekit tunes a stand-in ``mm`` keyed by ``tunekit.inductor_input_key(a, b)`` whose space holds
``triton::mm`` configs, exports its winner with ``key_format="inductor"`` (the Python export path,
and ``tunekit table export --key-format inductor`` when the package has the command), and hands the
table to ``torch.compile(mode="max-autotune-no-cudagraphs")`` of ``a @ b`` (512x512 fp16) through
``torch._inductor.config.lookup_table.table`` and ``LookupTableChoices`` (shared/seeds/001). Each
case compiles afresh and checks:

- key: the key Inductor looked up (``LookupTableChoices.make_lookup_key_variants``) is the text
  tunekit wrote;
- code: the generated Triton kernel has the table's BLOCK_M/N/K, GROUP_M, num_warps, num_stages;
- skipped: Inductor's algorithm selection got one choice for the mm and benchmarked nothing.

Cases: no table (control: autotunes), tunekit's own key format (a miss before this fix), Inductor's
format with the seed's fields (a hit) and with only the block/warp/stage fields (Inductor's lowering
fails: its template has no default for EVEN_K), a device-agnostic key, and, when the template's
source hash can be read, the matching hash (a hit) and a stale one (dropped: autotunes).

    python bench/python/inductor_table.py --out bench/results/inductor_table

Writes to ``--out``: results.json, the table and the generated code of each case, inductor.log.
Prints a result table last; exits 1 when an expected outcome did not happen.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import re
import subprocess
import sys
import tempfile

# --- arguments and the winner cache, before tunekit is imported ------------------------------
parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--out", required=True, help="directory for results.json, tables, code")
parser.add_argument("--block", default="32,64,128",
                    help="BLOCK_M,BLOCK_N,BLOCK_K of the table's config (default 32,64,128)")
parser.add_argument("--warps", type=int, default=2, help="num_warps of the table's config")
parser.add_argument("--stages", type=int, default=5, help="num_stages of the table's config")
parser.add_argument("--group-m", type=int, default=4, help="GROUP_M of the table's config")
args = parser.parse_args()
os.makedirs(args.out, exist_ok=True)
os.environ["TUNEKIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="tunekit-inductor-cache-")

import torch  # noqa: E402

import tunekit  # noqa: E402
from tunekit._measure import torch_hardware  # noqa: E402

if not torch.cuda.is_available():
    sys.exit("inductor_table.py needs a CUDA GPU")

import torch._dynamo  # noqa: E402
import torch._inductor.config as inductor_config  # noqa: E402
from torch._inductor.utils import run_and_get_code  # noqa: E402
from torch._inductor.virtualized import V  # noqa: E402

try:
    from torch._inductor.lookup_table import LookupTableChoices
except ImportError as e:  # an older torch
    sys.exit(f"this torch ({torch.__version__}) has no torch._inductor.lookup_table: {e}")

BM, BN, BK = (int(x) for x in args.block.split(","))
M = N = K = 512
OP = "mm"
TEMPLATE = "triton::mm"
DTYPE = torch.float16


def mm_template_hash() -> str | None:
    """The source hash Inductor checks table entries of triton::mm against, when it can be read."""
    try:
        from torch._inductor.kernel import mm as mm_kernels
    except ImportError:
        return None
    template = getattr(mm_kernels, "mm_template", None)
    h = getattr(template, "src_hash", None)
    return h if isinstance(h, str) and h else None


def chosen(fields: str) -> dict:
    """The config the table carries. "seed": the members of the seed's triton::mm example (with
    its null); "minimal": only the block sizes, GROUP_M, warps and stages. Inductor's triton::mm
    template (torch 2.11) has no default for EVEN_K and the others: its lowering fails on such an
    entry, which the "inductor_minimal_fields" case expects."""
    c = {"template_id": TEMPLATE, "BLOCK_M": BM, "BLOCK_N": BN, "BLOCK_K": BK,
         "GROUP_M": args.group_m, "num_warps": args.warps, "num_stages": args.stages}
    if fields == "seed":
        c.update({"EVEN_K": K % BK == 0, "USE_FAST_ACCUM": False, "ACC_TYPE": "tl.float32",
                  "hint_override": None})
    return c


class FixedMeasurer:
    """Times the chosen config 1 ms and any other 2 ms, so the winner is the chosen one."""

    name = "fixed"

    def __init__(self, winner: dict):
        self.winner = {k: v for k, v in winner.items() if v is not None}

    def measure(self, run, request):
        cfg = dict(request.config)
        fast = all(cfg.get(k) == self.winner[k] for k in ("BLOCK_M", "num_stages"))
        for _ in range(request.warmup):
            run()
        times = []
        for _ in range(request.runs):
            run()
            times.append(1.0 if fast else 2.0)
        torch.cuda.synchronize()
        return times


def tunekit_table(fields: str, key_format: str, name: str) -> dict:
    """Tunes a stand-in mm with tunekit (two triton::mm configs, the chosen one fastest) and
    exports the winner: tunekit's export path, the table Inductor gets."""
    win = chosen(fields)
    other = {**win, "BLOCK_M": 64 if BM != 64 else 128, "num_stages": 3}
    # A null is no value to tunekit: the space's configs hold the other members.
    space = [{k: v for k, v in c.items() if v is not None} for c in (win, other)]

    def mm(a, b, **config):
        return a @ b

    tuned = tunekit.autotune(space, key_fn=lambda a, b: (tunekit.inductor_input_key(a, b),),
                             name=name, op_name=OP, table_key_format=key_format,
                             measurer=FixedMeasurer(win))(mm)
    a = torch.randn(M, K, device="cuda", dtype=DTYPE)
    b = torch.randn(K, N, device="cuda", dtype=DTYPE)
    tuned(a, b)
    table = tunekit.export_table(name, op=OP, key_format=key_format)
    if fields == "seed":  # give the entry the seed's null back, as Inductor's own tables have it
        for configs in table.values():
            for c in configs:
                c.setdefault("hint_override", None)
    return table


def cli_export(name: str) -> dict | None:
    """The same export by `tunekit table export --key-format inductor`, when installed."""
    cli = tunekit.cli_path()
    if cli is None:
        return None
    r = subprocess.run([cli, "table", "export", "--function", name, "--op", OP, "--key-format",
                        "inductor"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


# --- what Inductor does with a table ---------------------------------------------------------
class Probe:
    """Records the keys Inductor looks up, the choices each algorithm selection gets and the
    benchmark calls, by wrapping those methods for the time of one compile."""

    def __init__(self):
        self.keys: list = []
        self.selections: list = []  # (name, number of choices)
        self.benchmarks = 0
        self.patched: list = []
        self._undo: list = []

    def _wrap(self, owner, attr, make):
        orig = owner.__dict__.get(attr)
        if orig is None:
            return
        setattr(owner, attr, make(orig))
        self._undo.append((owner, attr, orig))
        self.patched.append(f"{owner.__name__}.{attr}")

    def __enter__(self):
        from torch._inductor import select_algorithm

        def keys(orig):
            def f(self_, *a, **k):
                out = orig(self_, *a, **k)
                self.keys.append(out)
                return out
            return f

        def select(orig):
            def f(self_, name, choices, *a, **k):
                self.selections.append((name, len(choices)))
                return orig(self_, name, choices, *a, **k)
            return f

        def bench(orig):
            if isinstance(orig, (staticmethod, classmethod)):
                fn = orig.__func__

                def g(*a, **k):
                    self.benchmarks += 1
                    return fn(*a, **k)
                return type(orig)(g)

            def f(*a, **k):
                self.benchmarks += 1
                return orig(*a, **k)
            return f

        self._wrap(LookupTableChoices, "make_lookup_key_variants", keys)
        cache = select_algorithm.AlgorithmSelectorCache
        self._wrap(cache, "__call__", select)
        for attr in ("benchmark_in_current_process", "benchmark_in_sub_process",
                     "benchmark_choices", "make_benchmark_fn"):
            self._wrap(cache, attr, bench)
        return self

    def __exit__(self, *exc):
        for owner, attr, orig in reversed(self._undo):
            setattr(owner, attr, orig)


def constants(code: str) -> dict:
    """BLOCK_M/N/K, GROUP_M, num_warps, num_stages of the generated Triton template kernels."""
    found: dict = {}
    for name in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M"):
        vals = re.findall(rf"\b{name}\s*:\s*tl\.constexpr\s*=\s*(\d+)", code)
        vals += re.findall(rf"['\"]{name}['\"]\s*:\s*(\d+)", code)
        found[name] = sorted({int(v) for v in vals})
    for name in ("num_warps", "num_stages"):
        vals = re.findall(rf"\b{name}\s*=\s*(\d+)", code)
        vals += re.findall(rf"['\"]{name}['\"]\s*:\s*(\d+)", code)
        found[name] = sorted({int(v) for v in vals})
    found["template_kernels"] = len(re.findall(r"def triton_tem_", code))
    return found


def compile_with(case: str, table: dict | None) -> dict:
    """One fresh torch.compile of a @ b with `table` as Inductor's lookup table."""
    torch._dynamo.reset()
    inductor_config.lookup_table.table = table
    V.set_choices_handler(LookupTableChoices())
    a = torch.randn(M, K, device="cuda", dtype=DTYPE)
    b = torch.randn(K, N, device="cuda", dtype=DTYPE)

    def matmul(x, y):
        return x @ y

    compiled = torch.compile(matmul, mode="max-autotune-no-cudagraphs")
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    handler.setLevel(logging.DEBUG)
    loggers = [logging.getLogger(n) for n in ("torch._inductor.lookup_table",
                                              "torch._inductor.lookup_table.choices",
                                              "torch._inductor.select_algorithm")]
    old_levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    stderr = io.StringIO()
    try:
        with Probe() as probe, contextlib.redirect_stderr(stderr):
            out, codes = run_and_get_code(compiled, a, b)
    finally:
        for lg, lvl in zip(loggers, old_levels):
            lg.removeHandler(handler)
            lg.setLevel(lvl)
    torch.testing.assert_close(out, a @ b, rtol=2e-2, atol=2e-2)
    code = "\n\n".join(codes)
    with open(os.path.join(args.out, f"code_{case}.py"), "w") as f:
        f.write(code)
    with open(os.path.join(args.out, "inductor.log"), "a") as f:
        f.write(f"===== {case}\n{log.getvalue()}{stderr.getvalue()}\n")
    mm_choices = [n for name, n in probe.selections if "mm" in str(name)]
    text = log.getvalue() + stderr.getvalue()
    return {
        "inductor_keys": [list(k) if isinstance(k, tuple) else k for k in probe.keys],
        "selections": probe.selections,
        "mm_choices": mm_choices,
        "benchmark_calls": probe.benchmarks,
        "patched": probe.patched,
        "lookup_hit_logged": "lookup hit" in text,
        "autotune_logged": "AUTOTUNE" in text,
        "code": constants(code),
    }


def verdict(case: str, table: dict | None, expect_hit: bool, r: dict) -> dict:
    want = {"BLOCK_M": BM, "BLOCK_N": BN, "BLOCK_K": BK, "GROUP_M": args.group_m,
            "num_warps": args.warps, "num_stages": args.stages}
    tried = [k for pair in r["inductor_keys"] for k in (pair or []) if k]
    written = list(table) if table else []
    r["key_match"] = bool(written) and all(k in tried for k in written)
    r["code_has_table_config"] = all(want[n] in r["code"][n] for n in want)
    one_choice = bool(r["mm_choices"]) and all(n == 1 for n in r["mm_choices"])
    r["autotune_skipped"] = one_choice and r["benchmark_calls"] == 0
    r["expected"] = "hit" if expect_hit else "miss"
    if expect_hit:  # Inductor looked up tunekit's text, compiled the table's config, chose nothing
        r["as_expected"] = (r["key_match"] and r["code_has_table_config"]
                            and r["autotune_skipped"])
    else:  # no usable entry: Inductor generated its own choices and autotuned among them
        r["as_expected"] = not r["autotune_skipped"]
    r["case"] = case
    return r


def main() -> int:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    hw = torch_hardware() or {}
    device = {"name": props.name, "gcnArchName": getattr(props, "gcnArchName", None),
              "tunekit_hardware_name": hw.get("name"), "torch": torch.__version__,
              "tunekit": tunekit.__version__}
    device["device_key_match"] = device["gcnArchName"] == device["tunekit_hardware_name"]
    print(f"device: {device}")

    inductor_config.force_disable_caches = True  # every case compiles and selects afresh

    tables: dict = {
        "no_table": (None, False),
        "tunekit_key_format": (tunekit_table("seed", "tunekit", "mm_tunekit_format"), False),
        "inductor_seed_fields": (tunekit_table("seed", "inductor", "mm_seed_fields"), True),
        "inductor_minimal_fields": (tunekit_table("minimal", "inductor", "mm_minimal"), "error"),
    }
    cli = cli_export("mm_seed_fields")
    if cli is not None:
        device["cli_export_equal"] = {k: [{**c, "hint_override": None} for c in v]
                                      for k, v in cli.items()} == tables["inductor_seed_fields"][0]
    seed_table = tables["inductor_seed_fields"][0]
    tables["device_agnostic"] = ({k.split("+", 1)[1]: v for k, v in seed_table.items()}, True)
    src_hash = mm_template_hash()
    device["mm_template_src_hash"] = src_hash
    if src_hash is not None:
        tables["matching_template_hash"] = (
            {k: [{**c, "template_hash": src_hash} for c in v] for k, v in seed_table.items()}, True)
        tables["stale_template_hash"] = (
            {k: [{**c, "template_hash": "0" * 64} for c in v] for k, v in seed_table.items()},
            False)

    results = []
    for case, (table, expect_hit) in tables.items():
        with open(os.path.join(args.out, f"table_{case}.json"), "w") as f:
            json.dump(table, f, indent=2)
        try:
            r = verdict(case, table, expect_hit is True, compile_with(case, table))
            if expect_hit == "error":
                r["expected"], r["as_expected"] = "error", False
        except Exception as e:  # a case that fails to compile is reported, the others still run
            r = {"case": case, "expected": "error" if expect_hit == "error" else
                 "hit" if expect_hit else "miss", "error": repr(e),
                 "as_expected": expect_hit == "error"}
        results.append(r)
        print(f"{case}: {json.dumps(r, default=str)}")

    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"device": device, "chosen": chosen("seed"), "cases": results}, f, indent=2,
                  default=str)

    print()
    print(f"table config: BLOCK {BM}x{BN}x{BK}, GROUP_M {args.group_m}, warps {args.warps}, "
          f"stages {args.stages}; device {device['name']!r}, gcnArchName "
          f"{device['gcnArchName']!r}, tunekit name {device['tunekit_hardware_name']!r}"
          + (f", CLI export equal: {device['cli_export_equal']}" if "cli_export_equal" in device
             else ""))
    head = f"{'case':26s} {'expect':6s} {'key ok':6s} {'config in code':14s} " \
           f"{'autotune skipped':16s} {'mm choices':10s} {'ok':3s}"
    print(head)
    print("-" * len(head))
    for r in results:
        if "error" in r:
            print(f"{r['case']:26s} {r['expected']:6s} error: {r['error'][:80]}")
            continue
        print(f"{r['case']:26s} {r['expected']:6s} {str(r['key_match']):6s} "
              f"{str(r['code_has_table_config']):14s} {str(r['autotune_skipped']):16s} "
              f"{str(r['mm_choices']):10s} {'yes' if r['as_expected'] else 'NO'}")
    return 0 if all(r["as_expected"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
