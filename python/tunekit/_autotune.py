"""``tunekit.autotune``: the seed's function-level tuner over the C++ core.

A decorated function resolves its config per key through the core's chain (in-process winners, the
winner cache on disk, artifacts, lookup tables, else a search that measures every candidate the
prune function keeps), and is called with the winner's fields as keyword arguments. A resolved key
is served from a dict in Python: the hot path is ``key_fn``, one dict lookup and the call.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import os
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TypedDict, Union

if TYPE_CHECKING:
    from typing_extensions import Unpack

from . import _core
from ._comm import communicator_for
from ._describe import describe, describe_config
from ._inplace import ArgumentResets, parameter_names
from ._measure import (TIMINGS, CudaEventMeasurer, CudaGraphMeasurer, cuda_in_use, dependencies,
                       host_sync, torch_hardware)

__all__ = ["autotune", "AutoTuner", "TunekitWarning", "Budget", "arm", "EFFORTS"]

_NO_KEY = object()

#: The levels of ``TUNEKIT_AUTOTUNE`` and of the per-call ``autotune_effort``.
EFFORTS = ("off", "cached", "quick", "full")

#: How lookup table keys are written (``table_key_format``, ``export_table(key_format=...)``):
#: tunekit's canonical text, or PyTorch Inductor's (docs/lookup_tables.md).
TABLE_KEY_FORMATS = ("tunekit", "inductor")

# Keys of a config dict that describe its template instead of being keyword arguments.
_TEMPLATE_ID = "template_id"
_TEMPLATE_HASH = "template_hash"


@dataclasses.dataclass(frozen=True)
class Budget:
    """How much a search may spend (the C++ ``search_budget``): at most ``evaluations``
    candidates measured, ``time_s`` seconds of wall time (0: no limit; compiles count, and a
    batch is started only where the recent batches say it ends within it) and ``patience``
    evaluations in a row without a better time (0: no limit). Kept spaces of at most
    ``evaluations`` configs are measured whole, unless ``time_s`` or ``patience`` is set: then
    the strategy orders them and the search stops by that limit, or once every config is
    measured."""

    evaluations: int = 1000
    time_s: float = 0.0
    patience: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.evaluations, bool) or not isinstance(self.evaluations, int) \
                or self.evaluations < 1:
            raise ValueError(f"Budget: evaluations must be an int >= 1, not {self.evaluations!r}")
        if not isinstance(self.time_s, (int, float)) or self.time_s < 0:
            raise ValueError(f"Budget: time_s must be >= 0, not {self.time_s!r}")
        if isinstance(self.patience, bool) or not isinstance(self.patience, int) \
                or self.patience < 0:
            raise ValueError(f"Budget: patience must be an int >= 0, not {self.patience!r}")


@dataclasses.dataclass(frozen=True)
class Rerank:
    """The re-rank of a search's leaders (the C++ ``rerank_settings``, docs/search.md): after
    the search, the candidates within ``band`` (relative) of the best, where their runs or the
    best's show noise, at most ``leaders`` of them, are measured again in ``rounds`` interleaved
    rounds of ``runs`` timed runs each (0: the policy's ``runs``); the policy's statistic over
    those runs decides among them. ``rerank=False`` turns it off."""

    band: float = 0.03
    leaders: int = 4
    rounds: int = 3
    runs: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.band, bool) or not isinstance(self.band, (int, float)) \
                or not self.band >= 0:
            raise ValueError(f"Rerank: band must be a number >= 0, not {self.band!r}")
        for name in ("leaders", "rounds", "runs"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"Rerank: {name} must be an int >= 0, not {v!r}")


def _rerank(rerank: Union[Rerank, bool, None]) -> Rerank:
    if rerank is None or rerank is True:
        return Rerank()
    if rerank is False:
        return Rerank(band=0)
    if isinstance(rerank, Rerank):
        return rerank
    raise TypeError(f"autotune: rerank must be a tunekit.Rerank or a bool, not {rerank!r}")


def key_positions(values: Sequence[Union[int, str]], names: Sequence[str], what: str,
                  where: str) -> list[int]:
    """Key values named by position or by name (``key_names``; a Triton kernel's ``key``)."""
    out = []
    for at in values:
        if isinstance(at, str):
            if at not in names:
                raise ValueError(f"{where}: {what} names the key value {at!r}, which is not one "
                                 f"of the key's names {list(names)}")
            out.append(list(names).index(at))
        elif isinstance(at, int) and not isinstance(at, bool) and at >= 0:
            out.append(at)
        else:
            raise TypeError(f"{where}: {what} holds a position (an int >= 0) or a key name, not "
                            f"{at!r}")
    return out


def _budget(budget: Union[int, Budget, None]) -> Budget:
    if budget is None:
        return Budget()
    if isinstance(budget, Budget):
        return budget
    if isinstance(budget, int) and not isinstance(budget, bool):
        return Budget(evaluations=budget)
    raise TypeError(f"autotune: budget must be an int (evaluations) or a tunekit.Budget, not "
                    f"{type(budget).__name__}")


# Every AutoTuner built with deferred=True, in creation order (the same on every rank when the
# ranks import the same modules): what tunekit.arm() arms.
_deferred: list["weakref.ref[AutoTuner]"] = []


def arm(pg: Any = None) -> int:
    """Arms every tuner of this process built with ``deferred=True``: a collective rendezvous
    on ``pg`` (a ``torch.distributed`` group, an ``mpi4py`` communicator, a
    ``tunekit.Communicator``; None: the default group, else a single process) per tuner, after
    which the next call of each key tunes. Call it on every rank at the moment the application
    chooses (after warmup, when every rank is ready). Returns how many tuners were armed."""
    armed = 0
    for ref in list(_deferred):
        t = ref()
        if t is not None:
            t.arm(pg)
            armed += 1
    return armed


class TunekitWarning(UserWarning):
    """A stored file tunekit skipped (a corrupt or mismatched winner cache entry) or recorded
    dependencies that changed."""


def _log(level: str, message: str) -> None:
    if level == "info":
        print(f"[tunekit] INFO {message}", flush=True)
    else:
        warnings.warn(message, TunekitWarning, stacklevel=2)


def _source_text(fn: Callable[..., Any]) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        # No source file (an interactive session, generated code): the compiled code stands in.
        code = getattr(fn, "__code__", None)
        if code is None:
            return repr(fn)
        return repr((code.co_code, code.co_consts, code.co_names, code.co_varnames))


def code_version(fn: Callable[..., Any], described: Sequence[dict[str, Any]]) -> str:
    """The code identity a decorated function's cache entries carry: a hash of its source and a
    hash of the described config space, so that editing the function or changing the space is a
    miss."""
    src = hashlib.sha256(_source_text(fn).encode()).hexdigest()[:16]
    space = hashlib.sha256(repr([sorted(d.items()) for d in described]).encode()).hexdigest()[:16]
    return f"py-{src}-{space}"


def pow2() -> tuple[str]:
    """A key bucket: the next power of two at or above the value (100 -> 128); values of 1 or
    less stay as they are. For ``key_buckets={"M": tunekit.pow2()}``."""
    return ("pow2",)


def edges(*values: int) -> tuple[str, tuple[int, ...]]:
    """A key bucket: the first of ``values`` (strictly ascending) at or above the value; above
    the last, the last. ``tunekit.edges(1, 16, 64, 256)``."""
    return ("edges", tuple(int(v) for v in values))


def multiple(m: int) -> tuple[str, int]:
    """A key bucket: the next multiple of ``m`` at or above the value."""
    return ("multiple", int(m))


def bucket_options(key_buckets: Mapping[Union[int, str], Any] | None,
                   names: Sequence[str], where: str) -> list[tuple[int, str, Any]]:
    """``key_buckets`` as the core takes them: (position, rule, argument) per bucketed value. A
    key value is named by its position in the key or by its name in ``names`` (``key_names``;
    for a Triton kernel, its ``key=[...]``); a rule is ``pow2()``, ``edges(...)``,
    ``multiple(m)`` or the string ``"pow2"``."""
    out: list[tuple[int, str, Any]] = []
    for at, rule in (key_buckets or {}).items():
        if isinstance(at, str):
            if at not in names:
                raise ValueError(f"{where}: key_buckets names the key value {at!r}, which is not "
                                 f"one of the key's names {list(names)}")
            position = list(names).index(at)
        elif isinstance(at, int) and not isinstance(at, bool) and at >= 0:
            position = at
        else:
            raise TypeError(f"{where}: a key_buckets key is a position (an int >= 0) or a key "
                            f"name, not {at!r}")
        if rule == "pow2":
            rule = pow2()
        if not isinstance(rule, tuple) or not rule or rule[0] not in ("pow2", "edges",
                                                                      "multiple"):
            raise ValueError(f"{where}: key_buckets[{at!r}] is {rule!r}, not tunekit.pow2(), "
                             "tunekit.edges(...) or tunekit.multiple(m)")
        arg = None if rule[0] == "pow2" else (list(rule[1]) if rule[0] == "edges" else rule[1])
        out.append((position, rule[0], arg))
    return out


def search_and_table_options(*, budget: Union[int, Budget, None], strategy: str, seed: int,
                             batch_size: int, lookahead: int,
                             start_configs: list[dict[str, Any]], transfer_from_cache: bool,
                             use_disk_cache: bool, artifact_name: str, key_names: Sequence[str],
                             lookup_table: Any, op_name: str, table_params: Any,
                             template_hashes: Any, deferred: bool, parallel_split: bool,
                             key_buckets: Mapping[Union[int, str], Any] | None = None,
                             key_names_for_buckets: Sequence[str] = (), on_miss: str = "tune",
                             table_key_format: str = "tunekit",
                             rerank: Union[Rerank, bool, None] = None,
                             nearest_over: Sequence[Union[int, str]] = (),
                             where: str = "autotune") -> dict[str, Any]:
    """The core's options of the search, the disk cache, artifacts, lookup tables and the mode,
    as ``tunekit.autotune`` and ``tunekit.triton.autotune`` both pass them (``start_configs``
    already described)."""
    b = _budget(budget)
    if table_key_format not in TABLE_KEY_FORMATS:
        raise ValueError(f"{where}: table_key_format must be one of {TABLE_KEY_FORMATS}, not "
                         f"{table_key_format!r}")
    out: dict[str, Any] = {
        "use_disk_cache": use_disk_cache, "strategy": strategy,
        "max_evaluations": b.evaluations, "max_time_s": float(b.time_s),
        "patience": b.patience, "seed": seed, "batch_size": batch_size, "lookahead": lookahead,
        "start_configs": start_configs, "transfer_from_cache": transfer_from_cache,
        "artifact_name": artifact_name, "key_names": list(key_names), "op_name": op_name,
        "table_params": ({k: describe(v, f"table_params[{k!r}]")
                          for k, v in table_params.items()} if table_params else None),
        "template_hashes": dict(template_hashes or {}), "table_key_format": table_key_format,
        "deferred": deferred, "parallel_split": parallel_split,
        "key_buckets": bucket_options(key_buckets, key_names_for_buckets or key_names, where),
        "on_miss": on_miss,
        "nearest_over": key_positions(nearest_over, key_names_for_buckets or key_names,
                                      "nearest_over", where),
    }
    r = _rerank(rerank)
    out.update(rerank_band=float(r.band), rerank_leaders=r.leaders, rerank_rounds=r.rounds,
               rerank_runs=r.runs)
    if isinstance(lookup_table, (str, os.PathLike)):
        out["lookup_table_path"] = os.fspath(lookup_table)
    elif isinstance(lookup_table, Mapping):
        out["lookup_table_json"] = json.dumps(lookup_table)
    elif lookup_table is not None:
        raise TypeError(f"{where}: lookup_table must be a path, a dict or None")
    return out


class AutotuneOptions(TypedDict, total=False):
    """The keyword-only options of ``tunekit.autotune`` (and ``AutoTuner``), with their C++
    counterparts (docs/python.md has the table)."""

    name: str                                  # the tuner's name
    version: str                               # tuner_options::version
    measurer: Any                              # tuner_options::measurer
    timing: str                                # event_measurer_options::graph_launches
    warmup: int                                # measure_policy::warmup
    runs: int                                  # measure_policy::runs
    statistic: str                             # measure_policy::stat
    early_stop_factor: float                   # measure_policy::early_stop_factor
    early_stop_after: int                      # measure_policy::early_stop_after
    use_disk_cache: bool                       # tuner_options::use_disk_cache
    budget: Union[int, Budget, None]           # search_settings::budget
    strategy: str                              # search_settings::strategy
    seed: int                                  # search_settings::seed
    batch_size: int                            # search_settings::batch_size
    lookahead: int                             # search_settings::lookahead
    start_configs: Sequence[dict[str, Any]]    # search_settings::start_configs
    transfer_from_cache: bool                  # search_settings::transfer_from_cache
    artifact_name: str                         # artifact_options::name
    key_names: Sequence[str]                   # artifact_options::key_names
    default: Union[dict[str, Any], Callable[..., dict[str, Any]], None]  # with_default
    lookup_table: Union[str, "os.PathLike[str]", Mapping[str, Any], None]  # table.lookup_table
    op_name: str                               # table_options::op_name
    table_params: Union[Mapping[str, Any], None]  # table_options::params
    template_hashes: Union[Mapping[str, str], None]  # table_options::template_hashes
    table_key_format: str                      # table_options::key_format
    hardware: Union[Mapping[str, Any], None]   # tuner_options::hardware
    dependencies: Union[Mapping[str, str], None]  # tuner_options::dependencies
    deferred: bool                             # tuning_mode::deferred
    parallel_split: bool                       # tuner_options::parallel_split
    key_buckets: Union[Mapping[Union[int, str], Any], None]  # shape_options::buckets
    on_miss: str                               # shape_options::on_miss
    nearest_over: Sequence[Union[int, str]]    # shape_options::nearest_over
    rerank: Union[Rerank, bool, None]          # search_settings::rerank
    restore_value: Sequence[str]               # with_reset
    reset_to_zero: Sequence[str]               # with_reset
    pre_hook: Union[Callable[..., Any], None]  # with_reset
    post_hook: Union[Callable[..., Any], None]


class AutoTuner:
    """A decorated function's state: its space, key and prune functions, winners and the core's
    tuner. ``tunekit.autotune`` returns its ``hot_function()``, a plain function that carries it
    as ``.autotuner``; calling either returns what the decorated function returns, with the
    per-call options as keyword arguments (see ``__call__``). The keyword-only arguments are
    those of ``tunekit.autotune``."""

    def __init__(self, fn: Callable[..., Any], config_space: Sequence[dict[str, Any]],
                 key_fn: Callable[..., Any], prune_fn: Callable[..., bool] | None = None, *,
                 name: str | None = None, version: str | None = None, measurer: Any = None,
                 timing: str = "eager", warmup: int = 5, runs: int = 10, statistic: str = "mean",
                 early_stop_factor: float = 0.0, early_stop_after: int = 2,
                 use_disk_cache: bool = True, budget: Union[int, Budget, None] = None,
                 strategy: str = "", seed: int = 0, batch_size: int = 1, lookahead: int = 0,
                 start_configs: Sequence[dict[str, Any]] = (), transfer_from_cache: bool = False,
                 artifact_name: str = "", key_names: Sequence[str] = (),
                 default: Union[dict[str, Any], Callable[..., dict[str, Any]], None] = None,
                 lookup_table: Union[str, "os.PathLike[str]", Mapping[str, Any], None] = None,
                 op_name: str = "", table_params: Mapping[str, Any] | None = None,
                 template_hashes: Mapping[str, str] | None = None,
                 table_key_format: str = "tunekit",
                 hardware: Mapping[str, Any] | None = None,
                 dependencies: Mapping[str, str] | None = None, deferred: bool = False,
                 parallel_split: bool = False,
                 key_buckets: Mapping[Union[int, str], Any] | None = None,
                 on_miss: str = "tune", nearest_over: Sequence[Union[int, str]] = (),
                 rerank: Union[Rerank, bool, None] = None, restore_value: Sequence[str] = (),
                 reset_to_zero: Sequence[str] = (), pre_hook: Callable[..., Any] | None = None,
                 post_hook: Callable[..., Any] | None = None) -> None:
        if not callable(fn):
            raise TypeError("autotune: the decorated object is not callable")
        if not callable(key_fn):
            raise TypeError("autotune: key_fn must be callable")
        if prune_fn is not None and not callable(prune_fn):
            raise TypeError("autotune: prune_fn must be callable or None")
        if isinstance(config_space, dict) or not isinstance(config_space, Sequence):
            raise TypeError("autotune: config_space must be a list of dicts")
        configs = list(config_space)
        if not configs:
            raise ValueError("autotune: config_space cannot be empty")
        if warmup < 0 or runs < 1:
            raise ValueError("autotune: warmup must be >= 0 and runs >= 1")
        if timing not in TIMINGS:
            raise ValueError(f"autotune: timing must be one of {', '.join(TIMINGS)}, not "
                             f"{timing!r}")
        if timing != "eager" and measurer is not None:
            raise ValueError(f"autotune: timing={timing!r} chooses the measurer; pass it or "
                             "measurer=, not both")
        if default is not None and not callable(default) and not isinstance(default, dict):
            raise TypeError("autotune: default must be a config dict, a callable of the call's "
                            "arguments returning one, or None")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", None) or "function"
        self.key_fn = key_fn
        self.prune_fn = prune_fn
        hashes: dict[str, str] = dict(template_hashes or {})
        described = []
        for i, c in enumerate(configs):
            d = describe_config(c, i)
            h = d.pop(_TEMPLATE_HASH, None)
            if h is not None:
                tid = d.get(_TEMPLATE_ID)
                if not isinstance(tid, str) or not isinstance(h, str):
                    raise ValueError(f"autotune: config_space[{i}] has a template_hash without a "
                                     "str template_id (both must be strings)")
                if hashes.setdefault(tid, h) != h:
                    raise ValueError(f"autotune: config_space[{i}] gives template {tid!r} the "
                                     f"hash {h!r}, another config or template_hashes "
                                     f"{hashes[tid]!r}")
            described.append(d)
        self.described = described
        seen: dict[str, int] = {}
        for i, d in enumerate(self.described):
            text = repr(sorted(d.items()))
            if text in seen:
                raise ValueError(f"autotune: config_space[{i}] is described as config_space"
                                 f"[{seen[text]}] is ({d}); the candidates must differ")
            seen[text] = i
        accepted = parameter_names(fn)
        passes_template = accepted is not None and (accepted[1] or _TEMPLATE_ID in accepted[0])
        # What the function is called with: the config without its template metadata (the
        # template_id stays when the function takes it).
        self.configs = [{k: v for k, v in c.items()
                         if k != _TEMPLATE_HASH and (k != _TEMPLATE_ID or passes_template)}
                        for c in configs]
        self.fields = frozenset(f for c in self.configs for f in c)
        if accepted is not None and not accepted[1]:
            for i, c in enumerate(self.configs):
                for f in c:
                    if f not in accepted[0]:
                        raise TypeError(
                            f"autotune {self.name}: config_space[{i}] has the field {f!r}, which "
                            f"{getattr(fn, '__name__', 'the function')}"
                            f"{inspect.signature(fn)} does not take as a keyword argument")
        self.version = version or code_version(fn, self.described)
        self._resets = ArgumentResets(fn, restore_value, reset_to_zero, pre_hook, post_hook,
                                      f"autotune {self.name}")
        self._default = default
        starts = [describe_config(c, i) for i, c in enumerate(start_configs)]
        for d in starts:
            d.pop(_TEMPLATE_HASH, None)
        self._options: dict[str, Any] = {
            "warmup": warmup, "runs": runs, "statistic": statistic,
            "early_stop_factor": float(early_stop_factor), "early_stop_after": early_stop_after,
            **search_and_table_options(
                budget=budget, strategy=strategy, seed=seed, batch_size=batch_size,
                lookahead=lookahead, start_configs=starts,
                transfer_from_cache=transfer_from_cache, use_disk_cache=use_disk_cache,
                artifact_name=artifact_name, key_names=key_names, lookup_table=lookup_table,
                op_name=op_name, table_params=table_params, template_hashes=hashes,
                table_key_format=table_key_format, deferred=deferred,
                parallel_split=parallel_split, key_buckets=key_buckets, on_miss=on_miss,
                nearest_over=nearest_over, rerank=rerank),
        }
        self._hardware = dict(hardware) if hardware is not None else None
        self._dependencies = dict(dependencies or {})
        self._measurer = measurer
        self._timing = timing
        # key -> recipe of its winner (see _recipe): the hot path's one lookup. After a call
        # that reached the core it is emptied, so that the next hit passes through _call once,
        # records that memory answered and fills it again from _known.
        self._memo: dict[Any, tuple[Any, ...]] = {}
        self._known: dict[Any, tuple[Any, ...]] = {}
        self._recipes: dict[int, tuple[Any, ...]] = {}
        self._tuner: Any = None
        self._last: str | None = None
        self._every_call_verbose = False
        self._every_call_effort_off = False
        # Rebuilt when the function's code cannot be left to the core's default path.
        functools.update_wrapper(self, fn)
        self._hot = self._make_hot()
        if deferred:
            _deferred.append(weakref.ref(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """``tuned(*args, autotune=True, autotune_verbose=False,
        autotune_allow_arg_overwrite=False, autotune_pg=None, autotune_effort=None, **kwargs)``.
        ``autotune`` returns ``hot_function()``, which does the same faster."""
        return self._hot(*args, **kwargs)

    def hot_function(self) -> Callable[..., Any]:
        """The function ``tunekit.autotune`` returns (a ``tunekit._core.HotFunction``), whose
        resolved calls are ``key_fn``, one dict lookup and a call with the winner's fields
        passed as keywords, all in C; every other call goes to ``_call``. It carries this object
        as ``autotuner`` and its methods and identity as attributes, binds as a method like a
        function, and has the decorated function's name, docstring and ``__wrapped__``."""
        return self._hot

    def _make_hot(self) -> Callable[..., Any]:
        # In C (python/src/hot.cpp): key_fn with the positional arguments, one lookup in the
        # memo and a call of the winner's recipe; keyword arguments and misses go to _call.
        tuned = _core.HotFunction(self.key_fn, self._memo, self._call)
        functools.update_wrapper(tuned, self.fn)
        tuned.autotuner = self
        for attr in ("best_config", "cache_path", "last_source", "forget", "name", "version",
                     "configs", "key_fn", "prune_fn", "arm", "recorded_keys"):
            setattr(tuned, attr, getattr(self, attr))
        tuned.fn = self.fn
        return tuned

    def _recipe(self, index: int) -> tuple[Callable[..., Any], tuple[Any, ...], tuple[str, ...]]:
        """How the hot path calls config ``index``: ``(fn, values, names)``, the function and the
        config's fields as keyword arguments (``fn(*args, **dict(zip(names, values)))``)."""
        known = self._recipes.get(index)
        if known is None:
            cfg = self.configs[index]
            known = (self.fn, tuple(cfg.values()), tuple(cfg))
            self._recipes[index] = known
        return known

    def _merge(self, cfg: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        return {**cfg, **kwargs} if kwargs else cfg

    def _clash(self, kwargs: dict[str, Any], allow: bool) -> frozenset[str]:
        """The keyword arguments that name config fields; a ``ValueError`` naming them (the
        seed's error type; the core refuses them too) unless ``allow``."""
        clash = self.fields.intersection(kwargs) if kwargs else frozenset()
        if clash and not allow:
            raise ValueError(
                f"{self.name}: keyword argument(s) {', '.join(sorted(clash))} are also config "
                "fields; pass autotune_allow_arg_overwrite=True to let the arguments win")
        return clash

    def _pins(self, kwargs: dict[str, Any], allow: bool) -> dict[str, Any] | None:
        """The call's pinned values: the keyword arguments that name config fields, described as
        config values are, or None. The core applies them: its key gains a ``"pinned NAME"`` pair
        per value and candidates that become equal are measured once."""
        clash = self._clash(kwargs, allow)
        if not clash:
            return None
        return {n: describe(kwargs[n], f"keyword argument {n!r}") for n in kwargs if n in clash}

    def _default_for(self, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> Callable[[], dict[str, Any]] | None:
        """The core's default function for this call: the described form of ``default`` (a
        config dict, or what the callable returns for the call's arguments)."""
        default = self._default
        if default is None:
            return None

        def config() -> dict[str, Any]:
            d = default(*args, **kwargs) if callable(default) else default
            if not isinstance(d, dict):
                raise TypeError(f"{self.name}: default returned a {type(d).__name__}, not a "
                                "config dict")
            out = describe_config(d, 0)
            out.pop(_TEMPLATE_HASH, None)
            return out

        return config

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any], key: Any = _NO_KEY) -> Any:
        if key is not _NO_KEY:
            # A miss of the hot path: a key this process resolved since the last call that
            # reached the core is a memory hit, and the hot path may serve every known key again.
            try:
                hit = self._known.get(key)
            except TypeError:
                hit = None
            if hit is not None:
                self._memo.update(self._known)
                self._last = "memory"
                return hit[0](*args, **dict(zip(hit[2], hit[1])))
        autotune = kwargs.pop("autotune", True)
        verbose = kwargs.pop("autotune_verbose", False)
        allow = kwargs.pop("autotune_allow_arg_overwrite", False)
        pg = kwargs.pop("autotune_pg", None)
        effort = kwargs.pop("autotune_effort", None)
        if effort is not None and effort not in EFFORTS:
            raise ValueError(f"{self.name}: autotune_effort must be one of "
                             f"{', '.join(EFFORTS)} or None, not {effort!r}")
        if not autotune:
            self._clash(kwargs, allow)
            self._last = "disabled"
            return self.fn(*args, **self._merge(self.configs[0], kwargs))
        pinned = self._pins(kwargs, allow)
        if key is _NO_KEY:
            key = self.key_fn(*args, **kwargs)
        # Pinned calls are the core's to remember (under their key with the pinned pairs).
        if not verbose and pinned is None and effort is None:
            try:
                hit = self._known.get(key)
            except TypeError:
                hit = None
            if hit is not None:
                self._last = "memory"
                cfg = dict(zip(hit[2], hit[1]))  # the winner's config, kept in its recipe
                return self.fn(*args, **self._merge(cfg, kwargs))
        comm = communicator_for(pg)
        tuner = self.tuner
        configs = self.configs
        fn = self.fn
        prune = None
        if self.prune_fn is not None:
            prune_fn = self.prune_fn

            def prune(i: int) -> bool:
                return bool(prune_fn(configs[i], *args, **kwargs))

        reset = None
        if self._resets.active:
            reset, with_hooks = self._resets.for_call(args, kwargs, configs)

            def run(i: int) -> None:
                with_hooks(lambda: fn(*args, **self._merge(configs[i], kwargs)), i)
        else:
            def run(i: int) -> None:
                fn(*args, **self._merge(configs[i], kwargs))

        index = tuner.resolve(key, prune, run, verbose, comm, pinned, allow,
                              self._default_for(args, kwargs), reset, effort)
        self._last = tuner.last_source()
        cfg = configs[index]
        # TUNEKIT_VERBOSE=1: every call reports its source, so none is served from the memo.
        # Memoised: the winners the core remembers (not a disabled, cached-miss or deferred
        # answer), and under TUNEKIT_AUTOTUNE=off what a plain call of the key runs (the core
        # remembers nothing then, and a plain call would otherwise reach it every time).
        self._memo.clear()
        if self._every_call_effort_off:
            memoise = effort is None
        else:
            memoise = tuner.find(key, None) is not None
        if not self._every_call_verbose and pinned is None and memoise:
            try:
                self._known[key] = self._recipe(index)
            except TypeError:
                pass
        return fn(*args, **self._merge(cfg, kwargs))

    @property
    def tuner(self) -> Any:
        """The core's tuner (``tunekit._core.Tuner``), built at the first tuning call so that it
        reads the environment (``TUNEKIT_*``, the launcher's rank variables) and sees whether
        PyTorch uses CUDA then."""
        if self._tuner is None:
            measurer = self._measurer
            if self._timing == "graph":
                measurer = CudaGraphMeasurer(
                    early_stop_factor=self._options["early_stop_factor"],
                    early_stop_after=self._options["early_stop_after"])
            elif measurer is None and cuda_in_use():
                measurer = CudaEventMeasurer()
            options = dict(self._options)
            options.update(
                measurer=measurer, host_sync=None if measurer is not None else host_sync(),
                hardware=self._hardware if self._hardware is not None else torch_hardware(),
                dependencies={**dependencies(), **self._dependencies}, log=_log)
            self._tuner = _core.Tuner(self.name, self.described, self.version, options)
            self._every_call_verbose = self._tuner.every_call_verbose
            self._every_call_effort_off = self._tuner.effort == "off"
        return self._tuner

    def best_config(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        """The winner this process holds for these arguments' key, or None. Keyword arguments that
        name config fields are pinned values, as in a call with
        ``autotune_allow_arg_overwrite=True``: the winner of that call, with them set."""
        pinned = self._pins(kwargs, True)
        index = self.tuner.find(self.key_fn(*args, **kwargs), pinned)
        return None if index is None else self._merge(self.configs[index],
                                                      {n: kwargs[n] for n in pinned or ()})

    def cache_path(self, *args: Any, **kwargs: Any) -> str:
        """Where the winner cache entry for these arguments' key lives (whether or not it
        exists); keyword arguments that name config fields are pinned values, as in
        ``best_config``."""
        return self.tuner.cache_path(self.key_fn(*args, **kwargs), self._pins(kwargs, True))

    def last_source(self) -> str | None:
        """Which source answered the last call: memory, cache, artifact, table, default,
        search, table_search, or disabled (``autotune=False``, ``autotune_effort="off"``, a
        ``cached`` call nothing answered); None before the first call."""
        return self._last

    def arm(self, pg: Any = None) -> None:
        """Deferred mode (``deferred=True``): a collective rendezvous on ``pg`` after which the
        next call of each key tunes. Call it on every rank; ``tunekit.arm()`` arms every
        deferred tuner at once."""
        self.tuner.arm(communicator_for(pg))
        self._memo.clear()

    def recorded_keys(self) -> list[tuple[Any, ...]]:
        """Keys called in deferred mode before ``arm``, in first-call order."""
        return self.tuner.recorded_keys()

    def export_table(self, *, top_k: int = 1, root: str | os.PathLike[str] | None = None,
                     key_format: str | None = None) -> dict[str, Any]:
        """A lookup table of this function's winner cache entries (under ``root``, default
        ``tunekit.cache_dir()``) of its current version: per key its ``top_k`` fastest valid
        configs, keyed as this tuner looks them up (its ``op_name``, ``table_params``, hardware
        name and ``table_key_format``, unless ``key_format`` says another), each with the
        ``template_hash`` its template has here. Reading it back (``lookup_table=``) serves the
        exported configs without measuring."""
        from . import export_table

        hashes = self._options["template_hashes"]
        table = export_table(function=self.name, version=self.version, root=root,
                             op=self._options["op_name"] or self.name, top_k=top_k,
                             table_params=self._options["table_params"],
                             key_format=key_format or self._options["table_key_format"])
        # Set here rather than passed on: export_table refuses a hash of a template that no
        # exported config has, and this tuner's templates need not all be in its cache.
        for configs in table.values():
            for c in configs:
                h = hashes.get(c.get("template_id"))
                if h is not None:
                    c["template_hash"] = h
        return table

    def forget(self) -> None:
        """Drops the winners held in this process (the disk cache stays)."""
        self._memo.clear()
        self._known.clear()
        if self._tuner is not None:
            self._tuner.forget()

    def __repr__(self) -> str:
        return f"<tunekit.AutoTuner {self.name} ({len(self.configs)} configs)>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # Decorating a method: bind like a function does.
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)


def autotune(config_space: Sequence[dict[str, Any]], key_fn: Callable[..., Any],
             prune_fn: Callable[..., bool] | None = None, **options: Unpack[AutotuneOptions]
             ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorates a host function so that it runs with the fastest config of ``config_space`` for
    the key ``key_fn(*args, **kwargs)`` returns, the config's fields passed as keyword arguments.

    ``prune_fn(config, *args, **kwargs) -> bool`` keeps the configs worth measuring. Each kept
    config runs ``warmup`` (5) times, then ``runs`` (10) times timed; the mean decides; a config
    that raises scores +inf. Of more than ``budget`` (1,000) kept configs, the core's default
    search strategy measures 1,000. The winner is stored in the winner cache
    (``$TUNEKIT_CACHE_DIR/autotune/<name>/<digest>.json``, the files the C++ core and the
    ``tunekit`` command read) under a hash of the function's source and space (``version``), the
    hardware and the key.

    The keyword-only options (docs/python.md lists each with its C++ counterpart):

    - identity: ``name``, ``version``, ``hardware``, ``dependencies``;
    - measurement: ``measurer``, ``timing`` ("eager", or "graph": replays of a CUDA graph of
      100 runs), ``warmup``, ``runs``, ``statistic`` ("mean", "median", "min"),
      ``early_stop_factor``, ``early_stop_after``, ``use_disk_cache``;
    - search: ``budget`` (evaluations, or a ``tunekit.Budget``), ``strategy``, ``seed``,
      ``batch_size``, ``lookahead``, ``start_configs``, ``transfer_from_cache``;
    - stored answers: ``artifact_name``, ``key_names``, ``default`` (a config or a callable of
      the call's arguments returning one), ``lookup_table`` (a path or a dict), ``op_name``,
      ``table_params``, ``template_hashes`` (configs may carry ``template_id`` and
      ``template_hash``), ``table_key_format`` ("tunekit", or "inductor": PyTorch Inductor's
      keys, with a ``key_fn`` returning ``tunekit.inductor_input_key(...)``);
    - shapes: ``key_buckets`` (key value position or name -> ``tunekit.pow2()``,
      ``tunekit.edges(...)``, ``tunekit.multiple(m)``), ``on_miss`` ("tune", or "nearest":
      the winner of the nearest known key), ``nearest_over`` (the key values the nearest key's
      distance counts, by position or name; the others must be equal);
    - the re-rank of the leaders: ``rerank`` (a ``tunekit.Rerank``; False: off);
    - ranks: ``deferred`` (armed by ``tunekit.arm()``), ``parallel_split``;
    - arguments the function writes: ``restore_value``, ``reset_to_zero``, ``pre_hook``,
      ``post_hook``."""

    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise TypeError(f"autotune() got an unexpected keyword argument {unknown[0]!r} (its "
                        f"options: {', '.join(sorted(_OPTIONS))})")

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        return AutoTuner(fn, config_space, key_fn, prune_fn, **options).hot_function()

    return wrap


# The keyword-only options of AutoTuner, which autotune passes on (the same as AutotuneOptions:
# tests/python/test_options.py holds them equal).
_OPTIONS = frozenset(p.name for p in inspect.signature(AutoTuner.__init__).parameters.values()
                     if p.kind is p.KEYWORD_ONLY)
