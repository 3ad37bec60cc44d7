"""Every kind of run data source, as types: what ``POST /evals/{id}/runs`` takes and what a run stores.

The OpenAPI document's run body is generated from ``RunBody`` (``assay.api.openapi``), so it says
what the server accepts. ``assay.run.sources.check_data_source`` checks a request's data source
against these types: where the kind's own checks have a message for the mistake (one that says how
to fix it), theirs is given; any other wrong shape is refused naming its field rather than failing
later.

Each model keeps fields it does not name (Foundry adds knobs per kind; a stored run keeps them all),
and the engine reads the stored dict: these types describe and check, the kind's own reader
interprets (``target_for``, ``selection_of``, ``red_team_settings``, ...).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from assay.errors import ConfigError


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


# -- where the items come from -------------------------------------------------------------------


class FileIdSource(_Open):
    """A file uploaded with ``POST /files`` (or a dataset's file), by id."""

    type: Literal["file_id"]
    id: str


class FileContentSource(_Open):
    """The items inline: each ``{"item": {...}}``, or ``{"item": {...}, "sample": {...}}`` to grade a
    sample already generated."""

    type: Literal["file_content"]
    content: list[dict[str, Any]]


class InlineCasesSource(_Open):
    """A simulation's test cases inline."""

    type: Literal["inline_user_conversation_simulation"]
    test_cases: list[dict[str, Any]]


ItemSource = Annotated[FileIdSource | FileContentSource, Field(discriminator="type")]
"""A local run's ``{type: file_path, path}`` (``assay run`` on its own machine) never comes over HTTP
and is never checked here: it is read where it is (``sources.local_file``)."""
ScenarioSource = Annotated[FileIdSource | FileContentSource | InlineCasesSource, Field(discriminator="type")]


# -- what the target is asked, and the target ------------------------------------------------------


class TemplateMessages(_Open):
    """Messages rendered per item (``{{item.field}}``), the first turn the target sees."""

    type: Literal["template"]
    template: list[dict[str, Any]]


class ItemReferenceMessages(_Open):
    """The messages an item holds (``item.messages``)."""

    type: Literal["item_reference"]
    item_reference: str


InputMessages = Annotated[TemplateMessages | ItemReferenceMessages, Field(discriminator="type")]
FreeFormInput = Annotated[
    dict[str, Any],
    Field(description="An invocations agent's own request body, rendered per item ({{item.field}})."),
]


class ModelTarget(_Open):
    """A configured model; ``tools`` names tool sets the server's operator configured."""

    type: Literal["azure_ai_model"]
    model: str
    sampling_params: dict[str, Any] | None = None
    tools: list[str] | None = None
    max_tool_rounds: int | None = None
    tool_timeout_s: float | dict[str, float] | None = None


class AgentTarget(_Open):
    """A configured agent, run with its tools executed in a loop."""

    type: Literal["azure_ai_agent"]
    name: str
    version: str | int | None = None
    tool_descriptions: list[dict[str, Any]] | None = None


Target = Annotated[ModelTarget | AgentTarget, Field(discriminator="type")]


# -- the kinds -----------------------------------------------------------------------------------


class JsonlDataSource(_Open):
    """Items to grade as they are (each may carry its ``sample``)."""

    type: Literal["jsonl"]
    source: ItemSource


class CsvDataSource(_Open):
    """Items from a CSV file, one per row."""

    type: Literal["csv"]
    source: ItemSource


class CompletionsDataSource(_Open):
    """OpenAI's: a model answers each item, then the criteria grade its sample."""

    type: Literal["completions"]
    source: ItemSource
    input_messages: InputMessages | None = None
    model: str | None = None
    sampling_params: dict[str, Any] | None = None


class TargetCompletionsDataSource(_Open):
    """Foundry's: a model or agent target answers each item."""

    type: Literal["azure_ai_target_completions"]
    source: ItemSource
    input_messages: InputMessages | FreeFormInput | None = None
    target: Target


class ResponsesDataSource(_Open):
    """Stored responses (``/responses``), found by the id each item names."""

    type: Literal["azure_ai_responses"]
    item_generation_params: dict[str, Any]
    """``{type: response_retrieval, data_mapping: {response_id: "{{item.resp_id}}"}, source}``"""


class SimulationDataSource(_Open):
    """Each item a scenario, played out by a simulated user against the target."""

    type: Literal["azure_ai_user_conversation_simulation"]
    source: ScenarioSource
    target: Target


class RedTeamDataSource(_Open):
    """Attacks planned from a risk taxonomy or seed prompts, sent to the target and judged."""

    type: Literal["azure_ai_red_team"]
    item_generation_params: dict[str, Any]
    """``{type: red_team | red_team_taxonomy | red_team_seed_prompts, attack_strategies, ...}``"""
    target: Target


class SyntheticDataSource(_Open):
    """Queries written by a model from a prompt, a file or the agent, then answered by the target."""

    type: Literal["azure_ai_synthetic_data_gen_preview"]
    item_generation_params: dict[str, Any]
    """``{type: synthetic_data_gen_preview, samples_count, model_deployment_name, prompt?, sources?}``"""
    target: Target


class SyntheticSimulationDataSource(_Open):
    """Test cases written by a model, each played out by a simulated user against the target."""

    type: Literal["azure_ai_synthetic_data_generation_with_simulation"]
    synthetic_data_generation_configuration: dict[str, Any]
    target: Target


class TracesDataSource(_Open):
    """Stored traces of an agent (OTLP), by trace id or by agent and time window."""

    type: Literal["azure_ai_traces", "azure_ai_traces_preview"]


class TraceDataSource(_Open):
    """Stored traces chosen by ``trace_source``: trace ids, conversation ids or an agent filter."""

    type: Literal["azure_ai_trace_data_source", "azure_ai_trace_data_source_preview"]
    trace_source: dict[str, Any]


DataSource = Annotated[
    JsonlDataSource
    | CsvDataSource
    | CompletionsDataSource
    | TargetCompletionsDataSource
    | ResponsesDataSource
    | SimulationDataSource
    | RedTeamDataSource
    | SyntheticDataSource
    | SyntheticSimulationDataSource
    | TracesDataSource
    | TraceDataSource,
    Field(discriminator="type"),
]


class RunBody(_Open):
    """``POST /evals/{eval_id}/runs``: OpenAI's run request, with assay's extensions."""

    name: str | None = None
    metadata: dict[str, str] | None = None
    data_source: DataSource
    evaluation_level: Literal["turn", "conversation"] = "turn"
    """Foundry's: a conversation item is judged per turn, or once as a whole."""
    repeats: int | dict[str, int] | None = None
    """assay's: each judge scores each item J times (``J`` or ``{judge: J}``); ``{target: K}`` runs
    the target K times per item (pass@k, pass^k)."""
    cluster_by: str | None = None
    """assay's: the item field whose equal values make a cluster, for honest intervals."""


_DATA_SOURCE: TypeAdapter[Any] = TypeAdapter(DataSource)
KINDS = frozenset(
    kind for member in get_args(get_args(DataSource)[0]) for kind in get_args(member.model_fields["type"].annotation)
)
"""Every data source ``type`` a run takes."""


def parse_data_source(value: dict[str, Any]) -> Any:
    """``value`` as its kind's type; a shape the kind does not take is refused naming its field."""
    try:
        return _DATA_SOURCE.validate_python(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ConfigError(f"{_where(value, error['loc'])}: {error['msg']}") from None


def _where(value: Any, loc: tuple[int | str, ...]) -> str:
    """An error's location as the request spells it: pydantic puts the tag a union chose (the
    object's own ``type``) in the location, which names no field."""
    parts, current, tagged = ["data_source"], value, False
    for part in loc:
        if not tagged and isinstance(current, dict) and part == current.get("type"):
            tagged = True
            continue
        parts.append(f"[{part}]" if isinstance(part, int) else f".{part}")
        tagged = False
        if isinstance(current, dict):
            current = current.get(part)
        elif isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current):
            current = current[part]
        else:
            current = None
    return "".join(parts)
