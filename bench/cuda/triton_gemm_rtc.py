"""Triton's autotuner beside tunekit's runtime-compiled GEMM: an fp32 Triton matmul (IEEE fp32
products, no TF32) on the same operands and layout as gemm_rtc_kernel.cuh (A is K x M, B is K x N,
C is M x N column major), tuned by triton.autotune over a space of block tiles, warps and
pipeline stages. Reports the space size, time to tune with a cold Triton cache (compiling every
config) and with a warm one, and the winner's TFLOP/s against cuBLAS fp32 (torch.matmul with TF32
off) on the same run.

    python3 triton_gemm_rtc.py --out triton_gemm.json [--size 4096]
"""

import argparse
import itertools
import json
import os
import tempfile
import time

# A fresh compilation cache: the first tuning compiles every config, as a user's first run would.
os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="tunekit-triton-gemm-"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

SPACE = [
    dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=w, num_stages=s)
    for bm, bn, bk, w, s in itertools.product(
        (32, 64, 128), (32, 64, 128), (16, 32), (4, 8), (2, 3, 4))
]


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BLOCK_M)
    num_n = tl.cdiv(N, BLOCK_N)
    group = GROUP_M * num_n
    first_m = (pid // group) * GROUP_M
    size_m = min(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc += tl.dot(tl.load(a), tl.load(b), input_precision="ieee")
        a += BLOCK_K * stride_ak
        b += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc)


def autotuned():
    configs = [
        triton.Config({"BLOCK_M": c["BLOCK_M"], "BLOCK_N": c["BLOCK_N"], "BLOCK_K": c["BLOCK_K"],
                       "GROUP_M": 8}, num_warps=c["num_warps"], num_stages=c["num_stages"])
        for c in SPACE
    ]
    return triton.autotune(configs=configs, key=["M", "N", "K"])(matmul_kernel)


def run(kernel, a, b, c, m, n, k):
    grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
    # a is K x M (a[k][m]), b is K x N, c is M x N column major (c[n][m]).
    kernel[grid](a, b, c, m, n, k, 1, m, n, 1, 1, m)


def tune(a, b, c, m, n, k):
    kernel = autotuned()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    run(kernel, a, b, c, m, n, k)
    torch.cuda.synchronize()
    return kernel, time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    m = n = k = args.size
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.rand((k, m), device="cuda", generator=gen) - 0.5
    b = torch.rand((k, n), device="cuda", generator=gen) - 0.5
    c = torch.empty((n, m), device="cuda")  # column major M x N
    ref = torch.matmul(a.t(), b).t().contiguous()

    kernel, cold_s = tune(a, b, c, m, n, k)
    error = ((c - ref).norm() / ref.norm()).item()
    _, warm_s = tune(a, b, c, m, n, k)  # a new autotuner: measures again, compiles nothing
    best = kernel.best_config
    flops = 2.0 * m * n * k
    winner_ms = triton.testing.do_bench(lambda: run(kernel, a, b, c, m, n, k), warmup=50, rep=200)
    out = torch.empty((m, n), device="cuda")
    cublas_ms = triton.testing.do_bench(lambda: torch.matmul(a.t(), b, out=out), warmup=50,
                                        rep=200)
    result = {
        "size": args.size,
        "device": torch.cuda.get_device_name(),
        "triton": triton.__version__,
        "torch": torch.__version__,
        "space_size": len(SPACE),
        "tune_cold_s": cold_s,
        "tune_warm_s": warm_s,
        "winner": {**best.kwargs, "num_warps": best.num_warps, "num_stages": best.num_stages},
        "winner_ms": winner_ms,
        "winner_tflops": flops / (winner_ms * 1e-3) / 1e12,
        "cublas_tflops": flops / (cublas_ms * 1e-3) / 1e12,
        "winner_vs_cublas": cublas_ms / winner_ms,
        "relative_error": error,
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    return 0 if error < 1e-4 else 1


if __name__ == "__main__":
    raise SystemExit(main())
