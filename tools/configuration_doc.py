"""Write docs/configuration.md from ``assay.config.settings.Settings`` (tests/config/test_settings.py checks it)."""

from __future__ import annotations

from pathlib import Path

from assay.config.settings import Settings

HEAD = """# Configuration

assay reads these environment variables when it needs them (never at import), so a value set in a
test, a notebook or a service's environment is heard at once. A value that is not valid is refused
with the variable's name; `assay serve` and `assay worker` check them all as they start. Model
endpoints take their keys from the variables each model names (`api_key_env`, `bearer_token_env`),
and `OPENAI_BASE_URL`, `AZURE_OPENAI_ENDPOINT`, `OPENAI_API_VERSION` serve a model nobody configured.

| variable | default | what it does |
|---|---|---|
"""


def main() -> None:
    rows = []
    for name, field in Settings.model_fields.items():
        default = "unset" if field.default is None else f"`{field.default}`"
        meaning = " ".join((field.description or "").split()).replace("``", "`").replace("|", "\\|")
        rows.append(f"| `ASSAY_{name.upper()}` | {default} | {meaning} |")
    path = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"
    path.write_text(HEAD + "\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
