"""What a backend's failure does to a study: a transient one (the endpoint kept timing out past its retries) fails
the trial and the study goes on; a fatal one (a rejected key) is the user's to fix and stops the run."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tuner.embedding import CachedEncoder
from tuner.errors import BackendFailure, UserError
from tuner.evaluation import Responder
from tuner.generation import Answer
from tuner.judging import build_judge, parse_judge_config
from tuner.llm import BackendError, FatalBackendError, RequestCount, TransientBackendError
from tuner.backends import BackendResources


class FailingGenerator:
    name = "failing"
    concurrency = 1

    def __init__(self, error: BackendError) -> None:
        self.error = error
        self.requests_made = RequestCount()

    def generate(self, question: str, contexts: Sequence[str]) -> Answer:
        raise self.error


def _responder(error: BackendError, encoder: CachedEncoder) -> Responder:
    return Responder(FailingGenerator(error), build_judge(parse_judge_config({}, "test"), BackendResources(encoder=encoder)))


def test_a_transient_failure_fails_the_trial_only(encoder: CachedEncoder) -> None:
    transient = TransientBackendError("timeout", "m at http://h/v1: request timed out after 3 attempts")
    assert not isinstance(transient, UserError)
    with pytest.raises(BackendFailure, match="failing raised TransientBackendError: m at http://h/v1: request timed out"):
        _responder(transient, encoder).answer("q", ["c"])


def test_a_fatal_failure_stops_the_run_as_a_user_error(encoder: CachedEncoder) -> None:
    fatal = FatalBackendError("auth", "m at http://h/v1: HTTP 401 the API key was rejected")
    with pytest.raises(UserError) as raised:
        _responder(fatal, encoder).answer("q", ["c"])
    assert raised.value is fatal
