"""Serve (export → **gate** in CI): cost control: a fixed-seed sample of cases plus the cases that must always be
checked."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from tuner.errors import UserError


def read_case_list(path: str | Path, known: Sequence[str]) -> list[str]:
    """Case ids from a text file, one per line (blank lines and ``#`` comments skipped).

    An id that is not a golden case is an error naming ``file:line``.
    """
    try:
        lines = Path(path).read_text("utf-8").splitlines()
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text") from None
    valid = set(known)
    ids: list[str] = []
    for number, line in enumerate(lines, start=1):
        case_id = line.split("#", 1)[0].strip()
        if not case_id:
            continue
        if case_id not in valid:
            raise UserError(f"{path}:{number}: unknown case id '{case_id}'")
        ids.append(case_id)
    return list(dict.fromkeys(ids))


def select_cases(
    case_ids: Sequence[str], sample: int | None, seed: int = 0, always: Sequence[str] = ()
) -> list[str]:
    """``sample`` cases drawn with ``random.Random(seed)`` plus every id in ``always``, in dataset order.

    The same ids, seed and ``sample`` always give the same selection, so a daily gate and its
    baseline look at the same questions. ``sample=None`` (or ≥ the number of cases) selects all.
    """
    if sample is None or sample >= len(case_ids):
        return list(case_ids)
    if sample < 0:
        raise ValueError(f"sample must be non-negative, got {sample}")
    chosen = set(random.Random(seed).sample(list(case_ids), sample)) | set(always)
    return [case_id for case_id in case_ids if case_id in chosen]
