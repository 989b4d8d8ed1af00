"""Command line (**CLI** → public package names): arguments shared by commands that evaluate one configuration on one
dataset."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from tuner.dataset import Dataset
    from tuner.embedding import EmbeddingContext, EmbeddingOptions
    from tuner.engine import MemoryEngine, MilvusEngine
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
    group = parser.add_argument_group("embeddings (how vectors are computed; a study file's 'embedding:')")
    group.add_argument("--device", help="where a local embedding model runs: auto (default: cuda, else mps, else cpu), cpu, cuda or mps")
    group.add_argument("--embedding-batch-size", dest="embedding_batch_size", type=int, metavar="N",
                       help="texts per forward pass, or per request to an embeddings endpoint (default: per device and backend)")
    group.add_argument("--embedding-backend", dest="embedding_backend", metavar="NAME",
                       help="what runs a local model: torch (default, the fp32 reference), onnx, onnx-int8, openvino, "
                            "openvino-bf16, or auto (the fastest installed one whose vectors agree with torch's) "
                            "(pip install 'tuner[fast]'); tuner serve defaults to the backend the exported trial was measured with")


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


def add_engine_arguments(parser: argparse.ArgumentParser, collections: bool = False) -> None:
    """The ``--engine`` flags; with ``collections`` also the dense index of the collections searched and attach mode
    (a command that measures: ``tuner serve`` takes the index from the export and serves collections tuner built)."""
    group = parser.add_argument_group("engine (where the first stage runs; a study file's 'engine:', docs/engine.md)")
    group.add_argument("--engine", choices=("memory", "milvus"),
                       help="memory: tuner's own indexes in this process (default; with --config, the engine the export "
                            "was measured on); milvus: a Milvus Lite file or cluster")
    group.add_argument("--engine-uri", dest="engine_uri", metavar="URI",
                       help="with --engine milvus: a Milvus Lite file (PATH.db) or a server (http://host:19530)")
    group.add_argument("--engine-token-env", dest="engine_token_env", metavar="NAME",
                       help="with --engine milvus: the environment variable holding the token (user:password or an API key)")
    group.add_argument("--engine-db", dest="engine_db", metavar="NAME", help="with --engine milvus: the database (default: the server's)")
    if not collections:
        parser.set_defaults(engine_index=None, engine_collection=None, engine_fields=None)
        return
    group.add_argument("--engine-index", dest="engine_index", metavar="TYPE",
                       help="with --engine milvus: the dense index (FLAT default, HNSW, HNSW_SQ, IVF_FLAT, IVF_SQ8, AUTOINDEX): "
                       "of the collections tuner builds, or the one an attached collection has")
    group.add_argument("--engine-collection", dest="engine_collection", metavar="NAME",
                       help="with --engine milvus: attach mode, search this existing collection (never written) instead "
                       "of building one; needs --engine-fields")
    group.add_argument("--engine-fields", dest="engine_fields", metavar="ROLE=FIELD,...",
                       help="with --engine-collection: its fields, text=F,vector=F,doc_id=F and optionally metadata=F (a "
                       "JSON field; several metadata=F: scalar fields) and sparse=F (its BM25 function's output)")


def engine_from_args(args: argparse.Namespace) -> MemoryEngine | MilvusEngine:
    """The engine of ``--engine`` and its flags; a flag of Milvus without ``--engine milvus`` is refused."""
    from tuner.engine import parse_engine
    from tuner.errors import UserError

    flags = {"uri": "--engine-uri", "token_env": "--engine-token-env", "db_name": "--engine-db", "index": "--engine-index",
             "collection": "--engine-collection", "fields": "--engine-fields"}
    milvus = {"uri": args.engine_uri, "token_env": args.engine_token_env, "db_name": args.engine_db,
              "index": args.engine_index, "collection": args.engine_collection,
              "fields": None if args.engine_fields is None else _engine_fields(args.engine_fields)}
    given = {key: value for key, value in milvus.items() if value is not None}
    if args.engine in (None, "memory"):
        if given:
            raise UserError(f"command line: {flags[next(iter(given))]} goes with --engine milvus")
        return parse_engine({"backend": "memory"}, "command line")
    if args.engine_uri is None:
        raise UserError("command line: --engine milvus needs --engine-uri (a Milvus Lite PATH.db or http://host:19530)")
    if ("collection" in given) != ("fields" in given):
        raise UserError("command line: --engine-collection and --engine-fields go together (attach mode)")
    return parse_engine({"backend": "milvus", **given}, "command line")


def _engine_fields(text: str) -> dict[str, str | list[str]]:
    """``--engine-fields`` as the ``fields:`` mapping: ``ROLE=FIELD`` pairs, ``metadata`` once for a JSON field or
    several times for scalar fields."""
    from tuner.errors import UserError

    fields: dict[str, str | list[str]] = {}
    metadata: list[str] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        role, equals, field = part.partition("=")
        if not equals or not role or not field:
            raise UserError(f"command line: --engine-fields: {part!r} is not ROLE=FIELD (text=, vector=, doc_id=, "
                            "metadata=, sparse=)")
        if role == "metadata":
            metadata.append(field)
        else:
            fields[role] = field
    if metadata:
        fields["metadata"] = metadata[0] if len(metadata) == 1 else metadata
    return fields


def pipeline_from_args(args: argparse.Namespace, dataset: Dataset, reporter: Reporter,
                       embeddings: EmbeddingContext) -> RetrievalPipeline:
    """The retrieval pipeline of ``--engine`` over ``dataset`` (an unreachable engine fails here, before any work); with
    ``--config`` an export measured on an engine, that engine when ``--engine`` is not given (:func:`exported_engine`)."""
    from tuner.engine import engine_pipeline

    return engine_pipeline(exported_engine(args, reporter), dataset, reporter=reporter, embeddings=embeddings)


def exported_engine(args: argparse.Namespace, reporter: Reporter) -> MemoryEngine | MilvusEngine:
    """The engine a command that measures one configuration searches: ``--engine`` and its flags; with ``--config``
    naming an export measured on Milvus (``provenance.engine``), that engine when ``--engine`` is not given (its
    token read from the variable the export names; an attached collection through its recorded fields), and with
    ``--engine milvus`` given, that address with the export's index or attached collection
    (:func:`tuner.deploy.serving_engine`), as ``tuner serve`` serves it."""
    from tuner.deploy import measured_backend, serving_engine
    from tuner.engine import MilvusEngine, parse_engine
    from tuner.export import read_export
    from tuner.redaction import redact

    engine = engine_from_args(args)
    if not getattr(args, "config", None):
        return engine
    provenance = read_export(args.config).provenance
    if args.engine is not None or measured_backend(provenance) != "milvus":
        return serving_engine(engine, provenance)
    recorded = provenance["engine"]
    measured = parse_engine({k: v for k, v in recorded.items() if k in MilvusEngine.model_fields and v is not None},
                            f"{args.config}: provenance.engine")
    attached = recorded.get("collection")
    reporter.stage(f"engine: {args.config} was measured on milvus ({redact(str(recorded.get('uri')))}"
                   + (f", collection {attached}" if attached else "")
                   + "): searched there (--engine memory searches in memory)")
    return measured


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
