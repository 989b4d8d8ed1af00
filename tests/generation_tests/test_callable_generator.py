from __future__ import annotations

from pathlib import Path

import pytest

from tuner.errors import UserError
from tuner.generation import Answer, CallableGeneratorConfig, build_generator, load_callable

MODULE = '''
calls = []

def answer(question, contexts):
    calls.append((question, contexts))
    return f"{question} -> {' | '.join(contexts)}"

def broken(question, contexts):
    raise RuntimeError("service down")

def blank(question, contexts):
    return "  "

def not_text(question, contexts):
    return 42

class Service:
    @staticmethod
    def ask(question, contexts):
        return "from a method"

NOT_CALLABLE = 3
'''


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "my_rag_wrapper.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_rag_wrapper"


def test_calls_the_function_with_contexts_in_order(user_module: str) -> None:
    generator = build_generator(CallableGeneratorConfig(function=f"{user_module}:answer"))
    assert generator.generate("q?", ("b", "a")) == Answer("q? -> b | a")
    assert generator.name == "callable" and generator.concurrency == 1


def test_dotted_attribute(user_module: str) -> None:
    assert build_generator(CallableGeneratorConfig(function=f"{user_module}:Service.ask")).generate("q", []) == Answer(
        "from a method"
    )


def test_failures_are_recorded_or_raised(user_module: str) -> None:
    assert build_generator(CallableGeneratorConfig(function=f"{user_module}:broken")).generate("q", []) == Answer.missing(
        "backend_error"
    )
    assert build_generator(CallableGeneratorConfig(function=f"{user_module}:blank")).generate("q", []) == Answer.missing(
        "empty_answer"
    )
    with pytest.raises(UserError, match="not_text' returned int"):
        build_generator(CallableGeneratorConfig(function=f"{user_module}:not_text")).generate("q", [])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("my_rag_wrapper.answer", "must look like 'package.module:function'"),
        ("my_rag_wrapper:", "must look like"),
        ("no_such_module_xyz:answer", "cannot import module 'no_such_module_xyz'"),
        ("my_rag_wrapper:missing", "has no attribute 'missing'"),
        ("my_rag_wrapper:NOT_CALLABLE", "is not callable"),
    ],
)
def test_bad_specs_name_the_spec(user_module: str, spec: str, message: str) -> None:
    with pytest.raises(UserError, match=message) as info:
        load_callable(spec)
    assert spec in str(info.value)
