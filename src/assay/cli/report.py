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
@click.option(
    "--inspect",
    "inspect_file",
    type=click.Path(path_type=Path, dir_okay=False),
    help="An Inspect AI eval log (.eval, or .json) that Inspect's viewer opens.",
)
@click.option(
    "--every-eval-ever",
    "eee_folder",
    type=click.Path(path_type=Path, file_okay=False),
    help="An Every Eval Ever record (schema 0.3.0) and its instance-level samples, written in this folder.",
)
@click.option("--baseline", metavar="RUN", help="With --html or --markdown: compare with this run, item by item.")
def report_command(
    run_id: str,
    html_file: Path | None,
    junit_file: Path | None,
    markdown_file: Path | None,
    inspect_file: Path | None,
    eee_folder: Path | None,
    baseline: str | None,
) -> None:
    """Write RUN as an HTML report, JUnit XML for CI, a Markdown summary, or an Inspect or EEE log."""
    from assay.report.export import html_report, junit_report, markdown_report

    if not (html_file or junit_file or markdown_file or inspect_file or eee_folder):
        raise click.UsageError(
            "say what to write: --html FILE, --junit FILE, --markdown FILE ('-' prints it), --inspect FILE"
            " or --every-eval-ever DIR"
        )
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
    if inspect_file is not None:
        from assay.formats.inspect_log import export_log, write_log

        inspect_file.parent.mkdir(parents=True, exist_ok=True)
        write_log(export_log(store, run_id), inspect_file)
        written.append(f"wrote {inspect_file} ({inspect_file.stat().st_size // 1024 + 1} KB; inspect view opens it)")
    if eee_folder is not None:
        from assay.formats.every_eval_ever import write_record

        record, samples = write_record(store, run_id, eee_folder)
        written.append(f"wrote {record} and {samples.name} (Every Eval Ever 0.3.0)")
    for line in written:
        out.print(line, markup=False, soft_wrap=True)


def _write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return f"wrote {path} ({len(text.encode()) // 1024 + 1} KB)"
