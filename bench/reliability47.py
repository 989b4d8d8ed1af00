"""Issue 47 §1–§4, reliability round 6: each experiment run as a hostile client (or a new user) would, against the
tuner of a given source tree, printing whether it held, what was seen, and what it cost (wall and CPU seconds of the
process that did the work). Run it on a tree before the fixes and on one after:

    python bench/reliability47.py [--tree PATH] [--work /tmp/reliability47] [--only serve,external,unscored]

It imports nothing from the tree it tests: every experiment is a ``python -m tuner`` subprocess with ``PYTHONPATH`` set
to ``--tree``. ``serve``: a ``tuner serve`` of the demo, sent 50,000 nested objects (§1) and a ``metadata_condition``
of 20,000 conditions (§2), its CPU read from ``/proc`` around each request. ``external``: ``tuner eval --external``
against a service run here that answers 200,000 records (~20 MB) for top_k 5, and one that accepts the connection and
never answers (§3). ``unscored``: ``tuner robustness`` and ``tuner eval`` whose generator answers every request with a
body that is not a reply (§4)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from tuner.testing import canned_service, wait_until_ready

SERVE_KEY = "bench-47-key"


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _env(tree: Path, work: Path, **more: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TUNER_CACHE": str(work / "cache"), **more}


def tuner(tree: Path, work: Path, *argv: str, timeout: float = 300, **env: str) -> tuple[int, str, float, float]:
    """Exit code, last stderr line (or stdout's), wall and CPU seconds (children included) of ``tuner ARGV``."""
    before, started = os.times(), time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "tuner", *argv], cwd=work, env=_env(tree, work, **env),
                              capture_output=True, text=True, timeout=timeout)
        code, lines = done.returncode, (done.stderr.strip() or done.stdout.strip()).splitlines()
        last = lines[-1][:240] if lines else ""
    except subprocess.TimeoutExpired:
        code, last = 124, f"(still running after {timeout:.0f} s: killed)"
    after = os.times()
    return code, last, time.perf_counter() - started, (after.children_user - before.children_user) + (
        after.children_system - before.children_system)


def serve_experiments(tree: Path, work: Path) -> list[tuple[str, bool, str]]:
    import httpx

    config = work / "deploy.yaml"
    config.write_text(yaml.safe_dump({"top_k": 5, "chunk_size": 128, "retriever": "hybrid", "candidate_depth": 20}))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "tuner", "serve", "--knowledge", f"demo={config}:demo", "--port",
                               str(port)], cwd=work, env=_env(tree, work, TUNER_SERVE_API_KEY=SERVE_KEY),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url, rows = f"http://127.0.0.1:{port}", []
    try:
        wait_until_ready(server, url, seconds=600)
        with httpx.Client(timeout=600) as client:

            def ask(path: str, body: bytes) -> tuple[int, str, float, float]:
                cpu, started = _cpu_seconds(server.pid), time.perf_counter()
                reply = client.post(f"{url}{path}", content=body, headers={
                    "Authorization": f"Bearer {SERVE_KEY}", "Content-Type": "application/json"})
                return (reply.status_code, " ".join(reply.text.split())[:160], time.perf_counter() - started,
                        _cpu_seconds(server.pid) - cpu)

            deep = b'{"a":' * 50_000 + b"1" + b"}" * 50_000
            for path in ("/retrieval", "/retrieve"):
                status, text, wall, cpu = ask(path, deep)
                rows.append((f"§1 POST {path}, 50,000 nested objects", status in (400, 422),
                             f"HTTP {status} {text} ({wall:.2f} s wall, {cpu:.2f} s server CPU)"))
            request = {"knowledge_id": "demo", "query": "How long is the laptop warranty?", "retrieval_setting": {"top_k": 5}}
            condition = {"name": "family", "comparison_operator": "contains", "value": "warranty"}
            for count in (1, 100, 20_000):
                body = json.dumps({**request, "metadata_condition": {"conditions": [condition] * count}}).encode()
                status, text, wall, cpu = ask("/retrieval", body)
                rows.append((f"§2 POST /retrieval, {count:,} conditions", count <= 100 or status == 400,
                             f"HTTP {status} {text[:110]} ({wall:.2f} s wall, {cpu:.2f} s server CPU)"))
    finally:
        server.terminate()
        _, err = server.communicate(timeout=60)
    rows.append(("§1 the server's log holds no traceback", "Traceback" not in err, f"{err.count('Traceback')} tracebacks"))
    return rows


def external_experiments(tree: Path, work: Path) -> list[tuple[str, bool, str]]:
    records = [{"content": f"record {n} " + "lorem ipsum " * 6, "score": (n % 997) / 997, "title": f"t{n}",
                "metadata": {"doc_id": f"doc-{n}"}} for n in range(200_000)]
    flood = json.dumps({"records": records}).encode()
    rows = []
    size = f"200,000 records ({len(flood) / 1e6:.0f} MB) for top_k 5"
    for name, reply, flags, timeout in ((size, flood, [], 300), (f"{size}, --max-reply-mb 64", flood, ["--max-reply-mb", "64"], 300),
                                        ("a service that never answers", None, [], 400)):
        with canned_service(reply) as url:
            code, last, wall, cpu = tuner(tree, work, "eval", "demo", "--external", url, "--knowledge-id", "kb",
                                          "--top-k", "5", *flags, timeout=timeout, TUNER_EXTERNAL_API_KEY="bench-external-key")
        rows.append((f"§3 tuner eval --external, {name}", code != 124 and wall < 90,
                     f"exit {code} after {wall:.1f} s wall, {cpu:.1f} s CPU: {last}"))
    return rows


EXPERIMENTS: dict[str, Callable[[Path, Path], list[tuple[str, bool, str]]]] = {
    "serve": serve_experiments, "external": external_experiments}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1], help="source tree to test")
    parser.add_argument("--work", type=Path, default=Path("/tmp/reliability47"))
    parser.add_argument("--only", default=",".join(EXPERIMENTS), help=f"comma-separated: {', '.join(EXPERIMENTS)}")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    print(f"tree {args.tree.resolve()}, load average {os.getloadavg()[0]:.1f}")
    print("| experiment | held | seen |\n|---|---|---|")
    held = total = 0
    for name in args.only.split(","):
        for experiment, ok, seen in EXPERIMENTS[name](args.tree.resolve(), args.work):
            held, total = held + ok, total + 1
            print(f"| {experiment} | {'held' if ok else 'FAILED'} | {seen.replace('|', '/')} |", flush=True)
    print(f"{held} of {total} held; load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
