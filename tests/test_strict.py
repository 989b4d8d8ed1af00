"""One strict base model (issue 53): no model outside ``tuner/strict.py`` spells ``ConfigDict(extra="forbid",
frozen=True)`` again, it subclasses :class:`tuner.strict.StrictModel` (read from the source with ``ast``, so a model
added with its own config fails here); and the models moved onto it keep their fields' behaviour."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import ValidationError

TUNER = Path(__file__).resolve().parents[1] / "tuner"


def strict_configs(source: str) -> list[str]:
    """Classes of ``source`` whose ``model_config`` is ``ConfigDict(extra="forbid", frozen=True)`` (in any order,
    with other keys or not)."""
    def spells_it(call: ast.expr) -> bool:
        if not (isinstance(call, ast.Call) and getattr(call.func, "id", getattr(call.func, "attr", "")) == "ConfigDict"):
            return False
        keys = {kw.arg: kw.value.value for kw in call.keywords if isinstance(kw.value, ast.Constant)}
        return keys.get("extra") == "forbid" and keys.get("frozen") is True

    return [node.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)
            for item in node.body if isinstance(item, ast.Assign | ast.AnnAssign) and item.value is not None
            and any(getattr(t, "id", None) == "model_config" for t in (item.targets if isinstance(item, ast.Assign)
                                                                       else [item.target]))
            and spells_it(item.value)]


def test_no_model_outside_strict_spells_the_strict_config() -> None:
    found = {str(path.relative_to(TUNER)): names for path in TUNER.rglob("*.py") if path.name != "strict.py"
             if (names := strict_configs(path.read_text("utf-8")))}
    assert not found, found


def test_the_finder_sees_the_config_in_any_order() -> None:
    source = ("class A(BaseModel):\n    model_config = ConfigDict(frozen=True, extra='forbid')\n"
              "class B(BaseModel):\n    model_config: ClassVar = pydantic.ConfigDict(extra='forbid', frozen=True, strict=True)\n"
              "class C(BaseModel):\n    model_config = ConfigDict(extra='forbid')\n"
              "class D(BaseModel):\n    model_config = ConfigDict(extra='ignore', frozen=True)\n")
    assert strict_configs(source) == ["A", "B"]


def test_the_moved_models_refuse_unknown_keys_stay_frozen_and_read_yaml_on_off() -> None:
    from tuner.deploy.service import ServiceLimits
    from tuner.embedding import EmbeddingOptions
    from tuner.generation import CallableGeneratorConfig, ExtractiveGeneratorConfig, LocalGeneratorConfig

    for model, values in [(ServiceLimits, {}), (EmbeddingOptions, {}), (ExtractiveGeneratorConfig, {}),
                          (CallableGeneratorConfig, {"function": "m:f"}), (LocalGeneratorConfig, {})]:
        with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
            model.model_validate({**values, "misspelt": 1})
        config = model.model_validate(values)
        with pytest.raises(ValidationError, match="frozen"):
            setattr(config, next(iter(model.model_fields)), None)
    assert LocalGeneratorConfig.model_validate({"chat": True}).chat == "on"
    assert LocalGeneratorConfig.model_validate({"chat": False}).chat == "off"
    # a boolean never becomes a word where the field takes no on/off: cache stays a boolean, device refuses it
    assert LocalGeneratorConfig.model_validate({"cache": False}).cache is False
    with pytest.raises(ValidationError, match="device"):
        EmbeddingOptions.model_validate({"device": True})
