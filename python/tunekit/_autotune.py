"""``tunekit.autotune``: the seed's function-level tuner over the C++ core.

A decorated function resolves its config per key through the core's chain (in-process winners, the
winner cache on disk, artifacts, lookup tables, else a search that measures every candidate the
prune function keeps), and is called with the winner's fields as keyword arguments. A resolved key
is served from a dict in Python: the hot path is ``key_fn``, one dict lookup and the call.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import keyword
import warnings
from typing import Any, Callable, Sequence

from . import _core
from ._comm import communicator_for
from ._describe import describe, describe_config
from ._measure import CudaEventMeasurer, cuda_in_use, dependencies, host_sync, torch_hardware

__all__ = ["autotune", "AutoTuner", "TunekitWarning"]

_NO_KEY = object()


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


class AutoTuner:
    """A decorated function's state: its space, key and prune functions, winners and the core's
    tuner. ``tunekit.autotune`` returns its ``hot_function()``, a plain function that carries it
    as ``.autotuner``; calling either returns what the decorated function returns, with the
    per-call options as keyword arguments (see ``__call__``)."""

    def __init__(self, fn: Callable[..., Any], config_space: Sequence[dict[str, Any]],
                 key_fn: Callable[..., Any], prune_fn: Callable[..., bool] | None = None, *,
                 name: str | None = None, version: str | None = None, measurer: Any = None,
                 warmup: int = 5, runs: int = 10, use_disk_cache: bool = True) -> None:
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
        self.fn = fn
        self.configs = configs
        self.key_fn = key_fn
        self.prune_fn = prune_fn
        self.described = [describe_config(c, i) for i, c in enumerate(configs)]
        seen: dict[str, int] = {}
        for i, d in enumerate(self.described):
            text = repr(sorted(d.items()))
            if text in seen:
                raise ValueError(f"autotune: config_space[{i}] is described as config_space"
                                 f"[{seen[text]}] is ({d}); the candidates must differ")
            seen[text] = i
        self.fields = frozenset(f for c in configs for f in c)
        self.name = name or getattr(fn, "__name__", None) or "function"
        self.version = version or code_version(fn, self.described)
        self._measurer = measurer
        self._warmup = warmup
        self._runs = runs
        self._use_disk_cache = use_disk_cache
        # key -> caller of its winner (see _caller), the hot path's one lookup
        self._memo: dict[Any, Callable[[tuple[Any, ...]], Any]] = {}
        self._callers: dict[int, Callable[[tuple[Any, ...]], Any]] = {}
        self._tuner: Any = None
        self._every_call_verbose = False
        functools.update_wrapper(self, fn)
        self._hot = self._make_hot()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """``tuned(*args, autotune=True, autotune_verbose=False,
        autotune_allow_arg_overwrite=False, autotune_pg=None, **kwargs)``. ``autotune`` returns
        ``hot_function()``, which does the same faster."""
        return self._hot(*args, **kwargs)

    def hot_function(self) -> Callable[..., Any]:
        """The function ``tunekit.autotune`` returns: a plain function (a call of an object with
        ``__call__`` costs more) whose resolved calls are ``key_fn``, one dict lookup and a call
        with the winner's fields passed as keywords; every other call goes to ``_call``. It
        carries this object as ``autotuner`` and its methods and identity as attributes."""
        return self._hot

    def _make_hot(self) -> Callable[..., Any]:
        memo_get = self._memo.get
        key_fn = self.key_fn
        slow = self._call

        def tuned(*args: Any, **kwargs: Any) -> Any:
            if not kwargs:
                n = len(args)
                # Positional arguments passed on as they are: f(*args) costs more.
                if n == 1:
                    key = key_fn(args[0])
                elif n == 2:
                    key = key_fn(args[0], args[1])
                elif n == 3:
                    key = key_fn(args[0], args[1], args[2])
                else:
                    key = key_fn(*args)
                try:
                    call = memo_get(key)
                except TypeError:  # an unhashable key (a list): the slow path says what is wrong
                    call = None
                if call is not None:
                    return call(args)
                return slow(args, kwargs, key)
            return slow(args, kwargs)

        functools.update_wrapper(tuned, self.fn)
        tuned.autotuner = self  # type: ignore[attr-defined]
        for attr in ("best_config", "cache_path", "last_source", "forget", "name", "version",
                     "configs", "key_fn", "prune_fn"):
            setattr(tuned, attr, getattr(self, attr))
        tuned.fn = self.fn  # type: ignore[attr-defined]
        return tuned

    def _caller(self, index: int) -> Callable[[tuple[Any, ...]], Any]:
        """``call(args)``: the function with ``args`` and config ``index`` as keywords. For field
        names that are plain identifiers it is generated code that passes them as literal
        keywords, as dataclasses and namedtuple generate theirs, which is cheaper than ``**``."""
        known = self._callers.get(index)
        if known is not None:
            return known
        call: Any
        fn, cfg = self.fn, self.configs[index]
        names = list(cfg)
        if all(n.isidentifier() and not keyword.iskeyword(n) for n in names):
            kw = ", ".join(f"{n}=_v{i}" for i, n in enumerate(names))
            src = ("def call(a):\n"
                   "    n = len(a)\n"
                   f"    if n == 2:\n        return _f(a[0], a[1], {kw})\n"
                   f"    if n == 1:\n        return _f(a[0], {kw})\n"
                   f"    if n == 3:\n        return _f(a[0], a[1], a[2], {kw})\n"
                   f"    return _f(*a, {kw})\n")
            ns: dict[str, Any] = {"_f": fn, **{f"_v{i}": cfg[n] for i, n in enumerate(names)}}
            exec(compile(src, f"<tunekit {self.name} config {index}>", "exec"), ns)
            call = ns["call"]
        else:
            def call(a: tuple[Any, ...]) -> Any:
                return fn(*a, **cfg)
        call.cfg = cfg
        self._callers[index] = call
        return call

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

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any], key: Any = _NO_KEY) -> Any:
        autotune = kwargs.pop("autotune", True)
        verbose = kwargs.pop("autotune_verbose", False)
        allow = kwargs.pop("autotune_allow_arg_overwrite", False)
        pg = kwargs.pop("autotune_pg", None)
        if not autotune:
            self._clash(kwargs, allow)
            return self.fn(*args, **self._merge(self.configs[0], kwargs))
        pinned = self._pins(kwargs, allow)
        if key is _NO_KEY:
            key = self.key_fn(*args, **kwargs)
        # Pinned calls are the core's to remember (under their key with the pinned pairs).
        if not verbose and pinned is None:
            try:
                hit = self._memo.get(key)
            except TypeError:
                hit = None
            if hit is not None:
                cfg = getattr(hit, "cfg")  # the winner's config, kept on its caller
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

        def run(i: int) -> None:
            fn(*args, **self._merge(configs[i], kwargs))

        index = tuner.resolve(key, prune, run, verbose, comm, pinned, allow)
        cfg = configs[index]
        # TUNEKIT_VERBOSE=1: every call reports its source, so none is served from the memo.
        if not self._every_call_verbose and pinned is None:
            try:
                self._memo[key] = self._caller(index)
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
            if measurer is None and cuda_in_use():
                measurer = CudaEventMeasurer()
            self._tuner = _core.Tuner(
                self.name, self.described, self.version, measurer=measurer,
                host_sync=None if measurer is not None else host_sync(),
                use_disk_cache=self._use_disk_cache, warmup=self._warmup, runs=self._runs,
                hardware=torch_hardware(), dependencies=dependencies(), log=_log)
            self._every_call_verbose = self._tuner.every_call_verbose
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

    def last_source(self) -> str:
        """Which source answered the last resolution that reached the core: memory, cache,
        artifact, table, default_config, search, table_search."""
        return self.tuner.last_source()

    def forget(self) -> None:
        """Drops the winners held in this process (the disk cache stays)."""
        self._memo.clear()
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
             prune_fn: Callable[..., bool] | None = None, *, name: str | None = None,
             version: str | None = None, measurer: Any = None, warmup: int = 5, runs: int = 10,
             use_disk_cache: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorates a host function so that it runs with the fastest config of ``config_space`` for
    the key ``key_fn(*args, **kwargs)`` returns, the config's fields passed as keyword arguments.

    ``prune_fn(config, *args, **kwargs) -> bool`` keeps the configs worth measuring. Each kept
    config runs ``warmup`` (5) times, then ``runs`` (10) times timed; the mean decides; a config
    that raises scores +inf. Of more than 1,000 kept configs, the core's default search strategy
    measures 1,000. The winner is stored in the winner cache
    (``$TUNEKIT_CACHE_DIR/autotune/<name>/<digest>.json``, the files the C++ core and the ``tunekit``
    command read) under a hash of the function's source and space (``version``), the hardware and
    the key. The keyword-only arguments go beyond the seed: ``name`` and ``version`` set the
    identity (a C++ tuner with the same name, version, hardware and key shares the entries),
    ``measurer`` times candidates (default: CUDA events when PyTorch uses CUDA, else a host clock),
    ``use_disk_cache=False`` keeps winners in memory only."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        return AutoTuner(fn, config_space, key_fn, prune_fn, name=name, version=version,
                         measurer=measurer, warmup=warmup, runs=runs,
                         use_disk_cache=use_disk_cache).hot_function()

    return wrap
