"""Simulation as a run: scenario rows become items (one per repetition, each with its own recorded
seed), and a target that plays each conversation out supplies the item's ``messages``.

Foundry's shapes that lead here (``assay.run.sources``):

- ``azure_ai_target_completions`` with ``item_generation_params: {type: conversation_gen_preview,
  model, num_conversations (default 5, at most 5), max_turns (default 10, at most 50),
  sampling_params, data_mapping, output_dataset_name?}``. ``num_conversations`` is read as
  conversations per scenario row (the legacy name of ``conversation_repetitions``); the
  conversations are always saved as a dataset (``simulated-conversations`` unless named).

- ``azure_ai_user_conversation_simulation``: ``source`` (a file, inline rows, or
  ``{type: inline_user_conversation_simulation, test_cases: [...]}``), ``target``,
  ``model_configuration {model, sampling_params}``, ``default_simulation_configuration
  {max_num_turns (default 20), conversation_repetitions (default 1), desired_num_turns,
  enable_conversation_dataset_generation, output_conversation_dataset_name}`` and, per test case,
  ``simulation_configuration`` overriding the first three. Voice and audio settings are accepted
  and ignored (text only), with a warning in the run's ``properties``.

A scenario row is ``{id?, test_case_id?, test_case_description, desired_num_turns?,
simulation_configuration?}`` (a count given as a string is accepted); ``data_mapping`` maps those
names to the row's own fields (a field name, or ``{{item.field}}``).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from typing import Any

from assay.dataset import Dataset
from assay.dataset.readers import Row
from assay.errors import ConfigError, DataIssue
from assay.llm import Model
from assay.simulate.conversation import simulate
from assay.simulate.settings import SimulationSettings
from assay.simulate.user import SimulatedUser
from assay.targets import Target

SCENARIO_FIELDS = ("test_case_description", "id", "test_case_id", "desired_num_turns", "simulation_configuration")
INLINE_CASES = "inline_user_conversation_simulation"
AUDIO_KEYS = ("audio_effects", "user_behavior")
SUPPLIED_FIELDS = frozenset(
    {
        "messages",
        "tool_definitions",
        "termination_reason",
        "turns",
        "test_case_description",
        "test_case_id",
        "id",
        "repetition",
        "simulation_seed",
    }
)
"""What a simulated item holds beyond the eval's item_schema: the conversation and its scenario."""
MAX_DESCRIPTION = 2500


def user_simulation_settings(data_source: dict[str, Any]) -> SimulationSettings:
    model_configuration = data_source.get("model_configuration") or {}
    if not isinstance(model_configuration, dict) or not isinstance(model_configuration.get("model"), str):
        raise ConfigError("data_source.model_configuration.model: name the model that plays the simulated user")
    where = "data_source.default_simulation_configuration"
    defaults = data_source.get("default_simulation_configuration") or {}
    if not isinstance(defaults, dict):
        raise ConfigError(f"{where}: expected an object such as {{max_num_turns: 8, conversation_repetitions: 2}}")
    warnings = []
    if model_configuration.get("voice_model") is not None or any(k in defaults for k in AUDIO_KEYS):
        warnings.append("voice and audio settings were ignored: simulations here are text only")
    save = defaults.get("enable_conversation_dataset_generation") is True
    name = dataset_name(defaults.get("output_conversation_dataset_name"), f"{where}.output_conversation_dataset_name")
    desired = defaults.get("desired_num_turns")
    return SimulationSettings(
        model=model_configuration["model"],
        max_turns=count_setting(defaults.get("max_num_turns"), f"{where}.max_num_turns", default=20, cap=50),
        repetitions=count_setting(
            defaults.get("conversation_repetitions"), f"{where}.conversation_repetitions", default=1, cap=50
        ),
        sampling=_sampling(
            model_configuration.get("sampling_params"), "data_source.model_configuration.sampling_params"
        ),
        data_mapping=_mapping(data_source.get("data_mapping"), "data_source.data_mapping"),
        default_desired_turns=None
        if desired is None
        else count_setting(desired, f"{where}.desired_num_turns", default=1, cap=50),
        save_as=(name or "simulated-conversations") if save else None,
        warnings=tuple(warnings),
    )


def conversation_gen_settings(params: dict[str, Any]) -> SimulationSettings:
    where = "item_generation_params"
    model = params.get("model")
    if not isinstance(model, str) or not model:
        raise ConfigError(f"{where}.model: name the model that plays the simulated user")
    return SimulationSettings(
        model=model,
        max_turns=count_setting(params.get("max_turns"), f"{where}.max_turns", default=10, cap=50),
        repetitions=count_setting(params.get("num_conversations"), f"{where}.num_conversations", default=5, cap=5),
        sampling=_sampling(params.get("sampling_params"), f"{where}.sampling_params"),
        data_mapping=_mapping(params.get("data_mapping"), f"{where}.data_mapping"),
        # Generated conversations are always kept (Foundry keeps generated data): a dataset the run names.
        save_as=dataset_name(params.get("output_dataset_name"), f"{where}.output_dataset_name")
        or "simulated-conversations",
    )


def dataset_name(value: Any, where: str) -> str | None:
    """An optional dataset name as a request gives it: absent, or non-empty text."""
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError(f"{where}: expected a dataset name")
    return value


def count_setting(value: Any, where: str, *, default: int, cap: int) -> int:
    """A whole-number setting of at least 1 (a digit string accepted), ``default`` when absent, at most ``cap``."""
    if value is None:
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}: expected a whole number of at least 1, got {value!r}")
    if value > cap:
        raise ConfigError(f"{where}: {value} is over the limit of {cap}")
    return value


def _sampling(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected an object such as {{temperature: 0.7, max_completion_tokens: 800}}")
    return dict(value)


def _mapping(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f'{where}: expected scenario field → row field, e.g. {{"test_case_description": "scenario"}}')
    unknown = [key for key in value if key not in SCENARIO_FIELDS]
    if unknown:
        raise ConfigError(f"{where}: {unknown[0]!r} is not a scenario field ({', '.join(SCENARIO_FIELDS)})")
    # "{{item.scenario}}" and "scenario" both name the row's field "scenario".
    return {key: re.sub(r"^\{\{\s*item\.(.+?)\s*\}\}$", r"\1", source) for key, source in value.items()}


def scenario_dataset(source: Dataset, settings: SimulationSettings) -> Dataset:
    """One item per scenario row and repetition; a row without a usable scenario is a bad line."""

    def rows() -> Iterator[Row]:
        index = 0
        for row in source.rows():
            if row.issue is not None or row.item is None:
                yield Row(index, row.line, issue=row.issue)
                index += 1
                continue
            scenario, problem = _scenario(row.item, settings)
            if problem is not None:
                yield Row(index, row.line, issue=DataIssue(source.name, row.line, problem[1], problem[0]))
                index += 1
                continue
            own = scenario.pop("simulation_configuration", None) or {}
            for repetition in range(own.get("conversation_repetitions", settings.repetitions)):
                seed = zlib.crc32(f"{scenario['test_case_description']}\x00{repetition}".encode())
                item = {**scenario, "repetition": repetition, "simulation_seed": seed}
                if "max_num_turns" in own:
                    item["max_num_turns"] = own["max_num_turns"]
                if "desired_num_turns" in own and "desired_num_turns" not in item:
                    item["desired_num_turns"] = own["desired_num_turns"]
                yield Row(index, row.line, item=item)
                index += 1

    return Dataset(name=source.name, open_rows=rows, path=source.path)


def _scenario(row: dict[str, Any], settings: SimulationSettings) -> tuple[dict[str, Any], tuple[str, str] | None]:
    picked = {name: row.get(settings.data_mapping.get(name, name)) for name in SCENARIO_FIELDS}
    description = picked["test_case_description"]
    field_name = settings.data_mapping.get("test_case_description", "test_case_description")
    if not isinstance(description, str) or not description.strip():
        return {}, (field_name, f"{field_name}: a scenario needs a test_case_description (the user's situation)")
    if len(description) > MAX_DESCRIPTION:
        return {}, (field_name, f"{field_name}: {len(description)} characters, at most {MAX_DESCRIPTION}")
    turns = picked["desired_num_turns"]
    if isinstance(turns, str) and turns.strip().isdigit():
        turns = int(turns)
    if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int) or turns < 1):
        return {}, ("desired_num_turns", f"desired_num_turns: expected a whole number of at least 1, got {turns!r}")
    scenario = {k: v for k, v in picked.items() if v is not None}
    if turns is not None:
        scenario["desired_num_turns"] = turns
    own = picked["simulation_configuration"]
    if own is not None:
        if not isinstance(own, dict):
            return {}, ("simulation_configuration", "simulation_configuration: expected an object")
        try:
            scenario["simulation_configuration"] = {
                key: count_setting(own[key], f"simulation_configuration.{key}", default=1, cap=50)
                for key in ("max_num_turns", "conversation_repetitions", "desired_num_turns")
                if key in own
            }
        except ConfigError as exc:
            return {}, ("simulation_configuration", exc.message)
    return scenario, None


class SimulationTarget:
    """Plays each item's scenario against ``target`` with ``user_model`` as the user; the sample's
    ``item_fields`` put the conversation into the item, as Foundry shows it."""

    def __init__(
        self,
        user_model: Model,
        target: Target,
        settings: SimulationSettings,
        tool_definitions: list[dict[str, Any]] | None = None,
    ) -> None:
        self.user_model = user_model
        self.target = target
        self.settings = settings
        self.tool_definitions = tool_definitions or []

    async def __call__(self, item: dict[str, Any]) -> dict[str, Any]:
        turns = item.get("desired_num_turns") or self.settings.default_desired_turns
        max_turns = int(item.get("max_num_turns") or self.settings.max_turns)
        user = SimulatedUser(
            self.user_model,
            str(item.get("test_case_description") or ""),
            desired_turns=min(turns, max_turns) if turns else None,
            sampling=self.settings.sampling,
            seed=item.get("simulation_seed"),
        )
        conversation = await simulate(user, self.target, max_turns)
        last = next(
            (m["content"] for m in reversed(conversation.messages) if m["role"] == "assistant" and m.get("content")), ""
        )
        fields = {
            "messages": conversation.messages,
            "termination_reason": conversation.termination_reason,
            "turns": conversation.turns,
            # The target's tools, none included: a tool criterion mapping {{item.tool_definitions}}
            # finds them, and finds a conversation with no tool calls not applicable.
            "tool_definitions": self.tool_definitions,
        }
        agent = conversation.agent_usage
        return {
            "output_text": last,
            # The agent's calls are the target's; the simulated user's are its own role's.
            "model": agent.model,
            "usage": {"prompt_tokens": agent.prompt_tokens, "completion_tokens": agent.completion_tokens},
            "calls": agent.calls,
            "cache_hits": agent.cache_hits,
            "usage_by_role": [user.usage.as_role("simulated_user")] if user.usage.model else [],
            "termination_reason": conversation.termination_reason,
            "turns": conversation.turns,
            "simulation_seed": item.get("simulation_seed"),
            "error": conversation.error,
            "item_fields": fields,
        }

    async def ready(self) -> None:
        ready = getattr(self.target, "ready", None)  # the wrapped target's pre-flight
        if ready is not None:
            await ready()

    async def aclose(self) -> None:
        close = getattr(self.target, "aclose", None)
        if close is not None:
            await close()
