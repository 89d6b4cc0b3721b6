"""Communicators: the collectives a tuner needs to make every rank agree on one config.

The C++ core calls these objects while it resolves a key that is not yet in memory (a search, or
the agreement on a cache entry): ``rank()``, ``size()``, ``local_rank()``, ``all_reduce_max``,
``all_reduce_min``, ``broadcast`` and ``barrier``. tunekit never creates, initialises or destroys a
process group or an MPI communicator; it uses the ones the application made.
"""

from __future__ import annotations

import socket
import sys
from array import array
from typing import Any, Sequence

__all__ = ["Communicator", "TorchCommunicator", "MPICommunicator", "communicator_for"]


class Communicator:
    """Base class of a communicator written in Python. Ranks are ranks *within* this
    communicator; every rank must call the collectives in the same order."""

    def rank(self) -> int:
        raise NotImplementedError

    def size(self) -> int:
        raise NotImplementedError

    def local_rank(self) -> int:
        """Rank among this communicator's ranks on the same node (local rank 0 writes the node's
        winner cache). Default: ``rank()``, so that only rank 0 writes."""
        return self.rank()

    def all_reduce_max(self, values: Sequence[float]) -> list[float]:
        raise NotImplementedError

    def all_reduce_min(self, values: Sequence[float]) -> list[float]:
        raise NotImplementedError

    def broadcast(self, data: bytes, root: int) -> bytes:
        raise NotImplementedError

    def barrier(self) -> None:
        raise NotImplementedError


class _KnownIdentity(Communicator):
    """A communicator whose rank, size and local rank were read when it was built."""

    _rank = 0
    _size = 1
    _local_rank = 0

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def local_rank(self) -> int:
        return self._local_rank


def _local_rank_from_hosts(hosts: Sequence[str], rank: int) -> int:
    return sum(1 for r in range(rank) if hosts[r] == hosts[rank])


class TorchCommunicator(_KnownIdentity):
    """A ``torch.distributed`` process group (gloo, NCCL, ...). The MAX reduction, the agreement
    and the broadcasts go over *this* group, so a subgroup tunes among its own ranks. With NCCL the
    tensors live on the current CUDA device (``torch.cuda.set_device`` first, as NCCL needs).

    Building one is a collective over the group (the ranks exchange host names to find their local
    rank)."""

    def __init__(self, group: Any = None) -> None:
        import torch  # type: ignore[import-not-found]
        import torch.distributed as dist  # type: ignore[import-not-found]

        if not dist.is_initialized():
            raise RuntimeError("TorchCommunicator: torch.distributed is not initialised "
                               "(call torch.distributed.init_process_group first)")
        self._torch = torch
        self._dist = dist
        self.group = group if group is not None else dist.group.WORLD
        self._rank = dist.get_rank(self.group)
        self._size = dist.get_world_size(self.group)
        if self._rank < 0:
            raise ValueError("TorchCommunicator: this process is not a member of the group")
        backend = str(dist.get_backend(self.group)).lower()
        if "nccl" in backend:
            self._device = torch.device("cuda", torch.cuda.current_device())
        else:
            self._device = torch.device("cpu")
        hosts: list[Any] = [None] * self._size
        dist.all_gather_object(hosts, socket.gethostname(), group=self.group)
        self._local_rank = _local_rank_from_hosts(hosts, self._rank)

    def _reduce(self, values: Sequence[float], op: Any) -> list[float]:
        t = self._torch.tensor(list(values), dtype=self._torch.float64, device=self._device)
        self._dist.all_reduce(t, op=op, group=self.group)
        return t.cpu().tolist()

    def all_reduce_max(self, values: Sequence[float]) -> list[float]:
        return self._reduce(values, self._dist.ReduceOp.MAX)

    def all_reduce_min(self, values: Sequence[float]) -> list[float]:
        return self._reduce(values, self._dist.ReduceOp.MIN)

    def broadcast(self, data: bytes, root: int) -> bytes:
        torch = self._torch
        t = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else \
            torch.empty(0, dtype=torch.uint8)
        t = t.to(self._device)
        world = self._dist.group.WORLD
        src = root if self.group is world else self._dist.get_global_rank(self.group, root)
        self._dist.broadcast(t, src=src, group=self.group)
        return bytes(t.cpu().tolist())

    def barrier(self) -> None:
        self._dist.barrier(group=self.group)


class MPICommunicator(_KnownIdentity):
    """An ``mpi4py`` communicator (``MPI.COMM_WORLD`` or one split from it). Building one is a
    collective over it (``Split_type(COMM_TYPE_SHARED)`` finds the local rank)."""

    def __init__(self, comm: Any) -> None:
        from mpi4py import MPI  # type: ignore[import-not-found,unused-ignore]

        self._mpi = MPI
        self.comm = comm
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        node = comm.Split_type(MPI.COMM_TYPE_SHARED)
        try:
            self._local_rank = node.Get_rank()
        finally:
            node.Free()

    def _reduce(self, values: Sequence[float], op: Any) -> list[float]:
        buf = array("d", values)
        if buf:
            self.comm.Allreduce(self._mpi.IN_PLACE, [buf, self._mpi.DOUBLE], op=op)
        return buf.tolist()

    def all_reduce_max(self, values: Sequence[float]) -> list[float]:
        return self._reduce(values, self._mpi.MAX)

    def all_reduce_min(self, values: Sequence[float]) -> list[float]:
        return self._reduce(values, self._mpi.MIN)

    def broadcast(self, data: bytes, root: int) -> bytes:
        buf = bytearray(data)
        if buf:
            self.comm.Bcast([buf, self._mpi.BYTE], root=root)
        return bytes(buf)

    def barrier(self) -> None:
        self.comm.Barrier()


# Communicators built for process groups and MPI communicators, by the group's identity (building
# one is collective, so it happens once per group). The group is kept alive with it.
_built: dict[int, tuple[Any, Communicator]] = {}


def _is_mpi_comm(obj: Any) -> bool:
    mpi = sys.modules.get("mpi4py.MPI")
    return mpi is not None and isinstance(obj, mpi.Comm)


def _is_torch_group(obj: Any) -> bool:
    dist = sys.modules.get("torch.distributed")
    return dist is not None and isinstance(obj, getattr(dist, "ProcessGroup", ()))


def communicator_for(pg: Any) -> Communicator | None:
    """The communicator of ``autotune_pg``: a ``tunekit.Communicator`` as it is; a
    ``torch.distributed`` process group or an ``mpi4py`` communicator wrapped; ``None``: the
    default ``torch.distributed`` group when one is initialised, else None (a single process)."""
    if pg is None:
        dist = sys.modules.get("torch.distributed")
        if dist is None or not dist.is_available() or not dist.is_initialized():
            return None
        if dist.get_world_size() == 1:
            return None
        pg = dist.group.WORLD
    if isinstance(pg, Communicator):
        return pg
    hit = _built.get(id(pg))
    if hit is not None and hit[0] is pg:
        return hit[1]
    if _is_mpi_comm(pg):
        comm: Communicator = MPICommunicator(pg)
    elif _is_torch_group(pg):
        comm = TorchCommunicator(pg)
    else:
        raise TypeError(f"autotune_pg: a {type(pg).__module__}.{type(pg).__qualname__} is not a "
                        "torch.distributed process group, an mpi4py communicator or a "
                        "tunekit.Communicator")
    _built[id(pg)] = (pg, comm)
    return comm

