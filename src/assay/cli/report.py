"""``assay report RUN --html FILE --junit FILE --markdown FILE [--baseline RUN]``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from assay.cli.common import open_store, out


@click.command("report")
@click.argument("run_id", metavar="RUN")
@click.option(
    "--html",
    "html_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="One self-contained page: summary, charts, items with reasons, configuration; opens offline.",
)
@click.option(
    "--junit",
    "junit_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="JUnit XML: one testcase per item and criterion, failures with their reasons.",
)
@click.option(
    "--markdown",
    "markdown_file",
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
    help="A pull-request comment ('-' prints it).",
)
@click.option("--baseline", metavar="RUN", help="With --html or --markdown: compare with this run, item by item.")
def report_command(
    run_id: str, html_file: Path | None, junit_file: Path | None, markdown_file: Path | None, baseline: str | None
) -> None:
    """Write RUN as an HTML report, JUnit XML for CI, or a Markdown summary."""
    from assay.report.export import html_report, junit_report, markdown_report

    if not (html_file or junit_file or markdown_file):
        raise click.UsageError("say what to write: --html FILE, --junit FILE or --markdown FILE ('-' prints it)")
    if baseline and not (markdown_file or html_file):
        raise click.UsageError("--baseline goes with --html or --markdown")
    store = open_store()
    run_id = store.run_id_for(run_id)
    baseline = store.run_id_for(baseline) if baseline else None
    written = []
    if html_file is not None:
        written.append(_write(html_file, html_report(store, run_id, baseline)))
    if junit_file is not None:
        written.append(_write(junit_file, junit_report(store, run_id)))
    if markdown_file is not None:
        text = markdown_report(store, run_id, baseline)
        if str(markdown_file) == "-":
            sys.stdout.write(text)
        else:
            written.append(_write(markdown_file, text))
    for line in written:
        out.print(line, markup=False, soft_wrap=True)


def _write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return f"wrote {path} ({len(text.encode()) // 1024 + 1} KB)"
