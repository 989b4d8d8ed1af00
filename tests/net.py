"""Loopback networking for tests: a free port, waiting on a service's ``/healthz`` (:func:`tuner.testing.wait_until_ready`,
shared with the benches, as is :func:`tuner.testing.canned_service`), and a TCP proxy a test can take down, so that a
server becomes unreachable (connections refused, open ones cut) as in a real outage."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from tuner.testing import wait_until_ready

_HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((_HOST, 0))
        return int(probe.getsockname()[1])


class TcpProxy:
    """Forwards ``127.0.0.1:port`` to ``target`` (host, port). :meth:`down` closes the listening socket and every
    forwarded connection, so clients get "connection refused" until :meth:`up` listens on the same port again."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listener: socket.socket | None = None

    def __enter__(self) -> TcpProxy:
        self.up()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.down()

    def up(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((_HOST, self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            doomed, self._open = self._open, set()
        if listener is not None:
            listener.close()
        for conn in doomed:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # taken down
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    server.close()
                    return
                self._open |= {client, server}
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for conn in (source, sink):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                conn.close()
            with self._lock:
                self._open -= {source, sink}


SERVE_TOKEN = "test-serve-token"
"""The write token the tests' ``tuner serve`` processes run with (``TUNER_SERVE_TOKEN``) and send (``WRITE_HEADERS``)."""
WRITE_HEADERS = {"X-Tuner-Token": SERVE_TOKEN}


def start_serve(args: list[str], **env: str) -> subprocess.Popen[str]:
    """``tuner serve ARGS`` of this checkout in a subprocess, offline, with the tests' write token and ``env`` set."""
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "HF_HUB_OFFLINE": "1",
                   "TUNER_SERVE_TOKEN": SERVE_TOKEN, **env}
    return subprocess.Popen([sys.executable, "-m", "tuner", "serve", *args], env=environment, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@contextmanager
def serving(args: list[str], **env: str) -> Iterator[tuple[str, list[str]]]:
    """A ready ``tuner serve ARGS`` on a free port (:func:`start_serve`): its URL, and a list that holds its stdout and
    stderr once it is stopped (SIGTERM) at the end of the block."""
    port = free_port()
    process = start_serve([*args, "--port", str(port)], **env)
    url, output = f"http://{_HOST}:{port}", []
    try:
        wait_until_ready(process, url)
        yield url, output
    finally:
        process.terminate()
        out, err = process.communicate(timeout=30)
        output.append(out + err)
