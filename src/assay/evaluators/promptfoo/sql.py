"""promptfoo's ``is-sql`` and ``contains-sql``: the output is SQL of a database's dialect, reading
only the tables and columns the assertion allows.

promptfoo parses with node-sql-parser (a JavaScript grammar per database); assay parses with sqlglot,
Python's standard SQL parser, and keeps promptfoo's verdicts: its own checks before the parser (an
odd number of backticks, a select list missing a comma, ``generate_series`` in MySQL), a statement
required where sqlglot would also accept a bare expression (``hello world`` is not SQL), and the
tables and columns listed as node-sql-parser lists them (``select::null::users``,
``select::users::name``, ``(.*)`` for ``*``), checked against the allowed entries read as
case-insensitive whole-string patterns, as its ``whiteListCheck`` reads them.
"""

from __future__ import annotations

import re
from typing import Any

import sqlglot
from sqlglot import exp

from assay.errors import ItemError
from assay.evaluators.promptfoo.assertion import Assertion
from assay.evaluators.promptfoo.checks import Seen, Verdict
from assay.regexes import UnsupportedPattern, search

DIALECTS = {
    "mysql": "mysql",
    "mariadb": "mysql",
    "postgresql": "postgres",
    "bigquery": "bigquery",
    "snowflake": "snowflake",
    "transactsql": "tsql",
    "sqlite": "sqlite",
    "hive": "hive",
    "redshift": "redshift",
    "athena": "athena",
    "trino": "trino",
    "flinksql": "hive",
    "db2": None,
    "noql": "postgres",
}
"""node-sql-parser's database names (promptfoo's ``databaseType``, any case) → sqlglot's dialects."""

STATEMENTS = (exp.Query, exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Alter, exp.TruncateTable)
_STANDARD_MODIFIER = "(?:all|distinct)"
_MYSQL_MODIFIER = (
    "(?:all|distinct(?:row)?|high_priority|straight_join|"
    "sql_(?:big_result|buffer_result|cache|calc_found_rows|no_cache|small_result))"
)
_IDENTIFIER = "[A-Za-z_][A-Za-z0-9_]*"


def _missing_comma(modifier: str) -> re.Pattern[str]:
    """``SELECT id name FROM t``: node-sql-parser reads ``name`` as an alias; promptfoo calls it a slip."""
    return re.compile(
        rf"\bselect\s+(?:{modifier}\s+)*(?!{modifier}\b){_IDENTIFIER}\s+{_IDENTIFIER}\s+from\b", re.IGNORECASE
    )


MISSING_COMMA = {"mysql": _missing_comma(_MYSQL_MODIFIER), "mariadb": _missing_comma(_MYSQL_MODIFIER)}
STANDARD_MISSING_COMMA = _missing_comma(_STANDARD_MODIFIER)


def is_sql(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    value = assertion.get("value")
    if value not in (None, "") and not isinstance(value, dict):
        raise ItemError("an is-sql assertion's value must be an object (databaseType, allowedTables, allowedColumns)")
    options: dict[str, Any] = value if isinstance(value, dict) else {}
    database = str(options.get("databaseType") or "MySQL")
    return _judge(seen.output, database, options.get("allowedTables"), options.get("allowedColumns"), inverse)


def contains_sql(assertion: Assertion, seen: Seen, inverse: bool) -> Verdict:
    """Valid SQL in one of the output's ``sql`` (or unlabelled) code blocks, or the whole output when it has none."""
    blocks = _sql_blocks(seen.output)
    reason, found = "Output does not contain valid SQL", False
    for candidate in blocks or [seen.output]:
        if not candidate.strip():
            continue
        verdict = is_sql(assertion, Seen(candidate, seen.sample, seen.vars, seen.prompt), False)
        if verdict.passed:
            found = True
            break
        reason = verdict.reason
    ok = found != inverse
    return Verdict(
        ok, 1.0 if ok else 0.0, "Assertion passed" if ok else "The output SQL statement is valid" if found else reason
    )


def _judge(text: str, database: str, tables: Any, columns: Any, inverse: bool) -> Verdict:
    invalid = f"SQL statement does not conform to the provided {database} database syntax."
    reasons: list[str] = []
    sql = text.strip()
    if not sql or sql.count("`") % 2:
        reasons.append(invalid)
    if MISSING_COMMA.get(database.lower(), STANDARD_MISSING_COMMA).search(_plain_text(sql, database)):
        reasons.append(invalid)
    if database.lower() == "mysql" and re.search(r"\bgenerate_series\s*\(", sql, re.IGNORECASE):
        reasons.append(invalid)
    statements = _parse(text, database)
    if statements is None:
        reasons.append(invalid)
    passed = not reasons
    for kind, allowed in (("table", tables), ("column", columns)):
        if not allowed:
            continue
        if not isinstance(allowed, list) or not all(isinstance(entry, str) for entry in allowed):
            raise ItemError(f"is-sql: allowed{kind.title()}s must be a list of strings")
        patterns = _with_unqualified(allowed) if kind == "column" else allowed
        found = [] if statements is None else _listed(statements, kind)
        if statements is None or not all(_allowed(entry, patterns) for entry in found):
            passed = False
            if found:
                reasons.append(
                    f"SQL references unauthorized {kind}(s). Found: [{', '.join(found)}]. "
                    f"Allowed: [{', '.join(allowed)}]."
                )
            else:
                reasons.append(f"SQL validation failed: {invalid}")
    ok = passed != inverse
    if ok:
        return Verdict(True, 1.0, "Assertion passed")
    return Verdict(False, 0.0, " ".join(reasons) if reasons else "The output SQL statement is valid")


def _parse(text: str, database: str) -> list[exp.Expr] | None:
    """The statements of ``text``, or None when it is not SQL of the dialect."""
    dialect = DIALECTS.get(database.lower(), "mysql")
    try:
        parsed = sqlglot.parse(text, read=dialect, error_level=sqlglot.ErrorLevel.RAISE)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError, RecursionError):
        return None
    statements = [statement for statement in parsed if statement is not None]
    if not statements or not all(_is_statement(statement) for statement in statements):
        return None
    return statements


def _is_statement(statement: exp.Expr) -> bool:
    """A whole statement, not an expression sqlglot also reads (``hello world`` as ``hello AS world``),
    and no ``SELECT`` without a select list."""
    if not isinstance(statement, STATEMENTS):
        return False
    return all(select.expressions for select in statement.find_all(exp.Select))


def _listed(statements: list[exp.Expr], kind: str) -> list[str]:
    """node-sql-parser's ``tableList`` or ``columnList`` of the statements, each entry once."""
    entries: list[str] = []
    for statement in statements:
        aliases = {table.alias_or_name.lower(): table.name for table in statement.find_all(exp.Table) if table.name}
        found = _tables(statement) if kind == "table" else _columns(statement, aliases)
        entries += [entry for entry in found if entry not in entries]
    return entries


def _action(statement: exp.Expr) -> str:
    if isinstance(statement, exp.Drop):
        return "DROP"  # node-sql-parser's own spelling
    if isinstance(statement, (exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Alter)):
        return type(statement).__name__.lower()
    return "select"


def _tables(statement: exp.Expr) -> list[str]:
    targets: list[Any] = []
    if isinstance(statement, (exp.Insert, exp.Update, exp.Delete, exp.Create)):
        target = statement.this
        targets = [target.this if isinstance(target, exp.Schema) else target]
    elif isinstance(statement, exp.Drop):
        targets = list(statement.args.get("tables") or [statement.this])
    found = []
    for table in statement.find_all(exp.Table):
        if not table.name:
            continue
        action = _action(statement) if any(table is target for target in targets) else "select"
        found.append(f"{action}::{table.db or 'null'}::{table.name}")
    return found


def _columns(statement: exp.Expr, aliases: dict[str, str]) -> list[str]:
    def qualifier(name: str) -> str:
        return aliases.get(name.lower(), name) if name else "null"

    found: list[str] = []
    if isinstance(statement, exp.Insert) and isinstance(statement.this, exp.Schema):
        table = statement.this.this.name
        found += [f"insert::{table}::{column.name}" for column in statement.this.expressions]
    if isinstance(statement, exp.Update):
        for assignment in statement.expressions:
            if isinstance(assignment, exp.EQ) and isinstance(assignment.this, exp.Column):
                found.append(f"update::null::{assignment.this.name}")
    if isinstance(statement, exp.Create) and isinstance(statement.this, exp.Schema):
        for definition in statement.this.expressions:
            if isinstance(definition, exp.ColumnDef):
                found += [f"select::null::{definition.name}", f"create::null::{definition.name}"]
    skipped = (
        {id(assignment.this) for assignment in statement.expressions} if isinstance(statement, exp.Update) else set()
    )
    for select in statement.find_all(exp.Select):
        for projection in select.expressions:
            if isinstance(projection, exp.Star):
                found.append("select::null::(.*)")
            elif isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
                found.append(f"select::{qualifier(projection.table)}::(.*)")
    for column in statement.find_all(exp.Column):
        if id(column) in skipped or isinstance(column.this, exp.Star):
            continue
        if isinstance(statement, exp.Insert) and column.find_ancestor(exp.Schema) is statement.this:
            continue
        found.append(f"select::{qualifier(column.table)}::{column.name}")
    if isinstance(statement, exp.Delete) and isinstance(statement.this, exp.Table):
        found.append(f"delete::{statement.this.name}::(.*)")
    return list(dict.fromkeys(found))


def _with_unqualified(allowed: list[str]) -> list[str]:
    """promptfoo also allows ``type::null::column`` for each ``type::table::column`` given."""
    patterns = list(allowed)
    for entry in allowed:
        parts = entry.split("::")
        if len(parts) == 3 and parts[1] != "null":
            alternative = f"{parts[0]}::null::{parts[2]}"
            if alternative not in patterns:
                patterns.append(alternative)
    return patterns


def _allowed(entry: str, patterns: list[str]) -> bool:
    """Whether an allowed entry, read as a case-insensitive whole-string pattern, matches ``entry``.
    The patterns come with the assertion (over the API too): RE2 runs them, in linear time."""
    for pattern in patterns:
        try:
            if search(f"(?i)^(?:{pattern})$", entry):
                return True
        except re.error:  # not a pattern at all: the entry itself
            if pattern.lower() == entry.lower():
                return True
        except UnsupportedPattern as exc:
            raise ItemError(f"is-sql: {exc.message} ({exc.hint})") from None
    return False


def _plain_text(sql: str, database: str) -> str:
    """``sql`` with its quoted text and comments blanked, for promptfoo's missing-comma check."""
    brackets = database.lower() in ("transactsql", "sqlite")
    chunks, start, cursor = [], 0, 0
    while cursor < len(sql):
        char, end, replacement = sql[cursor], None, " "
        if char in "'\"`" or (char == "[" and brackets):
            end, replacement = _quoted_end(sql, cursor, char), " ? "
        elif sql.startswith("--", cursor) or char == "#":
            newline = re.compile(r"[\r\n]").search(sql, cursor + 1)
            end = newline.start() if newline else len(sql)
        elif sql.startswith("/*", cursor):
            close = sql.find("*/", cursor + 2)
            end = len(sql) if close == -1 else close + 2
        elif char == "$":
            delimiter = re.match(r"\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$", sql[cursor:])
            if delimiter:
                close = sql.find(delimiter.group(0), cursor + len(delimiter.group(0)))
                end = len(sql) if close == -1 else close + len(delimiter.group(0))
                replacement = " ? "
        if end is None:
            cursor += 1
            continue
        chunks += [sql[start:cursor], replacement]
        cursor = start = end
    chunks.append(sql[start:])
    return "".join(chunks)


def _quoted_end(sql: str, start: int, quote: str) -> int:
    closing = "]" if quote == "[" else quote
    cursor = start + 1
    while cursor < len(sql):
        if closing != "]" and sql[cursor] == "\\":
            cursor += 2
            continue
        if sql[cursor] == closing:
            if cursor + 1 < len(sql) and sql[cursor + 1] == closing:
                cursor += 2
                continue
            return cursor + 1
        cursor += 1
    return len(sql)


def _sql_blocks(output: str) -> list[str]:
    """The bodies of the output's fenced code blocks labelled ``sql`` or not labelled (CommonMark fences)."""
    blocks: list[str] = []
    active: tuple[str, int, bool, list[str]] | None = None
    for line in re.split(r"\r\n?|\n", output):
        fence = _fence(line)
        if active is None:
            if fence is not None:
                char, length, info = fence
                active = (char, length, info.strip().lower() in ("", "sql"), [])
            continue
        char, length, is_sql_block, body = active
        if fence is not None and not fence[2].strip(" \t") and fence[0] == char and fence[1] >= length:
            if is_sql_block:
                blocks.append("\n".join(body).strip())
            active = None
        else:
            body.append(line)
    return blocks


def _fence(line: str) -> tuple[str, int, str] | None:
    match = re.match(r"^[ \t]{0,3}(`{3,}|~{3,})(.*)$", line)
    if match is None:
        return None
    return match.group(1)[0], len(match.group(1)), match.group(2)
