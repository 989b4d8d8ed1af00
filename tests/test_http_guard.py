"""The port check of ``tuner serve`` and ``tuner golden review``: a restart on the port of a run that just stopped
after traffic (its connections in TIME-WAIT) starts; a port another process listens on is still refused."""

from __future__ import annotations

import socket

import pytest

from tuner.errors import UserError
from tuner.http_guard import check_port


def _port_after_traffic() -> int:
    """A port whose listener served one connection, closed it first (TIME-WAIT on the server side) and stopped."""
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn listens
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = int(server.getsockname()[1])
        with socket.create_connection(("127.0.0.1", port)) as client:
            connection, _ = server.accept()
            connection.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
            connection.close()
            client.recv(64)
    return port


def test_a_port_in_time_wait_after_a_stopped_run_can_be_listened_on_again() -> None:
    port = _port_after_traffic()
    with socket.socket() as plain, pytest.raises(OSError):  # what the old check did: refused for about 60 s
        plain.bind(("127.0.0.1", port))
    check_port("127.0.0.1", port, f"--port {port}")


def test_a_port_someone_listens_on_is_refused_in_one_line() -> None:
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        with pytest.raises(UserError, match=f"^--port {port}: cannot listen there: Address already in use$"):
            check_port("127.0.0.1", port, f"--port {port}")
