"""Every exception class tuner defines lives in ``tuner/errors.py`` under one root, :class:`tuner.errors.TunerError`
(issue 53), read from the source with ``ast`` so a class added elsewhere fails here."""

from __future__ import annotations

import ast
import builtins
import inspect
from pathlib import Path

import tuner.errors as errors

TUNER = Path(__file__).resolve().parents[1] / "tuner"
BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                      if isinstance(value, type) and issubclass(value, BaseException)}
OURS = {name for name, value in vars(errors).items() if isinstance(value, type) and issubclass(value, BaseException)}


def exception_classes(source: str) -> list[str]:
    """Classes of ``source`` whose bases name a built-in exception or one of tuner.errors."""
    return [node.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)
            and any((base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else "")
                    in BUILTIN_EXCEPTIONS | OURS for base in node.bases)]


def test_no_exception_class_lives_outside_errors() -> None:
    outside = {str(path.relative_to(TUNER)): found for path in TUNER.rglob("*.py") if path.name != "errors.py"
               if (found := exception_classes(path.read_text("utf-8")))}
    assert outside == {}


def test_the_finder_sees_an_exception_class() -> None:
    assert exception_classes("class A(ValueError): ...\nclass B(errors.UserError): ...\nclass C(dict): ...") == ["A", "B"]


def test_every_exception_of_errors_is_a_tuner_error_and_the_old_homes_name_the_same_class() -> None:
    from tuner.deploy import EngineCorpus
    from tuner.io import MalformedLine

    classes = [value for value in vars(errors).values()
               if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == errors.__name__]
    assert len(classes) >= 17 and all(issubclass(c, errors.TunerError) for c in classes)
    assert EngineCorpus is errors.EngineCorpus and MalformedLine is errors.MalformedLine
    assert issubclass(MalformedLine, ValueError)  # callers that caught the ValueError it was still catch it
