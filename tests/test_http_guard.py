"""How ``tuner serve`` and ``tuner golden review`` listen: a restart on the port of a run that just stopped after
traffic (its connections in TIME-WAIT) starts; a port another process listens on is still refused; a port out of range
is argparse's one line (exit 2), and port 0 prints the port the system chose."""

from __future__ import annotations

import socket

import pytest

from tuner.cli import main
from tuner.errors import UserError
from tuner.http_guard import listen, url_of


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
    listen("127.0.0.1", port, f"--port {port}").close()


def test_a_port_someone_listens_on_is_refused_in_one_line() -> None:
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        with pytest.raises(UserError, match=f"^--port {port}: cannot listen there: Address already in use$"):
            listen("127.0.0.1", port, f"--port {port}")


def test_port_zero_listens_on_the_port_the_system_chose_and_says_which() -> None:
    with listen("127.0.0.1", 0, "--port 0") as sock:
        port = int(sock.getsockname()[1])
        assert port > 0 and url_of(sock) == f"http://127.0.0.1:{port}/"
        with socket.create_connection(("127.0.0.1", port)):
            pass


@pytest.mark.parametrize("command", [["golden", "review", "draft.jsonl"], ["serve", "--config", "c.yaml"]])
@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_a_port_out_of_range_is_one_line_and_exit_2(command: list[str], port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--port", port])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    expected = f"expected a port number, got '{port}'" if port == "http" else f"a port is from 0 to 65535 (0: any free port), got {port}"
    assert err.endswith(f"error: argument --port: {expected}"), err
