"""Run under mpiexec -n 4 by test_serve.py: a ServeWorker over MPI.COMM_WORLD; rank 0's client
thread posts three requests and /stop; every rank checks that it ran the three in order and that
rank 0's answers are what every rank computed."""

from __future__ import annotations

import threading
import urllib.request

from mpi4py import MPI

import tunekit

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
ran = []


def handler(sequence, path, body):
    ran.append((sequence, body))
    total = comm.allreduce(int(body), op=MPI.SUM)  # a collective inside the handler
    return str(total)


w = tunekit.ServeWorker(handler, comm, catch_sigterm=False)
answers = []
if rank == 0:
    def client():
        for n in (1, 2, 3):
            req = urllib.request.Request(f"http://127.0.0.1:{w.port}/add", data=str(n).encode(),
                                         method="POST")
            with urllib.request.urlopen(req, timeout=60) as r:
                answers.append(int(r.read()))
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{w.port}/stop",
                                                      data=b"", method="POST"), timeout=60)

    t = threading.Thread(target=client)
    t.start()
summary = w.serve()
if rank == 0:
    t.join()
    assert answers == [4, 8, 12], answers
assert [s for s, _ in ran] == [0, 1, 2], ran
assert summary["requests"] == 3 and summary["reason"] == "stop request", summary
print(f"rank {rank} served {summary['requests']}", flush=True)
