"""--device and --embedding-batch-size on the commands that embed without a study file: the values reach the encoder,
and a bad value is one line naming the flag with exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tuner.cli import build_parser, main
from tuner.embedding import CachedEncoder, EmbeddingContext, EmbeddingOptions, available_devices

COMMANDS = {
    "eval": ["DATASET"],
    "robustness": ["DATASET"],
    "calibrate": ["DATASET"],
    "gate": ["--config", "c.yaml", "--dataset", "DATASET"],
    "stress": ["--config", "c.yaml", "--dataset", "DATASET"],
    "serve": ["--config", "c.yaml", "--dataset", "DATASET"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_that_embeds_takes_the_flags(command: str) -> None:
    args = build_parser().parse_args([command, *COMMANDS[command], "--device", "cpu", "--embedding-batch-size", "8",
                                      "--embedding-backend", "onnx"])
    assert (args.device, args.embedding_batch_size, args.embedding_backend) == ("cpu", 8, "onnx")


def test_the_flags_reach_the_encoder_that_embeds(tiny_dataset_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tuner.embedding._folder import FolderModel

    made = _made_encoders(monkeypatch)
    batches: list[int] = []
    original = FolderModel.encode

    def spy(self: Any, texts: Any, prompt: Any, batch_size: int) -> Any:
        batches.append(batch_size)
        return original(self, texts, prompt, batch_size)

    monkeypatch.setattr(FolderModel, "encode", spy)
    # a prompt no other test uses: every text is new to the store, so it is encoded here
    assert main(["eval", str(tiny_dataset_dir), "--retriever", "dense", "--query-prompt", "flags: ",
                 "--device", "cpu", "--embedding-batch-size", "3", "--json"]) == 0
    assert batches and set(batches) == {3}
    assert made and {(e.inner.device, e.inner.batch_size) for e in made} == {("cpu", 3)}  # type: ignore[attr-defined]


def _made_encoders(monkeypatch: pytest.MonkeyPatch) -> list[CachedEncoder]:
    """The encoders every :class:`EmbeddingContext` makes from now on (a command's context is its own)."""
    made: list[CachedEncoder] = []
    make = EmbeddingContext.encoder

    def recording(self: EmbeddingContext, name: str, cache_root: Any = None) -> CachedEncoder:
        made.append(make(self, name, cache_root))
        return made[-1]

    monkeypatch.setattr(EmbeddingContext, "encoder", recording)
    return made


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--device", "tpu"], "--device tpu: Input should be 'auto', 'cpu', 'cuda' or 'mps'"),
        (["--embedding-batch-size", "0"], "--embedding-batch-size 0: Input should be greater than or equal to 1"),
        (["--embedding-backend", "tensorrt"], "--embedding-backend tensorrt: Input should be 'torch', 'onnx'"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_flag(
    tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    assert main(["eval", str(tiny_dataset_dir), *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err


@pytest.mark.skipif(available_devices()["cuda"], reason="this machine has CUDA")
@pytest.mark.parametrize("command", ["eval", "gate", "stress"])
def test_an_absent_accelerator_is_one_line_before_any_work(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("top_k: 2\n")
    argv = [arg.replace("DATASET", str(tiny_dataset_dir)).replace("c.yaml", str(config)) for arg in COMMANDS[command]]
    assert main([command, *argv, "--device", "cuda"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "--device: cuda is not available on this machine" in err[0], err
    assert captured.out == ""


def test_serve_embeds_with_the_backend_the_exported_trial_was_measured_with(
    tiny_dataset_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnxruntime", reason="the onnx backends need tuner[fast]")
    import socket

    from tuner.export import export_document, write_export

    configured: list[EmbeddingOptions] = []
    configure = EmbeddingContext.configure

    def recording(self: EmbeddingContext, options: EmbeddingOptions, store_url: str | None = None) -> None:
        configure(self, options, store_url)
        configured.append(options)

    monkeypatch.setattr(EmbeddingContext, "configure", recording)

    config = write_export(tmp_path / "deploy.yaml", export_document({"top_k": 2}, {"embedding_backend": "onnx-int8"}))
    with socket.socket() as taken:  # a port in use stops serve after its configuration, before it loads anything
        taken.bind(("127.0.0.1", 0))
        port = str(taken.getsockname()[1])
        serve = ["serve", "--config", str(config), "--dataset", str(tiny_dataset_dir), "--port", port]
        assert main(serve) == 2
        assert configured[-1].backend == "onnx-int8"
        assert main([*serve, "--embedding-backend", "torch"]) == 2
        assert configured[-1].backend == "torch"
    assert "cannot listen there" in capsys.readouterr().err
