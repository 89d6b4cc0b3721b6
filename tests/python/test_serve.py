"""tunekit.ServeWorker: the collective serving worker from Python, on one process here and on four
mpi4py ranks in mpi_serve.py (every rank runs every request in the same order)."""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.request

import pytest
from conftest import run_mpi

import tunekit
from tunekit import _core

pytestmark = pytest.mark.skipif(not hasattr(_core, "ServeWorker"),
                                reason="tunekit was built without cpp-httplib")


def post(port, path, body=b""):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def test_one_process_serves_requests_in_order_and_stops():
    seen = []

    def handler(sequence, path, body):
        seen.append((sequence, path, body))
        if body == b"boom":
            raise ValueError("bad request body")
        if path == "/text":
            return body.decode().upper()
        return (201, body[::-1], "application/x-reversed")

    w = tunekit.ServeWorker(handler, port=0, catch_sigterm=False)
    answers = []

    def client():
        answers.append(post(w.port, "/rev", b"abc"))
        answers.append(post(w.port, "/text", b"hi"))
        answers.append(post(w.port, "/rev", b"boom"))
        answers.append(post(w.port, "/stop"))

    t = threading.Thread(target=client)
    t.start()
    summary = w.serve()
    t.join()
    assert answers[0] == (201, b"cba") and answers[1] == (200, b"HI")
    assert answers[2][0] == 500 and b"bad request body" in answers[2][1]
    assert summary["reason"] == "stop request" and summary["requests"] == 3
    assert summary["failed"] == 1
    assert [s[0] for s in seen] == [0, 1, 2]


def test_a_tuned_function_tunes_inside_the_handler():
    tuned = tunekit.autotune([{"BLOCK": b} for b in (1, 2)], lambda n: (n,))(
        lambda n, *, BLOCK: n * BLOCK)

    def handler(sequence, path, body):
        return str(tuned(int(body)))

    w = tunekit.ServeWorker(handler, catch_sigterm=False)
    out = []
    t = threading.Thread(target=lambda: (out.append(post(w.port, "/", b"21")),
                                         out.append(post(w.port, "/stop"))))
    t.start()
    w.serve()
    t.join()
    assert out[0][0] == 200 and int(out[0][1]) in (21, 42)
    assert tuned.last_source() == "search"


def test_four_mpi_ranks_run_every_request():
    r = run_mpi("mpi_serve.py", 4)
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(re.findall(r"rank (\d) served 3", r.stdout)) == ["0", "1", "2", "3"]
