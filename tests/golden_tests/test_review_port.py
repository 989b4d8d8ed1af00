"""``tuner golden review --port 0`` (issue 38): the system picks a free port and the line printed names it, not
``http://127.0.0.1:0/``; the page is answered there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

REPO = Path(__file__).resolve().parents[2]


def test_port_zero_prints_the_port_it_listens_on(draft: Path, kb: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen([sys.executable, "-m", "tuner", "golden", "review", str(draft), "--dataset", str(kb), "--port", "0"],
                               env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"open http://127\.0\.0\.1:(\d+)/ ", line)
        assert match is not None and int(match.group(1)) > 0, line
        page = httpx.get(f"http://127.0.0.1:{match.group(1)}/", timeout=30)
        assert page.status_code == 200 and "log-0001" in page.text
    finally:
        process.terminate()
        process.wait(timeout=30)
