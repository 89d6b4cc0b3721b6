"""Lookup tables from Python: ``export_table`` (what ``tunekit table export`` writes) and
``inductor_input_key``, the input key PyTorch Inductor's lookup table uses (docs/lookup_tables.md,
docs/formats.md)."""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Mapping

from . import _core
from ._describe import describe

__all__ = ["export_table", "inductor_input_key"]


def inductor_input_key(*tensors: Any) -> str:
    """The input key PyTorch Inductor's lookup table gives a kernel of these input tensors:
    Python's ``str()`` of one ``(dtype, [shape], [stride])`` tuple per tensor, e.g.
    ``((torch.float16, [64, 128], [128, 1]), (torch.float16, [128, 256], [256, 1]))`` (one
    tensor: ``((torch.float16, [8], [1]),)``). Any object with ``.dtype``, ``.shape`` and
    ``.stride()`` will do; torch is not imported.

    With ``key_fn=lambda a, b: (tunekit.inductor_input_key(a, b),)`` and
    ``table_key_format="inductor"`` a tuner looks up, and ``export_table`` writes, keys such as
    ``NVIDIA H200+((torch.float16, [512, 512], [512, 1]), ...)+mm``: Inductor's text. The tensors
    go in the order of the op's inputs as Inductor sees them (``addmm``: bias, mat1, mat2)."""
    if not tensors:
        raise ValueError("inductor_input_key: give at least one tensor")
    try:
        node_info = tuple((t.dtype, [int(s) for s in t.shape], [int(s) for s in t.stride()])
                          for t in tensors)
    except AttributeError as e:
        raise TypeError(f"inductor_input_key: each argument needs .dtype, .shape and .stride() "
                        f"({e})") from None
    # Exactly Inductor's LookupTableChoices._generate_kernel_inputs_key: str() of the tuple.
    return str(node_info)


def export_table(function: str = "", *, version: str = "",
                 root: str | os.PathLike[str] | None = None, op: str = "", top_k: int = 1,
                 table_params: Mapping[str, Any] | None = None,
                 template_hashes: Mapping[str, str] | None = None,
                 key_format: str = "tunekit") -> dict[str, Any]:
    """A lookup table of the winner cache under ``root`` (default ``tunekit.cache_dir()``), as
    ``tunekit table export`` writes it: per entry of ``function`` (all when empty; of
    ``version`` when given) the device-specific key ``<device>+<input key>+[params+]<op>``
    (``op`` empty: the function's name; ``table_params`` as the tuner's) holding its ``top_k``
    fastest valid configs, fastest first. ``template_hashes`` (template_id -> source hash) is
    recorded with those templates' configs; a template that no exported config has is a
    ``ValueError``. ``key_format``: "tunekit" (tunekit's text) or "inductor" (PyTorch Inductor's:
    a key of one string value is the input key as it stands). Entries that cannot be read are
    skipped with a ``tunekit.TunekitWarning``. The result is the table as a dict (what
    ``lookup_table=`` and ``torch._inductor.config.lookup_table.table`` take)."""
    from ._autotune import TunekitWarning

    hashes = dict(template_hashes or {})
    params = ({k: describe(v, f"table_params[{k!r}]") for k, v in table_params.items()}
              if table_params else None)
    out = _core.export_table(os.fspath(root) if root is not None else _core.cache_dir(),
                             function, version, op, top_k, params, hashes, key_format)
    for path, why in out["skipped"]:
        warnings.warn(f"export_table: skipping winner cache entry {path}: {why}", TunekitWarning,
                      stacklevel=2)
    missing = sorted(set(hashes) - set(out["templates"]))
    if missing:
        have = ", ".join(repr(t) for t in out["templates"]) or "none, nothing exported"
        raise ValueError(f"export_table: template_hashes names {missing[0]!r}, a template that no "
                         f"exported config has (their templates: {have})")
    return json.loads(out["table"])
