"""Report (front → **report**): the study report: one self-contained HTML file (plotly.js inlined) with the front,
hypervolume, top_k sweep, parameter importances and picked configurations by category. See docs/report.md."""

from __future__ import annotations

from tuner.report._finish import finish, trial_document
from tuner.report._html import default_picks, render_report, write_report
from tuner.report._study import StudySummary, summarize_study

__all__ = [
    "StudySummary",
    "default_picks",
    "finish",
    "render_report",
    "summarize_study",
    "trial_document",
    "write_report",
]
