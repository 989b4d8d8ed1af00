"""Command line (**CLI** → public package names): arguments shared by commands that evaluate one configuration on one
dataset."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

if TYPE_CHECKING:
    from tuner.dataset import Dataset
    from tuner.embedding import EmbeddingContext, EmbeddingOptions
    from tuner.engine import Engine, EngineFlag
    from tuner.evaluation import CaseOutcome, RobustnessEvaluator
    from tuner.generation import Generator, GeneratorConfig
    from tuner.judging import Judge, JudgeConfig
    from tuner.backends import BackendRegistry
    from tuner.backends import BackendResources
    from tuner.variants import VariantsConfig
    from tuner.progress import Reporter
    from tuner.retrieval import RetrievalPipeline
    from tuner.settings import RetrievalSettings

C = TypeVar("C")


def port_number(text: str) -> int:
    """The ``--port`` of the two services, for argparse: a whole number from 0 (any free port, the one chosen is
    printed) to 65535; anything else is argparse's one-line error (exit 2), never an OverflowError at bind time."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is from 0 to 65535 (0: any free port), got {port}")
    return port


def add_dataset_argument(parser: argparse.ArgumentParser, optional: bool = False) -> None:
    parser.add_argument(
        "dataset", metavar="DATASET", nargs="?" if optional else None, help="dataset folder, or 'demo' / 'demo-zh' for the built-in English / Chinese demo"
    )


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("retrieval settings (defaults: see docs/retrieval.md)")
    group.add_argument("--config", metavar="FILE", help="YAML/JSON settings file, e.g. written by 'tuner export'")
    for name, kind, help_text in settings_flags():
        group.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, help=help_text)


def settings_flags() -> list[tuple[str, Callable[[str], Any], str]]:
    """One ``--flag`` per retrieval setting: (name, what argparse converts the text with, the setting's description).
    Values are validated by the settings model afterwards, so a Literal is parsed as the type of its choices and a
    mapping as YAML (``{current: {status: current}}``)."""
    from tuner.settings import RetrievalSettings

    flags: list[tuple[str, Callable[[str], Any], str]] = []
    for name, info in RetrievalSettings.model_fields.items():
        kind = _flag_type(info.annotation)
        assert (isinstance(kind, type) or kind is _yaml_mapping) and info.description, \
            f"setting {name} needs a plain type or a mapping, and a description"
        flags.append((name, kind, info.description))
    return flags


def _flag_type(annotation: Any) -> Any:
    """``int`` for ``int``, ``str`` for ``Literal["a", "b"]``, ``X`` for ``X | None``, a YAML parser for a mapping."""
    from typing import Literal, get_args, get_origin

    if get_origin(annotation) is dict:
        return _yaml_mapping
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    if get_origin(annotation) is Literal:
        return type(args[0])
    return _flag_type(args[0]) if args else annotation


def _yaml_mapping(text: str) -> dict[str, Any]:
    """A mapping written as YAML on the command line; anything else is argparse's one-line error."""
    import yaml

    from tuner.io import load_yaml

    try:
        value = load_yaml(text)
    except yaml.YAMLError:
        value = None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a YAML mapping such as '{{current: {{status: current}}}}', got {text!r}")
    return value


def settings_from_args(args: argparse.Namespace) -> RetrievalSettings:
    """The model defaults in the manifest of the ``DATASET`` argument (``dataset.yaml``: embedding model,
    reranker, prompts), then ``--config``, then any flag given on the command line; each layer overrides
    the ones before it."""
    from tuner.dataset import manifest_model_defaults, resolve_dataset
    from tuner.settings import load_settings_file, read_settings_file, settings_from_mapping

    defaults = manifest_model_defaults(resolve_dataset(args.dataset)) if getattr(args, "dataset", None) else {}
    base = load_settings_file(args.config, defaults) if args.config else settings_from_mapping({}, "dataset.yaml", defaults)
    overrides = {name: getattr(args, name) for name, _, _ in settings_flags() if getattr(args, name) is not None}
    if not overrides:
        return base
    given = read_settings_file(args.config) if args.config else {}
    return settings_from_mapping({**given, **overrides}, "command line", defaults)


def add_variant_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("variants v1-v4: injected chunks (see docs/robustness.md)")
    group.add_argument(
        "--injected", "--noise-n", dest="injected", type=int, metavar="N",
        help="chunks injected in every variant (default: 3 for v1-v3, 4 for v4; --noise-n is its old spelling)",
    )
    group.add_argument(
        "--band",
        choices=("relative", "absolute"),
        help="v1/v2/v4 similarity bands: per-question quantiles (relative, default) or fixed cosines (absolute)",
    )
    group.add_argument("--position", choices=("front", "middle", "end", "random"), help="where injected chunks go (default end)")
    group.add_argument(
        "--hard-mode",
        dest="hard_mode",
        choices=("in_index", "inject"),
        help="v3: retrieve over the index with conflicts (in_index, default) or append conflicts of the relevant docs (inject)",
    )
    group.add_argument("--seed", type=int, help="seed of the injected chunks' sampling and random positions (default 0)")


def variants_from_args(args: argparse.Namespace) -> VariantsConfig:
    """The default :class:`VariantsConfig` with every variant flag given on the command line applied."""
    from pydantic import ValidationError

    from tuner.errors import UserError
    from tuner.variants import VariantsConfig

    names = {"injected": "n", "position": "position", "band": "band", "hard_mode": "hard_mode", "seed": "seed"}
    given = {field: getattr(args, flag) for flag, field in names.items() if getattr(args, flag) is not None}
    try:
        return VariantsConfig(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        flag = next(f for f, field in names.items() if field == first["loc"][0]).replace("_", "-")
        raise UserError(f"command line: --{flag}: {first['msg']}") from None


_EMBEDDING_FLAGS = {"device": "--device", "batch_size": "--embedding-batch-size", "backend": "--embedding-backend"}


def add_embedding_arguments(parser: argparse.ArgumentParser) -> None:
    from tuner.extras import install_command

    group = parser.add_argument_group("embeddings (how vectors are computed; a study file's 'embedding:')")
    group.add_argument("--device", help="where a local embedding model runs: auto (default: cuda, else mps, else cpu), cpu, cuda or mps")
    group.add_argument("--embedding-batch-size", dest="embedding_batch_size", type=int, metavar="N",
                       help="texts per forward pass, or per request to an embeddings endpoint (default: per device and backend)")
    group.add_argument("--embedding-backend", dest="embedding_backend", metavar="NAME",
                       help="what runs a local model: torch (default, the fp32 reference), onnx, onnx-int8, openvino, "
                            "openvino-bf16, or auto (the fastest installed one whose vectors agree with torch's) "
                            f"({install_command('fast')}); tuner serve defaults to the backend the exported trial was measured with")


def embeddings_from_args(args: argparse.Namespace, base: EmbeddingOptions | None = None, store_url: str | None = None) -> EmbeddingContext:
    """The embedding context of a command: ``--device`` / ``--embedding-batch-size`` / ``--embedding-backend`` over
    ``base`` (a study file's ``embedding:``), with vectors kept in ``store_url`` (see
    :meth:`tuner.embedding.EmbeddingContext.configure`). A bad value, or a device this machine lacks, is one line
    naming the flag, before any work starts."""
    from pydantic import ValidationError

    from tuner.embedding import EmbeddingContext, EmbeddingOptions, available_devices, select_device
    from tuner.errors import UserError

    given = {"device": args.device, "batch_size": args.embedding_batch_size, "backend": args.embedding_backend}
    overrides = {field: value for field, value in given.items() if value is not None}
    try:
        options = EmbeddingOptions(**{**(base or EmbeddingOptions()).model_dump(), **overrides})
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0])
        raise UserError(f"command line: {_EMBEDDING_FLAGS[field]} {given[field]}: {exc.errors()[0]['msg']}") from None
    if options.device not in ("auto", "cpu"):  # a named accelerator this machine lacks fails now, not deep inside torch
        select_device(options.device, available_devices(), options.backend,
                      "--device" if "device" in overrides else "embedding.device")
    return EmbeddingContext(options, store_url)


class EngineOption(NamedTuple):
    """One ``--engine-<field>`` flag: the field it gives, of which engine, how argparse converts its text, and the
    field's :class:`tuner.engine.EngineFlag` and description (its help)."""

    option: str
    field: str
    backend: str
    kind: Callable[[str], Any]
    flag: EngineFlag
    help: str

    @property
    def dest(self) -> str:
        return "engine_" + self.option.removeprefix("--engine-").replace("-", "_")


def engine_flags(collections: bool = True) -> list[EngineOption]:
    """One flag per field of each engine ``--engine`` offers (``--engine-<field>``, or the name its
    :class:`tuner.engine.EngineFlag` gives). ``collections`` False leaves out the flags only a command that measures
    takes (``tuner serve`` takes the index and an attached collection from the export)."""
    from tuner.engine import ENGINES, EngineFlag

    flags = []
    for backend, engine in ENGINES.items():
        for name, info in engine.model_fields.items():
            flag = next((m for m in info.metadata if isinstance(m, EngineFlag)), EngineFlag())
            if not engine.on_command_line or name == "backend" or (flag.measures and not collections):
                continue
            assert info.description, f"engine {backend}: field {name} needs a description (its flag's help)"
            kind = str if flag.parse is not None else _flag_type(info.annotation)  # parsed once the engine is known
            flags.append(EngineOption(flag.name(name), name, backend, kind, flag, info.description))
    return flags


def add_engine_arguments(parser: argparse.ArgumentParser, collections: bool = False) -> None:
    """The ``--engine`` flags (:func:`engine_flags`); with ``collections`` also the dense index of the collections
    searched and attach mode (a command that measures: ``tuner serve`` takes the index from the export and serves
    collections tuner built)."""
    from tuner.engine import ENGINES

    group = parser.add_argument_group("engine (where the first stage runs; a study file's 'engine:', docs/engine.md)")
    offered = {backend: engine for backend, engine in ENGINES.items() if engine.on_command_line}
    group.add_argument("--engine", choices=tuple(offered),
                       help="; ".join(f"{backend}: {engine.label}" for backend, engine in offered.items()))
    owners: dict[str, list[str]] = {}
    for flag in engine_flags():
        owners.setdefault(flag.option, []).append(flag.backend)
    added = set()
    for flag in engine_flags(collections):
        if flag.option not in added:  # a field several engines have is one flag
            added.add(flag.option)
            group.add_argument(flag.option, dest=flag.dest, type=flag.kind, metavar=flag.flag.metavar,
                               help=f"with --engine {' or '.join(owners[flag.option])}: {flag.help}")
    parser.set_defaults(**{flag.dest: None for flag in engine_flags() if flag.option not in added})


def engine_from_args(args: argparse.Namespace) -> Engine:
    """The engine of ``--engine`` and its flags; a flag of another engine is refused, and so is a required field
    left out or a field given without the one it goes with (:attr:`tuner.engine.EngineFlag.together`)."""
    from tuner.engine import ENGINES, parse_engine
    from tuner.errors import UserError

    backend = args.engine or "memory"
    flags = engine_flags()
    mine = {flag.field: flag for flag in flags if flag.backend == backend}
    for flag in flags:
        if getattr(args, flag.dest) is not None and flag.field not in mine:
            owners = " or ".join(other.backend for other in flags if other.option == flag.option)
            raise UserError(f"command line: {flag.option} goes with --engine {owners}")
    given = {name: getattr(args, flag.dest) for name, flag in mine.items() if getattr(args, flag.dest) is not None}
    for name, info in ENGINES[backend].model_fields.items():
        if info.is_required() and name != "backend" and name not in given:
            raise UserError(f"command line: --engine {backend} needs {mine[name].option} ({mine[name].help})")
    for name, flag in mine.items():
        together = flag.flag.together
        if together is not None and (name in given) != (together in given):
            raise UserError(f"command line: {flag.option} and {mine[together].option} go together")
    parsed = {name: value if (parse := mine[name].flag.parse) is None else parse(value) for name, value in given.items()}
    return parse_engine({"backend": backend, **parsed}, "command line")


def pipeline_from_args(args: argparse.Namespace, dataset: Dataset, reporter: Reporter,
                       embeddings: EmbeddingContext) -> RetrievalPipeline:
    """The retrieval pipeline of ``--engine`` over ``dataset`` (an unreachable engine fails here, before any work); with
    ``--config`` an export measured on an engine, that engine when ``--engine`` is not given (:func:`exported_engine`)."""
    return exported_engine(args, reporter).pipeline(dataset, reporter=reporter, embeddings=embeddings)


def exported_engine(args: argparse.Namespace, reporter: Reporter) -> Engine:
    """The engine a command that measures one configuration searches: ``--engine`` and its flags; with ``--config``
    naming an export measured on another engine (``provenance.engine``), that engine when ``--engine`` is not given
    (:meth:`tuner.engine.Engine.from_record`: its secret read from the variable the export names; an attached
    collection through its recorded fields), and with ``--engine`` given, that address with what the export fixes
    (:func:`tuner.deploy.serving_engine`: the index, the attached collection), as ``tuner serve`` serves it."""
    from tuner.deploy import measured_backend, serving_engine
    from tuner.engine import ENGINES
    from tuner.export import read_export
    from tuner.redaction import redact

    engine = engine_from_args(args)
    if not getattr(args, "config", None):
        return engine
    provenance = read_export(args.config).provenance
    measured = measured_backend(provenance)
    if args.engine is not None or measured in (None, engine.backend) or measured not in ENGINES:
        return serving_engine(engine, provenance)
    recorded = provenance["engine"]
    found = ENGINES[measured].from_record(recorded, f"{args.config}: provenance.engine")
    attached = recorded.get("collection")
    reporter.stage(f"engine: {args.config} was measured on {measured} ({redact(str(recorded.get('uri')))}"
                   + (f", collection {attached}" if attached else "")
                   + "): searched there (--engine memory searches in memory)")
    return found


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("answer generation and judging (see docs/robustness.md)")
    group.add_argument("--generator", metavar="FILE", help="YAML with a 'generator:' mapping (default: offline extractive)")
    group.add_argument("--judge", metavar="FILE", help="YAML with a 'judge:' mapping (default: offline lexical)")


def load_backend_config(path: str | None, registry: BackendRegistry[Any, C]) -> C:
    """The config of a ``registry.kind`` backend ("generator" or "judge") in YAML file ``path``: the mapping
    under ``kind:`` if there is one (so a study file can be given as is), else the whole mapping; no file
    gives the default."""
    from tuner.errors import UserError
    from tuner.io import read_yaml_mapping

    kind = registry.kind
    if path is None:
        return registry.parse(None, "default")

    data = read_yaml_mapping(path, f"a '{kind}:' section or the {kind} settings themselves")
    section = data.get(kind, data)
    if not isinstance(section, dict):
        raise UserError(f"{path}: {kind}: expected a mapping")
    return registry.parse(section, path)


def backend_configs_from_args(args: argparse.Namespace) -> tuple[GeneratorConfig, JudgeConfig]:
    """(generator config, judge config) from ``--generator`` / ``--judge``, validated, defaults if absent."""
    from tuner.generation import GENERATORS
    from tuner.judging import JUDGES

    return load_backend_config(args.generator, GENERATORS), load_backend_config(args.judge, JUDGES)


def backends_from_args(args: argparse.Namespace, resources: BackendResources) -> tuple[Generator, Judge]:
    """The generator and judge named by ``--generator`` / ``--judge``, sharing ``resources``."""
    from tuner.generation import build_generator
    from tuner.judging import build_judge

    generator_config, judge_config = backend_configs_from_args(args)
    return build_generator(generator_config, resources), build_judge(judge_config, resources)


def evaluate_with_progress(
    evaluator: RobustnessEvaluator, settings: RetrievalSettings, variants: Sequence[str], reporter: Reporter
) -> list[CaseOutcome]:
    """``evaluator.evaluate`` over every case with keypoints, in batches of cases so a progress bar can
    advance; a batch holds at least twice the backends' concurrency, so no call slot idles for long."""
    case_ids = [case.id for case in evaluator.pipeline.dataset.golden if case.keypoints]
    responder = evaluator.responder
    size = max(8, 2 * responder.generator.concurrency, 2 * responder.judge_backend.concurrency)
    outcomes: list[CaseOutcome] = []
    with reporter.task(f"answering and judging {len(case_ids)} cases × {len(variants)} variants", len(case_ids)) as task:
        for start in range(0, len(case_ids), size):
            batch = case_ids[start : start + size]
            outcomes.extend(evaluator.evaluate(settings, variants, batch))
            task.advance(len(batch))
    return outcomes
