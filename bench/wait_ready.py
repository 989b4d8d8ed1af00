"""CPU that waiting for a server costs the waiting test (issue 39, the suite's time): ``tuner.testing``'s
``wait_until_ready`` (the tests' and benches') polls ``/healthz`` every 50 ms until a stand-in server (a Python
process that sleeps ``--seconds``, then serves 200) is ready. Before: one ``httpx.get`` per poll, each making a client that loads the TLS
certificates; after: one client for every poll. Both are run in this process, in turn, ``--repeats`` times; printed:
the CPU seconds (user + system of this process) each wait cost, beside its wall seconds.

    PYTHONPATH=. python bench/wait_ready.py --seconds 10 --repeats 2
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import httpx

from tests.net import free_port
from tuner.testing import wait_until_ready

SERVER = """
import http.server, sys, time
time.sleep(float(sys.argv[2]))
class Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Ok).serve_forever()
"""


def wait_per_call(process: subprocess.Popen[str], url: str, seconds: float = 180, path: str = "/healthz") -> None:
    """``wait_until_ready`` before: ``httpx.get`` (a new client) on every poll."""
    deadline = time.monotonic() + seconds
    while True:
        assert process.poll() is None
        try:
            if httpx.get(f"{url}{path}", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the stand-in server takes to start")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    for _ in range(args.repeats):
        for name, wait in (("before: httpx.get per poll", wait_per_call), ("after: one client", wait_until_ready)):
            port = free_port()
            server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(args.seconds)], text=True)
            started, cpu = time.monotonic(), _cpu()
            try:
                wait(server, f"http://127.0.0.1:{port}")
            finally:
                server.terminate()
                server.wait()
            print(f"{name:28} wall {time.monotonic() - started:5.1f} s  CPU {_cpu() - cpu:5.2f} s", flush=True)


if __name__ == "__main__":
    main()
