"""The study loop's own CPU per trial (issue 54 §3): what a trial costs beyond retrieval and answering — the Optuna
storage it reads and writes, the fronts and intervals it computes — on the demo knowledge base with a BM25-only space
(no model to load), the offline reader and judge, pruning on, a SQLite study file. Run:

    HF_HUB_OFFLINE=1 python bench/study_loop.py [--trials 30] [--rounds 3]

Each round runs a fresh study in this process after one warm-up run (indexes built, modules imported), and prints
the process CPU per finished trial and the storage calls per trial: reads of the trials (``get_all_trials``) and
user-attribute writes. To compare two commits, run it with ``PYTHONPATH`` at a worktree of the other (the editable
install's finder comes after ``sys.path``); the tuner imported is printed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

import optuna
import yaml

SPACE = {
    "top_k": {"type": "int", "low": 1, "high": 10},
    "relevance_threshold": {"type": "float", "low": 0.0, "high": 0.4, "step": 0.1},
    "rerank_strength": {"type": "categorical", "choices": [0.0]},
    "chunk_size": {"type": "categorical", "choices": [320]},
    "retriever": {"type": "categorical", "choices": ["bm25"]},
}


def _study_file(folder: Path, trials: int) -> Path:
    (folder / "space.yaml").write_text(yaml.safe_dump(SPACE))
    study = {
        "name": "loop", "dataset": "demo", "search_space": "space.yaml", "objectives": ["recall_at_k", "v3_delta_faithful"],
        "settings": {"candidate_depth": 30}, "generator": {"backend": "extractive"}, "judge": {"backend": "lexical"},
        "variants": {"n": 2, "position": "end", "hard_mode": "in_index", "seed": 0}, "sampler": {"name": "tpe", "seed": 0},
        "budget": {"trials": trials}, "noise_floor": {"recall_at_k": 0.0, "v3_delta_faithful": 0.0},
        "pruning": {"enabled": True, "batch_size": 20, "alpha": 0.05, "spending": "pocock", "looks": [0.1, 0.2, 0.35, 0.5, 0.7]},
        "output": "out",
    }
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


class _Counted:
    """Counts of the storage calls of the study loop, by wrapping Optuna's cached storage (the loop's storage)."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        cached = optuna.storages._cached_storage._CachedStorage
        for name in ("get_all_trials", "set_trial_user_attr"):
            original = getattr(cached, name)

            def counted(self_: object, *args: object, _original=original, _name=name, **kwargs: object) -> object:
                self.calls[_name] += 1
                return _original(self_, *args, **kwargs)

            setattr(cached, name, counted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import tuner
    from tuner.cli import main as tuner_main
    from tuner.front import study_summary

    print(f"tuner from {Path(tuner.__file__).parent}")
    counted = _Counted()
    with tempfile.TemporaryDirectory() as work:
        warm = Path(work) / "warm"
        warm.mkdir()
        assert tuner_main(["run", str(_study_file(warm, 3)), "--no-report"]) == 0
        per_trial = []
        for round_ in range(1, args.rounds + 1):
            folder = Path(work) / f"round{round_}"
            folder.mkdir()
            study_file = _study_file(folder, args.trials)
            counted.calls.clear()
            cpu = time.process_time()
            assert tuner_main(["run", str(study_file), "--no-report"]) == 0
            cpu = time.process_time() - cpu
            study = optuna.load_study(study_name="loop", storage=f"sqlite:///{folder / 'out' / 'loop' / 'study.db'}")
            summary = study_summary(study)
            trials = len(study.trials)
            per_trial.append(cpu / trials)
            print(f"round {round_}: {trials} trials ({summary.n_complete} complete, {summary.n_pruned} pruned), "
                  f"{cpu:.2f} s CPU, {1000 * cpu / trials:.0f} ms/trial; per trial: "
                  f"{counted.calls['get_all_trials'] / trials:.1f} trial reads, "
                  f"{counted.calls['set_trial_user_attr'] / trials:.1f} attribute writes")
        print(f"median CPU per trial: {1000 * statistics.median(per_trial):.0f} ms")


if __name__ == "__main__":
    main()
