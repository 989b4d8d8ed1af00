"""Issue 38 §1, the failures of round 5 that are not the review app's: each experiment run as a user (or an attacker)
would, against the tuner of a given source tree, printing whether it held (the behaviour the issue asks for) and
what was seen (exit code, the line printed). Run it on a tree before the fixes and on one after:

    python bench/reliability38.py [--tree PATH] [--work /tmp/reliability38]

It imports nothing from the tree it tests: every experiment is a ``python -m tuner`` subprocess with ``PYTHONPATH`` set
to ``--tree``, talking, where a model backend is needed, to a small OpenAI-compatible server run here that answers
HTTP 200 with a body that is not a reply. The two experiments that need a longer study (a confirm study resumed with
another split; Ctrl-C while confirming) are in the test suite (tests/study_tests/test_confirm.py,
tests/fault_tests/test_interrupts.py)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

GOLDEN = {"id": "q1", "question": "How long is the warranty?", "ground_truth": "24 months", "keypoints": ["24 months"],
          "relevant_doc_ids": ["w.txt"]}


def tuner(tree: Path, work: Path, *argv: str, timeout: float = 300) -> tuple[int, str]:
    """Exit code and last stderr line (or stdout's, when stderr is empty) of ``tuner ARGV`` run from ``work``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TUNER_CACHE": str(work / "cache")}
    try:
        done = subprocess.run([sys.executable, "-m", "tuner", *argv], cwd=work, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, f"(no exit within {timeout:.0f} s)"
    lines = (done.stderr.strip() or done.stdout.strip()).splitlines()
    return done.returncode, lines[-1][:220] if lines else ""


class Garbled(BaseHTTPRequestHandler):
    """Answers every POST with HTTP 200 and the server's ``body``: not a chat completion."""

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        body, kind = self.server.body  # type: ignore[attr-defined]
        data = body.encode()
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def garbled_server(body: str, kind: str) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Garbled)
    server.body = (body, kind)  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/v1"


def kb_with_line_separator(work: Path, tree: Path) -> Path:
    docs = work / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "w.txt").write_bytes("Warranty\u2028is 24 months.\n".encode())
    tuner(tree, work, "import", "files", "docs", "kb")
    (work / "kb" / "golden.jsonl").write_text(json.dumps(GOLDEN) + "\n")
    return work / "kb"


def tiny_kb(work: Path) -> Path:
    """A knowledge base with a golden set of six cases, keypoints and one conflicting document each."""
    kb = work / "tiny"
    kb.mkdir(exist_ok=True)
    facts = [("warranty", "The laptop warranty is 24 months.", "24 months", "12 months"),
             ("returns", "Returns are accepted within 30 days.", "30 days", "14 days"),
             ("price", "The Aurora X200 costs $1,299.", "$1,299", "$999"),
             ("ship", "Standard shipping takes 5 days.", "5 days", "9 days"),
             ("battery", "The battery lasts 10 hours.", "10 hours", "6 hours"),
             ("weight", "The laptop weighs 1.2 kg.", "1.2 kg", "2.4 kg")]
    corpus = [{"doc_id": d, "title": d, "text": t} for d, t, _, _ in facts]
    corpus += [{"doc_id": f"filler-{i}", "title": f"note {i}", "text": f"Store note {i} about opening hours and parking."}
               for i in range(6)]
    golden = [{"id": d, "question": f"What about the {d}?", "ground_truth": a, "keypoints": [a], "relevant_doc_ids": [d]}
              for d, _, a, _ in facts]
    conflicts = [{"doc_id": f"{d}-old", "text": t.replace(a, w), "conflicts_with": d, "kind": "value", "severity": "high",
                  "wrong_values": [w]} for d, t, a, w in facts]
    for name, rows in (("corpus", corpus), ("golden", golden), ("conflicts", conflicts)):
        (kb / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return kb


def study_file(work: Path, kb: Path, name: str, **overrides: Any) -> Path:
    (work / "space.yaml").write_text(yaml.safe_dump({"top_k": {"type": "int", "low": 1, "high": 3},
                                                     "retriever": {"type": "categorical", "choices": ["bm25"]}}))
    study = {"name": name, "dataset": str(kb), "search_space": "space.yaml", "settings": {"candidate_depth": 10},
             "budget": {"trials": 2}, "pruning": {"enabled": False}, "sampler": {"name": "tpe", "seed": 1},
             "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0}, "output": "out", **overrides}
    path = work / f"{name}.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


def experiments(tree: Path, work: Path) -> list[tuple[str, str, Callable[[], tuple[bool, str]]]]:
    """(severity, experiment, run) where run returns (held, what was seen)."""

    def seen(code: int, line: str) -> str:
        return f"exit {code}: {line}"

    def line_separator_eval() -> tuple[bool, str]:
        kb = kb_with_line_separator(work / "u2028", tree)
        code, line = tuner(tree, kb.parent, "eval", "kb", "--retriever", "bm25", "--json")
        return code == 0, seen(code, "recall json printed" if code == 0 else line)

    def from_log_line_separator() -> tuple[bool, str]:
        folder = work / "fromlog"
        (folder / "kb").mkdir(parents=True)
        (folder / "kb" / "corpus.jsonl").write_text(json.dumps({"doc_id": "w", "text": "Warranty: 24 months."}) + "\n")
        (folder / "log.jsonl").write_text(json.dumps({"query": "How long\u2028is the warranty?"}, ensure_ascii=False) + "\n")
        tuner(tree, folder, "golden", "from-log", "log.jsonl", "out", "--dataset", "kb", "--pool", "bm25")
        raw = (folder / "out" / "review.jsonl").read_text("utf-8")
        whole = len(raw.splitlines()) == 1  # what another tool's line reader sees
        return whole, f"review.jsonl read with str.splitlines(): {len(raw.splitlines())} line(s) for 1 draft"

    def malformed(side: str, backend: str, body: str, kind: str) -> Callable[[], tuple[bool, str]]:
        def run() -> tuple[bool, str]:
            server, url = garbled_server(body, kind)
            try:
                config = work / f"{side}-{kind.replace('/', '-')}.yaml"
                config.write_text(yaml.safe_dump({"backend": backend, "base_url": url, "model": "m", "api_key_env": None,
                                                  "cache": False, "max_retries": 1, "backoff_base": 0.01}))
                code, line = tuner(tree, work, "robustness", str(tiny_kb(work)), "--retriever", "bm25", f"--{side}", str(config))
            finally:
                server.shutdown()
            return code == 0, seen(code, line if code else "table printed, missing scores counted by reason")
        return run

    def unscored_run() -> tuple[bool, str]:
        server, url = garbled_server("<html><body>502 Bad Gateway</body></html>", "text/html")
        try:
            generator = {"backend": "openai", "base_url": url, "model": "m", "api_key_env": None, "cache": False,
                         "max_retries": 1, "backoff_base": 0.01}
            code, line = tuner(tree, work, "run", str(study_file(work, tiny_kb(work), "unscored", generator=generator)))
        finally:
            server.shutdown()
        return code == 2 and "no trial could be scored" in line, seen(code, line)

    def alias_bomb() -> tuple[bool, str]:
        levels = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        levels += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 10)]
        path = study_file(work, tiny_kb(work), "bomb")
        body = "\n".join("    " + line for line in levels)
        path.write_text(path.read_text() + "generator:\n  backend: openai\n  base_url: http://127.0.0.1:9/v1\n  model: m\n"
                        "  api_key_env: null\n  extra_body:\n" + body + "\n")
        code, line = tuner(tree, work, "run", str(path), "--dry-run")
        return code == 2 and "aliases are not allowed" in line, seen(code, line)

    def sampler_typo() -> tuple[bool, str]:
        path = study_file(work, tiny_kb(work), "typo", sampler={"name": "tpe", "options": {"n_startup_trial": 5}})
        code, line = tuner(tree, work, "run", str(path), "--dry-run")
        return code == 2 and "n_startup_trial" in line, seen(code, line)

    def hostile_draft(bad: str) -> Callable[[], tuple[bool, str]]:
        def run() -> tuple[bool, str]:
            folder = work / "draft"
            folder.mkdir(exist_ok=True)
            (folder / "review.jsonl").write_text(bad + "\n")
            code, line = tuner(tree, folder, "golden", "review", "review.jsonl", "--port", "0", timeout=30)
            return code == 2 and "review.jsonl:1" in line, seen(code, line)
        return run

    def hostile_count() -> tuple[bool, str]:
        (work / "count.jsonl").write_text('{"query": "Price?", "count": ' + "9" * 5000 + "}\n")
        code, line = tuner(tree, work, "golden", "from-log", "count.jsonl", "count-out", "--dataset", str(tiny_kb(work)))
        return code == 2 and "count.jsonl:1" in line, seen(code, line)

    def review_draft() -> Path:
        """A real draft (``golden from-log`` over the tiny knowledge base), so a command gets as far as the port."""
        folder = work / "review"
        if not (folder / "out" / "review.jsonl").is_file():
            folder.mkdir(exist_ok=True)
            (folder / "log.jsonl").write_text(json.dumps({"query": "What about the price?"}) + "\n")
            tuner(tree, folder, "golden", "from-log", "log.jsonl", "out", "--dataset", str(tiny_kb(work)), "--pool", "bm25")
        return folder / "out" / "review.jsonl"

    def port(command: str, value: str) -> Callable[[], tuple[bool, str]]:
        def run() -> tuple[bool, str]:
            if command == "review":
                argv = ["golden", "review", str(review_draft()), "--dataset", str(tiny_kb(work))]
            else:
                (work / "deploy.yaml").write_text(yaml.safe_dump({"settings": {"retriever": "bm25", "top_k": 3}}))
                argv = ["serve", "--config", str(work / "deploy.yaml"), "--dataset", str(tiny_kb(work))]
            code, line = tuner(tree, work, *argv, "--port", value, timeout=120)
            return code == 2 and "port" in line and "Overflow" not in line, seen(code, line)
        return run

    def port_zero() -> tuple[bool, str]:
        env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
        process = subprocess.Popen([sys.executable, "-m", "tuner", "golden", "review", str(review_draft()), "--dataset",
                                    str(tiny_kb(work)), "--port", "0"], cwd=work, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            assert process.stdout is not None
            first = process.stdout.readline().strip()
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
        url = next((word for word in first.split() if word.startswith("http://")), first or "(nothing printed)")
        return not url.endswith(":0/") and url.startswith("http://127.0.0.1:"), f"prints {url}"

    def binary_files() -> tuple[bool, str]:
        folder = work / "binary"
        (folder / "src").mkdir(parents=True)
        (folder / "src" / "good.md").write_text("# Leave\n\nStaff get 20 days of leave.\n")
        (folder / "src" / "zeros.txt").write_bytes(b"\x00\x01\x02binary header\x00" * 200)  # valid UTF-8, not text
        (folder / "src" / "gone.md").symlink_to(folder / "src" / "deleted.md")
        env = {**os.environ, "PYTHONPATH": str(tree)}
        done = subprocess.run([sys.executable, "-m", "tuner", "import", "files", "src", "kb"], cwd=folder, env=env,
                              capture_output=True, text=True)
        corpus = [json.loads(line) for line in (folder / "kb" / "corpus.jsonl").read_text().split("\n") if line]
        named = [line for line in done.stdout.splitlines() if "zeros.txt" in line or "gone.md" in line]
        imported = sorted(row["doc_id"] for row in corpus)
        return imported == ["good.md"] and len(named) == 2, f"imported {imported}; lines naming them: {named or 'none'}"

    html = "<html><body>502 Bad Gateway</body></html>"
    truncated = '{"id": "chatcmpl-1", "choices": [{"message": {"content": "24 mon'
    return [
        ("high", "U+2028 in a document: import files, validate, eval", line_separator_eval),
        ("high", "U+2028 in a from-log query: the draft stays one line per row", from_log_line_separator),
        ("high", "openai generator, HTTP 200 HTML page: robustness", malformed("generator", "openai", html, "text/html")),
        ("high", "openai generator, HTTP 200 truncated JSON: robustness", malformed("generator", "openai", truncated, "application/json")),
        ("high", "llm judge, HTTP 200 truncated JSON: robustness", malformed("judge", "llm", truncated, "application/json")),
        ("high", "tuner run where no trial could be scored (HTML replies)", unscored_run),
        ("high", "YAML alias bomb in generator.extra_body: run --dry-run", alias_bomb),
        ("medium", "sampler options typo n_startup_trial: run --dry-run", sampler_typo),
        ("low", "draft line of 200,000 nested [", hostile_draft("[" * 200_000)),
        ("low", "draft line with a version of 5,000 digits", hostile_draft('{"id": "c1", "review": {"version": ' + "9" * 5000 + "}}")),
        ("low", "from-log JSONL count of 5,000 digits", hostile_count),
        ("low", "golden review --port 70000", port("review", "70000")),
        ("low", "serve --port -1", port("serve", "-1")),
        ("low", "golden review --port 0 prints the bound port", port_zero),
        ("low", "import files: a .txt of binary bytes and a dangling link", binary_files),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1], help="source tree to test")
    parser.add_argument("--work", type=Path, default=Path("/tmp/reliability38"))
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    held = 0
    runs = experiments(args.tree.resolve(), args.work)
    for severity, name, run in runs:
        ok, what = run()
        held += ok
        print(f"| {severity} | {name} | {'held' if ok else 'FAILED'} | {what.replace('|', '/')} |", flush=True)
    print(f"{held} of {len(runs)} held ({args.tree})")


if __name__ == "__main__":
    main()
