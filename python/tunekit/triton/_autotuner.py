"""``tunekit.triton.Autotuner``: Triton's autotuner with its benchmarking routed through the core.

Triton's ``Autotuner.run`` files each launch under a key (the ``key=[...]`` arguments' values, then
``str(arg.dtype)`` of every argument with a dtype) in its in-process ``cache``. This subclass keeps
that key and that dict; on a miss it prunes as Triton does and asks a ``tunekit._core.Tuner`` for
the config: the core answers from its winner cache on disk when it can, else measures the kept
candidates with ``_TritonBench`` (Triton's ``do_bench`` around one launch with the hooks) and
records the times; the winner is stored in ``cache[key]`` and launched as Triton launches it.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import re
import time
import warnings
import weakref
from typing import Any, Callable, Sequence

import triton
from triton import knobs
from triton.runtime.autotuner import Autotuner as _TritonAutotuner
from triton.runtime.errors import AutotunerError, OutOfResources, PTXASError
from triton.runtime.jit import JITFunction

from .. import _core, _triton
from .._autotune import _deferred, _log, _source_text, search_and_table_options
from .._comm import communicator_for
from .._describe import describe
from .._measure import dependencies as _dependencies, torch_hardware
from ._cache_results import TritonCacheResults, files_below, read_file as read_cache_results
from ._compile import CompilePool, default_workers

__all__ = ["Autotuner", "OPTIONS", "core_key", "describe_triton_config"]


def _compile_errors() -> tuple[type[BaseException], ...]:
    """The failures Triton's ``_bench`` scores +inf; any other exception of a candidate stops
    tuning and reaches the caller, as in Triton."""
    errors: list[type[BaseException]] = [OutOfResources, PTXASError]
    try:
        from triton.compiler.errors import CompileTimeAssertionFailure
        errors.append(CompileTimeAssertionFailure)
    except ImportError:  # pragma: no cover - a Triton without it
        pass
    return tuple(errors)


def core_key(value: Any) -> Any:
    """Triton's key tuple as the core takes it: ints, floats, bools and strings as they are,
    nested tuples kept, anything else (a ``tl.dtype``, ``None``, an object) as ``str()``."""
    if isinstance(value, tuple):
        return tuple(core_key(v) for v in value)
    if isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def describe_triton_config(config: Any) -> dict[str, Any]:
    """The fields the core records for one ``triton.Config``: its ``all_kwargs()`` (the
    meta-parameters, ``num_warps``, ``num_ctas``, ``num_stages``, ``maxnreg``, ``ir_override``)
    described as ``tunekit.autotune`` describes values, plus ``pre_hook`` when it has one."""
    out = {k: describe(v, f"triton.Config field {k!r}") for k, v in config.all_kwargs().items()}
    if getattr(config, "pre_hook", None) is not None:
        out["pre_hook"] = describe(config.pre_hook, "triton.Config pre_hook")
    return out


def _jit_function(fn: Any) -> Any:
    seen = 0
    while fn is not None and not isinstance(fn, JITFunction) and seen < 16:
        fn = getattr(fn, "fn", None)
        seen += 1
    return fn if isinstance(fn, JITFunction) else None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class _FatalCandidate(Exception):
    """Holds an exception of a candidate that Triton would not score +inf."""


class _TritonBench:
    """The core's measurer for a Triton autotuner: one ``do_bench(kernel_call, quantiles=(0.5,
    0.2, 0.8))`` per candidate, as Triton's ``_bench`` does (so ``do_bench=``, ``warmup``/``rep``
    and ``use_cuda_graph`` keep their meaning); the median is reported as each run's time.
    Out-of-resources and compile errors fail the candidate (+inf, with their message as the
    reason); any other exception stops tuning and is re-raised to the launch."""

    name = "triton"

    def __init__(self, owner: "Autotuner") -> None:
        self.owner = owner
        self.timings: dict[int, list[float]] = {}
        self.fatal: BaseException | None = None

    def measure(self, run: Callable[[], None], request: Any) -> list[float]:
        owner = self.owner
        # request.index is the candidate's place in the list being measured; its place in
        # ``configs`` is found from its described fields.
        index = owner._described_index[tuple(sorted(request.config.items()))]
        config = owner.configs[index]
        if knobs.autotuning.print:
            print(f"Autotuning kernel {owner.base_fn.__name__} with config {config}")
        if owner._pool is not None:
            owner._pool.wait(index)  # its compile, started ahead
        try:
            result = owner.do_bench(run, quantiles=(0.5, 0.2, 0.8))
        except owner._soft_errors as e:
            if knobs.autotuning.print:
                print(f"Autotuning failed with {e}")
            self.timings[index] = [float("inf")] * 3
            raise
        except (_core.FatalCandidateError, KeyboardInterrupt):
            raise
        except Exception as e:
            self.fatal = e
            raise _core.FatalCandidateError(f"{type(e).__name__}: {e}") from e
        times = [float(t) for t in result] if isinstance(result, (list, tuple)) \
            else [float(result)]
        self.timings[index] = times
        return [times[0]] * max(1, int(request.runs))


#: The keyword-only options beyond Triton's signature (those of ``tunekit.autotune`` that apply
#: to a Triton kernel, plus ``compile_workers`` and ``autotune_pg``).
OPTIONS = frozenset({"name", "version", "budget", "strategy", "seed", "batch_size", "lookahead",
                     "start_configs", "transfer_from_cache", "use_disk_cache", "artifact_name",
                     "key_names", "lookup_table", "op_name", "table_params", "template_hashes",
                     "hardware", "dependencies", "deferred", "parallel_split", "key_buckets",
                     "on_miss", "nearest_over", "autotune_pg", "compile_workers"})


class Autotuner(_TritonAutotuner):
    """``triton.runtime.autotuner.Autotuner`` (same constructor, attributes and launch) whose
    misses are resolved by tunekit's core. Keyword-only additions: ``name`` (the winner cache's
    tuner name; default: the kernel's name), ``version`` (default: a hash of Triton's version,
    the kernel's source and the described configs); as in ``tunekit.autotune``: ``budget``
    (evaluations or a ``tunekit.Budget``), ``strategy``, ``seed``, ``batch_size``,
    ``lookahead``, ``start_configs`` (a list of ``triton.Config``), ``transfer_from_cache``,
    ``use_disk_cache`` (True), ``artifact_name``, ``key_names``, ``lookup_table``, ``op_name``,
    ``table_params``, ``template_hashes``, ``hardware``, ``dependencies``, ``deferred`` (with
    ``tunekit.arm``), ``parallel_split``, ``key_buckets`` (by ``key=[...]`` name or position)
    ``on_miss`` and ``nearest_over``; ``autotune_pg``: the ``torch.distributed`` group (or
    communicator) whose ranks agree on every winner (None: the default group);
    ``compile_workers``: processes that compile candidates ahead of their measurement (None:
    one per CPU; 0: compile at the first launch, as Triton does). tunekit's winner cache replaces
    Triton's ``cache_results`` files; with ``cache_results=True`` (or
    ``TRITON_CACHE_AUTOTUNING=1``) a key that tunes first takes the measurements of the file
    Triton would have read for it, and ``import_cache_results(path)`` takes those of any such
    files."""

    def __init__(self, fn: Any, arg_names: Sequence[str], configs: Any, key: Sequence[str],
                 reset_to_zero: Any, restore_value: Any, pre_hook: Any = None,
                 post_hook: Any = None, prune_configs_by: Any = None, warmup: Any = None,
                 rep: Any = None, use_cuda_graph: bool = False, do_bench: Any = None,
                 cache_results: bool = False, *, name: str | None = None,
                 version: str | None = None, budget: Any = None, strategy: str = "",
                 seed: int = 0, batch_size: int = 1, lookahead: int | None = None,
                 start_configs: Sequence[Any] = (), transfer_from_cache: bool = False,
                 use_disk_cache: bool = True, artifact_name: str = "",
                 key_names: Sequence[str] = (), lookup_table: Any = None, op_name: str = "",
                 table_params: Any = None, template_hashes: Any = None, hardware: Any = None,
                 dependencies: Any = None, deferred: bool = False, parallel_split: bool = False,
                 key_buckets: Any = None, on_miss: str = "tune",
                 nearest_over: Sequence[Any] = (), autotune_pg: Any = None,
                 compile_workers: int | None = None) -> None:
        super().__init__(fn, arg_names, configs, key, reset_to_zero, restore_value,
                         pre_hook=pre_hook, post_hook=post_hook,
                         prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench,
                         cache_results=cache_results)
        # Triton's own disk cache is not Triton's to consult: the winner cache stands for it, and
        # its files are measurements made before (_cache_results.py).
        read_triton_cache = bool(getattr(self, "cache_results", cache_results))
        self._prior = TritonCacheResults(self, read_triton_cache=read_triton_cache)
        self.cache_results = False
        # The default hooks, skipping None arguments (newer Triton does).
        if not self.user_defined_pre_hook and (self.reset_to_zero or self.restore_value):
            self.pre_hook = self._default_pre_hook
        if not self.user_defined_post_hook and self.restore_value:
            self.post_hook = self._default_post_hook
        self.described = [describe_triton_config(c) for c in self.configs]
        self._described_index = {tuple(sorted(d.items())): i
                                 for i, d in reversed(list(enumerate(self.described)))}
        base_name = name or getattr(self.base_fn, "__name__", None) or "kernel"
        self.name = re.sub(r"[^A-Za-z0-9_.-]", "_", base_name)
        self.version = version or self._code_version()
        if compile_workers is None:
            compile_workers = default_workers() if len(self.configs) > 1 else 0
        if compile_workers < 0:
            raise ValueError("autotune: compile_workers must be >= 0 (0: no compile pool)")
        self.compile_workers = compile_workers
        if lookahead is None:  # enough proposals ahead to keep the pool busy while one is timed
            lookahead = compile_workers
        self._options: dict[str, Any] = {
            "warmup": 0, "runs": 1, "statistic": "mean",
            **search_and_table_options(
                budget=budget, strategy=strategy, seed=seed, batch_size=batch_size,
                lookahead=lookahead,
                start_configs=[describe_triton_config(c) for c in start_configs],
                transfer_from_cache=transfer_from_cache, use_disk_cache=use_disk_cache,
                artifact_name=artifact_name, key_names=key_names, lookup_table=lookup_table,
                op_name=op_name, table_params=table_params,
                template_hashes=template_hashes, deferred=deferred,
                parallel_split=parallel_split, key_buckets=key_buckets,
                key_names_for_buckets=list(self.keys), on_miss=on_miss,
                nearest_over=nearest_over, rerank=False,
                where="tunekit.triton.autotune"),
        }
        self._pg = autotune_pg
        self._pool: CompilePool | None = None
        self._hardware = dict(hardware) if hardware is not None else None
        self._extra_dependencies = dict(dependencies or {})
        self._tuner: Any = None
        self._bench_state: _TritonBench | None = None
        self._soft_errors = _compile_errors()
        self._last: str | None = None
        self.bench_time = 0.0
        self.configs_timings: dict[Any, list[float]] = {}
        # key_of's shortcuts: where the key's arguments are and str() of each dtype seen.
        self._key_positions: list[int] | None = None
        self._arg_set: frozenset[str] = frozenset()
        self._dtype_texts: dict[Any, str] = {}
        self._launch: Any = None  # the C launch (see __getitem__), built at the first one
        if deferred:
            _deferred.append(weakref.ref(self))

    # -- identity -------------------------------------------------------------------------------

    def _code_version(self) -> str:
        # The JITFunction's source (decorators stripped), else the first ``src`` down the
        # ``fn`` chain (a wrapper's), else the Python function's source.
        src = getattr(_jit_function(self.fn), "src", None)
        obj, depth = self.fn, 0
        while not isinstance(src, str) and obj is not None and depth < 16:
            src = getattr(obj, "src", None)
            obj, depth = getattr(obj, "fn", None), depth + 1
        if not isinstance(src, str):
            src = _source_text(self.base_fn)
        space = repr([sorted(d.items()) for d in self.described])
        return f"triton-{triton.__version__}-{_digest(src)}-{_digest(space)}"

    @property
    def tuner(self) -> Any:
        """The core's tuner for this kernel, built at the first miss (so that it reads the
        environment then)."""
        if self._tuner is None:
            if self._bench_state is None:
                self._bench_state = _TritonBench(self)
            options = dict(self._options)
            if self.compile_workers > 0 and _jit_function(self.fn) is not None:
                self._pool = CompilePool(self, self.compile_workers)
                options["preparer"] = self._pool
            options["prior"] = self._prior
            options.update(
                measurer=self._bench_state, host_sync=None,
                hardware=self._hardware if self._hardware is not None else torch_hardware(),
                dependencies={**_dependencies(), **self._extra_dependencies}, log=_log)
            self._tuner = _core.Tuner(self.name, self.described, self.version, options)
        return self._tuner

    def arm(self, pg: Any = None) -> None:
        """Deferred mode (``deferred=True``): a collective rendezvous on ``pg`` (None: this
        autotuner's ``autotune_pg``) after which the next launch of each key tunes; call it on
        every rank (``tunekit.arm()`` arms every deferred tuner)."""
        self.tuner.arm(communicator_for(pg if pg is not None else self._pg))

    def recorded_keys(self) -> list[tuple[Any, ...]]:
        """Keys launched in deferred mode before ``arm``, in first-launch order."""
        return list(self.tuner.recorded_keys())

    def last_source(self) -> str | None:
        """Which source answered the last miss: the core's (``search``, ``cache``, ``memory``,
        ``disabled``...), ``pruned`` (pruning left one config), or None."""
        return self._last

    def import_cache_results(self, path: str | os.PathLike[str]) -> int:
        """Takes the measurements of Triton's ``cache_results`` files (``<kernel>.autotune.json``,
        as ``@triton.autotune(..., cache_results=True)`` writes them): the file `path`, or every
        such file of this kernel below the folder `path` (Triton's cache folder, say). A key that
        tunes afterwards takes the times they hold for its configs instead of measuring them, and
        measures only the configs they lack. Returns how many measurements were taken (configs of
        this autotuner's space). A bad file named by `path` raises ``ValueError``; below a folder
        it is skipped with a warning."""
        name = getattr(_jit_function(self.fn), "__name__", None) or self.name
        files = files_below(path, name)
        taken = 0
        for f in files:
            try:
                key, records = read_cache_results(f)
            except ValueError as e:
                if len(files) == 1 and not os.path.isdir(path):
                    raise
                warnings.warn(f"tunekit.triton: {e}; skipped", stacklevel=2)
                continue
            taken += self._prior.add(key, records)
        return taken

    def cache_path(self, key: tuple[Any, ...]) -> str:
        """Where the winner cache entry of Triton's ``key`` tuple lives."""
        return self.tuner.cache_path(core_key(tuple(key)), None)

    # -- Triton's behaviour, with newer Triton's fixes --------------------------------------------

    def _default_pre_hook(self, kwargs: dict[str, Any], reset_only: bool = False) -> None:
        for name in self.reset_to_zero:
            if kwargs.get(name) is not None:
                kwargs[name].zero_()
        if not reset_only:
            self.restore_copies = {name: kwargs[name].clone() for name in self.restore_value
                                   if kwargs.get(name) is not None}

    def _default_post_hook(self, kwargs: dict[str, Any], exception: Any) -> None:
        for name, copy in getattr(self, "restore_copies", {}).items():
            kwargs[name].copy_(copy)
        self.restore_copies = {}

    def key_of(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """The key Triton's ``run`` files this launch under: the ``key=[...]`` arguments'
        values, then ``str(arg.dtype)`` of every named argument with a ``dtype``, in the order
        Triton's ``run`` sees them (positional, then keyword)."""
        positions = self._key_positions
        if positions is None:
            names = list(self.arg_names)
            self._arg_set = frozenset(names)
            positions = self._key_positions = [names.index(k) for k in self.keys if k in names]
        if kwargs and not self._arg_set.isdisjoint(kwargs):
            return _triton.key_of(self, args, kwargs)
        # The kernel's arguments all positional (a launch's own keywords, grid and warmup, are
        # not the kernel's): the key's positions were worked out once.
        n = len(args)
        key = [args[i] for i in positions if i < n]
        texts = self._dtype_texts
        for arg in args[:len(self.arg_names)]:
            dtype = getattr(arg, "dtype", None)
            if dtype is not None or hasattr(arg, "dtype"):
                try:
                    text = texts.get(dtype)
                except TypeError:  # an unhashable dtype
                    text = None
                if text is None:
                    text = str(dtype)
                    try:
                        texts[dtype] = text
                    except TypeError:
                        pass
                key.append(text)
        return tuple(key)

    def prune_configs(self, kwargs: dict[str, Any]) -> list[Any]:
        """Triton's pruning: ``early_config_prune(configs, named_args, **kwargs)``, then the
        ``top_k`` best by ``perf_model``; a fractional ``top_k`` is a share of the configs left
        by ``early_config_prune``, at least one."""
        pruned = self.configs
        if self.early_config_prune:
            pruned = self.early_config_prune(self.configs, self.nargs, **kwargs)
            if not pruned:
                raise AutotunerError("No valid autotuner configs after pruning. "
                                     "`early_config_prune` should return at least one config.")
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = builtins.max(1, int(len(pruned) * top_k))
            elif not isinstance(top_k, int):
                raise TypeError("Error while pruning configs, top_k must be either 1) a float "
                                "<= 1.0 or 2) an int")
            if len(pruned) > top_k:
                est = {config: self.perf_model(**self.nargs, **kwargs, **config.all_kwargs())
                       for config in pruned}
                pruned = sorted(est.keys(), key=lambda c: est[c])[:top_k]
        return list(pruned)

    def _kernel_call(self, config: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """One launch of a candidate with the hooks, as Triton's ``_bench`` makes it."""
        current = dict(kwargs, **config.all_kwargs())
        full_nargs = {**self.nargs, **current}
        if config.pre_hook:
            config.pre_hook(full_nargs)
        self.pre_hook(full_nargs)
        try:
            self.fn.run(*args, **current)
        except Exception as e:
            try:
                self.post_hook(full_nargs, exception=e)
            finally:
                raise
        self.post_hook(full_nargs, exception=None)

    def _indices(self, pruned: Sequence[Any]) -> set[int]:
        kept: set[int] = set()
        for c in pruned:
            for i, own in enumerate(self.configs):
                if own is c:
                    kept.add(i)
                    break
            else:
                for i, own in enumerate(self.configs):
                    if own == c:
                        kept.add(i)
                        break
                else:
                    raise AutotunerError(f"pruning returned a config that is not one of the "
                                         f"autotuner's configs: {c}")
        return kept

    def _resolve(self, key: tuple[Any, ...], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> Any:
        """The config of a key not in ``cache``: pruned as Triton prunes, then the core's answer
        (the winner cache, else a measurement of the kept configs)."""
        pruned = self.prune_configs(kwargs)
        if len(pruned) == 1:  # nothing to compare: no benchmark (newer Triton)
            self._last = "pruned"
            self.cache[key] = pruned[0]
            return pruned[0]
        for c in pruned:
            conflicts = kwargs.keys() & c.kwargs.keys()
            if conflicts:
                raise ValueError(f"Conflicting meta-parameters: {', '.join(conflicts)}."
                                 " Make sure that you don't re-define auto-tuned symbols.")
        kept = self._indices(pruned)
        self._prior.pruned = pruned
        tuner = self.tuner
        bench = self._bench_state
        assert bench is not None
        bench.timings = {}
        bench.fatal = None
        configs = self.configs

        def run(i: int) -> None:
            self._kernel_call(configs[i], args, kwargs)

        start = time.time()
        pool = self._pool
        if pool is not None:
            pool.begin(args, kwargs)
        try:
            index = tuner.resolve(core_key(key), lambda i: i in kept, run, False,
                                  communicator_for(self._pg), None, False, None, None, None)
        except _core.FatalCandidateError:
            if bench.fatal is not None:
                fatal, bench.fatal = bench.fatal, None
                raise fatal from None
            raise
        except _core.NoValidConfigError:
            # Every candidate failed: Triton keeps the first (all scored +inf); its launch
            # raises the real error.
            index = min(kept)
        finally:
            if pool is not None:
                pool.end()
        self.bench_time = time.time() - start
        self._last = tuner.last_source()
        config = configs[index]
        if tuner.find(core_key(key), None) is not None or self._last == "search":
            self.cache[key] = config
        if bench.timings:
            self.configs_timings = {configs[i]: t for i, t in sorted(bench.timings.items())}
            full_nargs = {**self.nargs, **kwargs, **config.all_kwargs()}
            self.pre_hook(full_nargs, reset_only=True)
        return config

    def __getitem__(self, grid: Any) -> Any:
        """``kernel[grid]``: the launch bound to ``grid``. A launch whose kernel arguments are
        all positional and whose key is in ``cache`` is built and made in C
        (``tunekit._core.TritonLaunch``: the key, one lookup, ``fn.run`` with the winner's
        keywords taken once); every other launch calls ``run``."""
        launch = self._launch
        if launch is None:
            launch = self._launch = self._make_launch()
        return launch[grid]

    def _make_launch(self) -> Any:
        names = list(self.arg_names)
        positions = tuple(names.index(k) for k in self.keys if k in names)
        return _core.TritonLaunch(self, self.fn.run, self.run, positions, names)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """A launch, as Triton's ``run``: the key's config from ``cache``, else resolved (see
        ``_resolve``); a kernel with one config launches it."""
        self.nargs = dict(zip(self.arg_names, args))
        used_cached_result = True
        key: Any = None
        if len(self.configs) > 1:
            key = self.key_of(args, kwargs)
            if key in self.cache:
                config = self.cache[key]
            else:
                config = self._resolve(key, args, kwargs)
                used_cached_result = self._last not in ("search", "table_search")
        else:
            config = self.configs[0]
        self.best_config = config
        if knobs.autotuning.print and not used_cached_result:
            print(f"Triton autotuning for function {self.base_fn.__name__},\nwith key as {key},\n"
                  f"finished after {self.bench_time:.2f}s,\nbest config selected: "
                  f"{self.best_config};")
        if config.pre_hook is not None:
            full_nargs = {**self.nargs, **kwargs, **config.all_kwargs()}
            config.pre_hook(full_nargs)
        ret = self.fn.run(*args, **kwargs, **config.all_kwargs())
        self.nargs = None  # type: ignore[assignment]
        return ret

    def __repr__(self) -> str:
        return f"<tunekit.triton.Autotuner {self.name} ({len(self.configs)} configs)>"


# contextual_autotune takes over this class's launches too.
_triton.register_autotuner_class(Autotuner)
