"""``tunekit.ServeWorker``: the collective serving worker (``tunekit::serve::worker``) over the
application's ``torch.distributed`` group or ``mpi4py`` communicator.

Rank 0 runs an HTTP endpoint and gives each request a sequence number; every rank runs the
handler on the same requests in the same order (so that a model sharded over the ranks enters
inference together, and a tuned function that tunes a new key inside the handler agrees across
the ranks); only rank 0 answers. docs/serving.md has the protocol and the endpoints.
"""

from __future__ import annotations

from typing import Any, Callable, Union

from . import _core
from ._comm import communicator_for

__all__ = ["ServeWorker", "Handler"]

#: ``handler(sequence, path, body) -> bytes | str | (status, body) | (status, body, content_type)``
Handler = Callable[[int, str, bytes], Union[bytes, str, tuple]]


class ServeWorker:
    """The serving worker of one rank. Build it on every rank of ``pg`` (a ``torch.distributed``
    group, an ``mpi4py`` communicator or a ``tunekit.Communicator``; None: the default group,
    else a single process): rank 0 binds ``host:port`` (0: a free port, see ``port``), a
    collective. ``serve()`` (every rank) runs until ``POST /stop``, ``stop()`` on rank 0 or
    SIGTERM, and returns ``{"reason", "requests", "failed", "error"}``. A handler that raises on
    some ranks makes rank 0 answer 500 naming them; the worker goes on."""

    def __init__(self, handler: Handler, pg: Any = None, *, host: str = "127.0.0.1",
                 port: int = 0, max_request_bytes: int = 16 << 20, max_queued: int = 1024,
                 http_threads: int = 16, heartbeat_s: float = 1.0, stop_endpoint: bool = True,
                 catch_sigterm: bool = True) -> None:
        worker = getattr(_core, "ServeWorker", None)
        if worker is None:
            raise RuntimeError("tunekit.ServeWorker: this build of tunekit has no serving worker "
                               "(it was built without cpp-httplib, libcpp-httplib-dev)")
        if not callable(handler):
            raise TypeError("tunekit.ServeWorker: handler must be callable")
        self._worker = worker(communicator_for(pg), handler, host, port, max_request_bytes,
                              max_queued, http_threads, heartbeat_s, stop_endpoint,
                              catch_sigterm)

    @property
    def port(self) -> int:
        """The port rank 0 listens on (every rank knows it)."""
        return int(self._worker.port)

    def serve(self) -> dict[str, Any]:
        return dict(self._worker.serve())

    def stop(self) -> None:
        """On rank 0, from any thread: stop after the requests queued before it."""
        self._worker.stop()
