"""Terminal rendering of evaluation reports (rich tables)."""

from __future__ import annotations

from rich.table import Table

from tuner.evaluation.retrieval import RetrievalReport


def retrieval_table(report: RetrievalReport) -> Table:
    metrics = list(report.overall)
    table = Table(title=f"retrieval — {_settings_line(report)}", title_justify="left")
    table.add_column("bucket")
    for name in metrics:
        table.add_column(name, justify="right")
    table.add_column("n/N", justify="right")
    first = report.overall[metrics[0]]
    table.add_row(
        "all", *[_fmt(report.overall[m].value, report.overall[m].ci) for m in metrics], f"{first.n}/{first.n_total}"
    )
    for prefix, buckets in (("category", report.by_category), ("difficulty", report.by_difficulty)):
        for label, values in buckets.items():
            head = values[metrics[0]]
            table.add_row(f"{prefix}: {label}", *[_fmt(values[m].value, None) for m in metrics], f"{head.n}/{head.n_total}")
    return table


def _settings_line(report: RetrievalReport) -> str:
    s = report.settings
    return (
        f"{s.retriever}, top_k={s.top_k}, threshold={s.relevance_threshold}, rerank={s.rerank_strength}, "
        f"chunks={s.chunk_size}w/{s.chunk_overlap:.0%}, mean context {report.mean_context_words:.0f} words"
    )


def _fmt(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")
