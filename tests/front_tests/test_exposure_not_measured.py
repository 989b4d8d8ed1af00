"""An exposure tuner could not measure (issue 52 §3) is stored and shown as not measured, never as 0."""

from __future__ import annotations

from tuner.front import TrialRecord


def test_an_unmeasured_exposure_round_trips_and_reads_not_measured_everywhere() -> None:
    why = "tuner cannot tell which of this retrieval's chunks conflict"
    record = TrialRecord.from_attrs(TrialRecord(exposure_not_measured=why, f0=(1.0,), f3=(0.5,)).to_attrs())
    assert record.exposure_not_measured == why and record.exposed_cases is None
    assert record.exposure() is None and record.delta_parts() is None
    assert record.exposure_dict() == record.exposure_figures() == {"not_measured": why}
    assert record.describe_exposure() == f"conflict exposure not measured: {why}"
    measured = TrialRecord(exposed_cases=(0, 0))  # measured, none exposed: a real 0
    assert measured.exposure_dict() is not None and measured.exposure_dict()["value"] == 0.0  # type: ignore[index]
    assert TrialRecord().exposure_dict() is None and TrialRecord().describe_exposure() is None  # a study written before
