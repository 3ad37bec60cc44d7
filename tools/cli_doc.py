"""Write docs/cli.md from the commands themselves (tests/test_docs.py checks it is current)."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli.main import cli

HEAD = """# CLI reference

Every command, its arguments and options, as `assay COMMAND --help` prints them. This page is
generated from the commands (`python tools/cli_doc.py`); a test fails when it falls behind.
[Commands at a glance](guides/commands.md) says what each is for, with examples.
"""


def main() -> None:
    path = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
    path.write_text(render(), encoding="utf-8")


def render() -> str:
    context = click.Context(cli, info_name="assay")
    parts = [HEAD]
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        assert command is not None
        parts += _command(command, click.Context(command, info_name=name, parent=context))
    return "\n".join(parts)


def _command(command: click.Command, context: click.Context) -> list[str]:
    path = context.command_path
    if isinstance(command, click.Group):
        found = [f"## {path}\n", _text(command.help), ""]
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            assert sub is not None
            found += _command(sub, click.Context(sub, info_name=name, parent=context))
        return found
    usage = " ".join(command.collect_usage_pieces(context))
    found = [f"### {path}\n", f"`{path} {usage}`\n", _text(command.help), ""]
    options = [
        p for p in command.get_params(context) if isinstance(p, click.Option) and not p.hidden and p.name != "help"
    ]
    if options:
        found += ["| option | what it does |", "|---|---|"]
        for option in options:
            record = option.get_help_record(context)
            if record is not None:
                names, meaning = record
                found.append(f"| `{names}` | {_cell(meaning)} |")
        found.append("")
    return found


def _text(help_text: str | None) -> str:
    return " ".join((help_text or "").split("\f")[0].split())


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


if __name__ == "__main__":
    main()
