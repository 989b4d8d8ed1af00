"""Does the local chat model help as the ``llm`` judge (issue 46)? Qwen2.5-Coder 0.5B Instruct, asked through its chat
template (the local generator's chat path), judges the span reader's answers and contexts keypoint by keypoint with the
``llm`` judge's own prompts; its verdicts are compared with the lexical judge's (tuner's offline default) on the same
answers, and timed.

The lexical judge is not ground truth; where the two disagree the table shows which way. Two checks need no ground
truth: on the answer side a keypoint the lexical judge finds *verbatim* (an alias inside the answer) is stated, so a
judge that calls it anything but ``supported`` is wrong; and an answer ``I don't know.`` states nothing.

Run from the repository root: ``PYTHONPATH=. python bench/local_judge.py [--cases 10] [--datasets demo,demo-zh]``
(needs ``tuner[local]``); prints Markdown.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.robustness import results_header  # noqa: E402
from tuner.backends import BackendResources  # noqa: E402
from tuner.cache import DiskCache, default_cache_root  # noqa: E402
from tuner.dataset import load_dataset, resolve_dataset  # noqa: E402
from tuner.generation import ExtractiveGeneratorConfig, LocalGeneratorConfig, build_generator, llama_cpp_runtime  # noqa: E402
from tuner.generation._llama import LlamaCpp  # noqa: E402
from tuner.judging import LexicalJudge, normalize  # noqa: E402
from tuner.judging._llm import LLMJudge, LLMJudgeConfig  # noqa: E402
from tuner.llm import Message  # noqa: E402
from tuner.llm._client import Completion  # noqa: E402
from tuner.retrieval import RetrievalPipeline  # noqa: E402
from tuner.settings import DEFAULT_EMBEDDING_MODEL, RetrievalSettings  # noqa: E402

MODEL = "qwen2.5-coder-0.5b-instruct"


class LocalChat:
    """What the ``llm`` judge asks of a chat client (``complete(messages, response_format)``), answered by the local
    model's chat path, greedily; counts requests and their wall and CPU seconds."""

    def __init__(self, runtime: LlamaCpp, max_tokens: int = 128) -> None:
        self.runtime, self.max_tokens = runtime, max_tokens
        self.requests, self.wall, self.cpu = 0, 0.0, 0.0

    def complete(self, messages: Sequence[Message], response_format: Mapping[str, Any] | None = None) -> Completion:
        begin, cpu = time.perf_counter(), time.process_time()
        reply = self.runtime.chat(messages, self.max_tokens)
        self.requests += 1
        self.wall += time.perf_counter() - begin
        self.cpu += time.process_time() - cpu
        return Completion(reply.text, reply.prompt_tokens, reply.completion_tokens, cached=False)


def compare(name: str, cases: int, resources: BackendResources, chat: LocalChat) -> Counter[str]:
    dataset = load_dataset(resolve_dataset(name))
    encoder = resources.embeddings.encoder(DEFAULT_EMBEDDING_MODEL, default_cache_root())
    resources.encoder = encoder
    pipeline = RetrievalPipeline(dataset, cache=DiskCache(default_cache_root()), encoder=encoder)
    settings = RetrievalSettings.model_validate({"retriever": "hybrid", "top_k": 3,
                                                 **({"chunk_unit": "chars", "chunk_size": 300} if name == "demo-zh" else {})})
    reader = build_generator(ExtractiveGeneratorConfig(reader="span"), resources)
    lexical = LexicalJudge()
    judge = LLMJudge(LLMJudgeConfig(base_url="local", model=MODEL, api_key_env=None, concurrency=1), chat)  # type: ignore[arg-type]
    tally: Counter[str] = Counter()
    retrieved = {context.case_id: context for context in pipeline.retrieve(settings)}
    for case in [c for c in dataset.golden if c.keypoints][:cases]:
        contexts = [chunk.text for chunk in retrieved[case.id].chunks]
        for answer in (reader.generate(case.question, contexts).text, "I don't know."):
            wrong = dataset.wrong_answers(case)
            pairs = zip(case.keypoints, lexical.judge(case.question, answer, contexts, case.keypoints, wrong),
                        judge.judge(case.question, answer, contexts, case.keypoints, wrong))
            for keypoint, lex, llm in pairs:
                kind = "idk" if answer == "I don't know." else "answer"
                verbatim = any(normalize(alias).text in normalize(answer).text for alias in keypoint)
                tally[f"{kind} n"] += 1
                tally[f"{kind} agree"] += lex.answer == llm.answer
                tally[f"{kind} llm supported"] += llm.answer == "supported"
                tally[f"{kind} lexical supported"] += lex.answer == "supported"
                tally[f"{kind} missing"] += llm.answer is None
                if kind == "answer":
                    tally["verbatim n"] += verbatim
                    tally["verbatim llm supported"] += verbatim and llm.answer == "supported"
                    tally["context n"] += 1
                    tally["context agree"] += lex.context == llm.context
                    tally["context llm supported"] += llm.context == "supported"
                    tally["context lexical supported"] += lex.context == "supported"
                    tally["context missing"] += llm.context is None
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("--datasets", default="demo,demo-zh")
    args = parser.parse_args()
    for line in results_header("### Issue 46: the local chat model as the llm judge"):
        print(line)
    resources = BackendResources()
    runtime = llama_cpp_runtime(LocalGeneratorConfig(model=MODEL))
    print("\n| dataset | what is judged | keypoints | agreement with lexical | supported: llm / lexical | llm verdict missing |")
    print("|---|---|---|---|---|---|")
    for name in args.datasets.split(","):
        chat = LocalChat(runtime)
        tally = compare(name, args.cases, resources, chat)
        for kind, label in (("answer", "span reader's answer"), ("context", "retrieved passages"), ("idk", "answer `I don't know.`")):
            n = tally[f"{kind} n"]
            print(f"| {name} | {label} | {n} | {tally[f'{kind} agree'] / max(n, 1):.2f} ({tally[f'{kind} agree']}/{n}) "
                  f"| {tally[f'{kind} llm supported']} / {tally[f'{kind} lexical supported']} | {tally[f'{kind} missing']} |")
        print(f"| {name} | answer holds a keypoint verbatim: llm says supported | {tally['verbatim n']} "
              f"| {tally['verbatim llm supported'] / max(tally['verbatim n'], 1):.2f} ({tally['verbatim llm supported']}/{tally['verbatim n']}) | | |")
        print(f"\n- {name}: {chat.requests} judge requests, {chat.wall / max(chat.requests, 1):.2f} s wall and "
              f"{chat.cpu / max(chat.requests, 1):.2f} s CPU each ({chat.wall:.0f} s wall, {chat.cpu:.0f} s CPU in all)\n")


if __name__ == "__main__":
    main()
