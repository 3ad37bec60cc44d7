"""``assay``: the root group and how user errors are shown (a message and a hint, no traceback).

Commands are imported only when one is run: ``assay --help`` and a command's start pay for click
alone, not for the store, the SDKs and the web server every other command needs. The table below
holds what ``--help`` shows of each; ``tests/test_docs.py`` checks it against the commands.
"""

from __future__ import annotations

import difflib
import importlib
import sys
from typing import Any

import click

COMMANDS: dict[str, tuple[str, str, str]] = {
    "dataset": ("assay.cli.dataset", "dataset_group", "Check and register datasets."),
    "eval": ("assay.cli.evalcmd", "eval_group", "Evals as code: azure.eval.yaml (init, create, run) and eval.yaml."),
    "evaluators": ("assay.cli.evaluators", "evaluators_group", "Browse the evaluator catalog."),
    "generate": ("assay.cli.generate", "generate_group", "Synthetic test data."),
    "import": (
        "assay.cli.importcmd",
        "import_group",
        "Bring configs and results from other tools: promptfoo, OpenAI Evals.",
    ),
    "init": (
        "assay.cli.init",
        "init_command",
        "Write a runnable eval.yaml and a small dataset into DIR (default: here).",
    ),
    "judges": ("assay.cli.judges", "judges_group", "Check the judges: agreement with people, bias probes."),
    "keys": ("assay.cli.serve", "keys_group", "API keys for `assay serve`."),
    "mcp": (
        "assay.cli.mcp",
        "mcp_command",
        "An MCP server for coding agents: run an eval.yaml, read runs, explain failures, compare runs.",
    ),
    "models": (
        "assay.cli.models",
        "models_group",
        "Models: a models file's entries, a Foundry project's deployments, and how each authenticates.",
    ),
    "optimize": (
        "assay.cli.optimize",
        "optimize_group",
        "Search for a better agent configuration, scored by the eval in eval.yaml.",
    ),
    "plan": (
        "assay.cli.runs",
        "plan_command",
        "How many items a comparison needs to detect a pass-rate drop of --mde.",
    ),
    "redteam": ("assay.cli.redteam", "redteam_group", "Attack a model or agent and report attack success rates."),
    "report": (
        "assay.cli.report",
        "report_command",
        "Write RUN as an HTML report, JUnit XML for CI, a Markdown summary, or an Inspect or EEE log.",
    ),
    "skills": (
        "assay.cli.skills",
        "skills_group",
        "The Agent Skill that teaches coding agents to write, run, read and gate evals.",
    ),
    "results": (
        "assay.cli.runs",
        "results",
        "Write a run's output items as JSONL (full) or CSV (one column per criterion field).",
    ),
    "review": (
        "assay.cli.review",
        "review_group",
        "Human review: queues of a run's items for people to judge, and their labels.",
    ),
    "run": (
        "assay.cli.run",
        "run_command",
        "Evaluate the dataset of EVAL_YAML with its evaluators and store the results.",
    ),
    "runs": ("assay.cli.runs", "runs_group", "Look at stored runs."),
    "serve": (
        "assay.cli.serve",
        "serve",
        "Serve the OpenAI Evals API, the OTLP trace receiver, the capture pass-through and the web UI (and...",
    ),
    "simulate": (
        "assay.cli.simulate",
        "simulate_command",
        "Simulate a user for each scenario of SCENARIOS against --target or --agent.",
    ),
    "traces": ("assay.cli.traces", "traces_group", "Stored OpenTelemetry traces: import, list, show, sample."),
    "view": ("assay.cli.serve", "view", "Open the web UI on this store, read-only, at RUN's page (or the runs list)."),
    "worker": (
        "assay.cli.serve",
        "worker",
        "Execute queued runs from the store (ASSAY_DATABASE_URL); run several on several machines.",
    ),
}


class AssayGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, name, _ = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(module), name)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's lookup, with the command nearest a typo suggested (``assay rnu``: did you mean run?)."""
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            close = difflib.get_close_matches(name, sorted(COMMANDS), n=1, cutoff=0.6)
            if close:
                ctx.fail(f"No such command {name!r}. Did you mean {close[0]!r}?")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][2]) for name in self.list_commands(ctx)])

    def invoke(self, ctx: click.Context) -> Any:
        from assay.errors import RunStopped, UserError

        try:
            return super().invoke(ctx)
        except (UserError, RunStopped) as exc:
            from rich.console import Console

            console = Console(stderr=True, highlight=False)
            console.print("[bold red]error:[/] ", end="", markup=True)
            console.print(exc.message, markup=False, soft_wrap=True)
            if exc.hint:
                console.print("[dim]hint:[/] ", end="", markup=True)
                console.print(exc.hint, markup=False, soft_wrap=True)
            sys.exit(2 if isinstance(exc, UserError) else 1)


@click.group(cls=AssayGroup)
@click.version_option(package_name="assay")
def cli() -> None:
    """Evaluate LLM models and agents: datasets, evaluators, runs and results."""


def main() -> None:
    cli()
