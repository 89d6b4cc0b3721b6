"""``tunekit.triton``: a drop-in for ``@triton.autotune`` whose winners go through tunekit's core.

``tunekit.triton.autotune`` takes Triton 3.x's arguments and returns a
``tunekit.triton.Autotuner``, a subclass of ``triton.runtime.autotuner.Autotuner``: ``cache``,
``best_config``, ``configs``, ``fn``, ``arg_names``, ``keys``, the hooks, ``do_bench`` and
``prune_configs`` behave as Triton's. What differs (docs/triton.md):

- a key this process has not tuned is resolved by a ``tunekit._core.Tuner`` built for the kernel:
  a winner stored in tunekit's winner cache (``$TUNEKIT_CACHE_DIR``) is used without benchmarking,
  ranks of ``autotune_pg`` (default: the default ``torch.distributed`` group) agree on one
  winner, ``TUNEKIT_AUTOTUNE`` (``off``, ``cached``, ``quick``, ``full``) says how much a launch
  may do, and a ``budget`` caps how many candidates a search measures;
- candidates are compiled ahead in ``compile_workers`` forked processes (default: one per CPU)
  while the GPU measures those already built, and are still timed by Triton's ``do_bench`` (or
  the ``do_bench=`` given); a candidate that runs out of resources or fails to compile scores
  +inf with its reason;
- a resolved launch (``kernel[grid](*args)`` with a key in ``cache``) is made in C;
- behaviours of Triton newer than 3.6 are on: pruning to one config skips benchmarking, a
  fractional ``top_k`` keeps at least one config and counts the configs left by
  ``early_config_prune``, the default ``reset_to_zero``/``restore_value`` hooks skip ``None``
  arguments, a key holding a ``tl.dtype`` is accepted;
- tunekit's winner cache is always used (turn it off with ``use_disk_cache=False``), and
  Triton's ``cache_results`` files are measurements made before: with ``cache_results=True`` a
  key that tunes takes the times of the file Triton would have read, and
  ``Autotuner.import_cache_results(path)`` takes those of any such files;
- keyword-only options beyond Triton's signature: those of ``tunekit.autotune`` that apply to a
  kernel (``Autotuner`` lists them) and ``compile_workers``.

Importing this module does not import Triton; ``autotune()`` and ``Autotuner`` do.
"""

from __future__ import annotations

from typing import Any

__all__ = ["autotune", "Autotuner"]


def autotune(configs: Any, key: Any, prune_configs_by: Any = None, reset_to_zero: Any = None,
             restore_value: Any = None, pre_hook: Any = None, post_hook: Any = None,
             warmup: Any = None, rep: Any = None, use_cuda_graph: bool = False,
             do_bench: Any = None, cache_results: bool = False, **options: Any) -> Any:
    """``triton.autotune`` with the same arguments (see Triton's documentation), plus the
    keyword-only tunekit options of ``Autotuner``. Stack it on ``@triton.jit`` (and
    ``@triton.heuristics``) and launch the kernel as ``kernel[grid](*args, **kwargs)``."""
    from ._autotuner import OPTIONS, Autotuner as cls

    unknown = sorted(set(options) - OPTIONS)
    if unknown:
        raise TypeError(f"autotune() got an unexpected keyword argument {unknown[0]!r} (the "
                        f"tunekit options: {', '.join(sorted(OPTIONS))})")

    def decorator(fn: Any) -> Any:
        return cls(fn, fn.arg_names, configs, key, reset_to_zero, restore_value,
                   pre_hook=pre_hook, post_hook=post_hook, prune_configs_by=prune_configs_by,
                   warmup=warmup, rep=rep, use_cuda_graph=use_cuda_graph, do_bench=do_bench,
                   cache_results=cache_results, **options)

    return decorator


def __getattr__(name: str) -> Any:
    if name == "Autotuner":
        from ._autotuner import Autotuner

        return Autotuner
    raise AttributeError(f"module 'tunekit.triton' has no attribute {name!r}")
