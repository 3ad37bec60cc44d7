import asyncio
import threading

import pytest

from assay.dataset import Dataset
from assay.errors import ConfigError
from assay.evaluators import Catalog, evaluator, load_catalog
from assay.evaluators.decorator import spec_from_function
from assay.llm import ModelConfig, ModelRegistry
from assay.results import OutputItem
from assay.run import EvalDefinition, RunOptions, check_resumable, finish_run, prepare, start
from tests.support.fixtures import recorded_batches


@evaluator(threshold=0.5)
def fragile(response: str) -> float:
    if "boom" in response:
        raise RuntimeError("cannot score this one")
    return 1.0 if response.startswith("good") else 0.0


def catalog_with(*functions) -> Catalog:
    catalog = load_catalog()
    for function in functions:
        catalog.add(spec_from_function(function))
    return catalog


def rows(n):
    return [
        {"query": f"q{i}", "response": "boom good" if i == 3 else ("good" if i % 2 else "bad"), "ground_truth": "good"}
        for i in range(n)
    ]


CRITERIA = [
    {"type": "azure_ai_evaluator", "name": "fragile", "evaluator_name": "fragile"},
    {"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"},
]


def test_one_failing_evaluator_on_one_item_is_an_error_result(store):
    prepared = prepare(EvalDefinition("e", CRITERIA), Dataset.from_content(rows(10)), catalog_with(fragile))
    outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(concurrency=4))
    assert outcome.run.status == "completed"
    counts = outcome.summary.result_counts
    assert (counts.total, counts.passed, counts.failed, counts.errored) == (10, 4, 5, 1)
    errored = list(store.iter_output_items(outcome.run.id, status="error"))
    assert len(errored) == 1 and errored[0].datasource_item_id == 3
    fragile_result = errored[0].results[0]
    assert fragile_result.status == "error" and "cannot score this one" in fragile_result.reason
    assert errored[0].results[1].status == "completed"  # the other criterion still ran


def test_resume_evaluates_only_missing_items(store):
    calls = []

    @evaluator
    def counted(response: str) -> float:
        calls.append(response)
        return 1.0

    catalog = catalog_with(counted)
    definition = EvalDefinition("e", [{"type": "azure_ai_evaluator", "name": "c", "evaluator_name": "counted"}])
    data = [{"response": f"r{i}"} for i in range(50)]
    prepared = prepare(definition, Dataset.from_content(data), catalog)
    run = start(prepared, store)
    from assay.run.engine import evaluate_item

    done = [asyncio.run(evaluate_item(row, prepared.criteria)) for row in list(prepared.dataset.rows())[:20]]
    store.add_output_items(run.id, done)
    calls.clear()
    outcome = finish_run(prepare(definition, Dataset.from_content(data), catalog), run, store)
    assert outcome.evaluated_now == 30 and len(calls) == 30
    ids = [row.datasource_item_id for row in store.iter_output_items(run.id)]
    assert ids == list(range(50))


def test_resume_refuses_other_criteria_or_dataset(store):
    catalog = load_catalog()
    data = [{"response": "a", "ground_truth": "a"}]
    prepared = prepare(EvalDefinition("e", CRITERIA[1:]), Dataset.from_content(data), catalog)
    run = start(prepared, store)
    other = prepare(EvalDefinition("e", [{**CRITERIA[1], "name": "other"}]), Dataset.from_content(data), catalog)
    with pytest.raises(ConfigError, match="different testing criteria"):
        check_resumable(run, other, store)
    bigger = prepare(EvalDefinition("e", CRITERIA[1:]), Dataset.from_content(data * 2), catalog)
    with pytest.raises(ConfigError, match="1 items"):
        check_resumable(run, bigger, store)


@pytest.mark.parametrize(
    "criteria, message",
    [
        ([{"evaluator_name": "builtin.f1_scor"}], "did you mean builtin.f1_score"),
        (
            [{"evaluator_name": "builtin.f1_score", "data_mapping": {"response": "{{item.answer}}"}}],
            "no field 'answer'",
        ),
        (
            [{"evaluator_name": "builtin.rouge_score", "initialization_parameters": {"rouge_type": "rouge9"}}],
            "rouge_type",
        ),
        (
            [{"evaluator_name": "builtin.bleu_score", "initialization_parameters": {"n": 3}}],
            "no initialization parameter 'n'",
        ),
        ([{"evaluator_name": "builtin.document_retrieval"}], "needs input 'retrieval_ground_truth'"),
        (
            [
                {"evaluator_name": "builtin.f1_score", "name": "x"},
                {"evaluator_name": "builtin.bleu_score", "name": "x"},
            ],
            "used twice",
        ),
        ([{"type": "multi", "name": "m", "graders": {}}], "a multi criterion needs .graders."),
    ],
)
def test_bad_criteria_are_refused_before_the_run(criteria, message):
    data = Dataset.from_content([{"response": "a", "ground_truth": "b"}])
    with pytest.raises(ConfigError, match=message):
        prepare(EvalDefinition("e", criteria), data, load_catalog())


def test_conversation_level_on_a_turn_only_evaluator_is_refused():
    data = Dataset.from_content([{"response": "a", "ground_truth": "b"}])
    definition = EvalDefinition("e", CRITERIA[1:], evaluation_level="conversation")
    with pytest.raises(ConfigError, match="does not support evaluation_level 'conversation'"):
        prepare(definition, data, load_catalog())


def test_turn_level_splits_messages_for_response_inputs(store):
    data = [
        {
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Paris is nice"}],
            "ground_truth": "Paris",
        }
    ]
    prepared = prepare(EvalDefinition("e", CRITERIA[1:]), Dataset.from_content(data), load_catalog())
    outcome = finish_run(prepared, start(prepared, store), store)
    result = next(store.iter_output_items(outcome.run.id)).results[0]
    assert result.status == "completed" and result.score == pytest.approx(0.5)


def test_threshold_override_and_direction(store):
    criteria = [{"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score", "threshold": 0.2}]
    data = [{"response": "Paris is a city in France", "ground_truth": "Paris"}]
    prepared = prepare(EvalDefinition("e", criteria), Dataset.from_content(data), load_catalog())
    outcome = finish_run(prepared, start(prepared, store), store)
    result = next(store.iter_output_items(outcome.run.id)).results[0]
    assert result.threshold == 0.2 and result.passed is True and result.label == "pass"


def test_runs_from_inside_a_running_event_loop(store):
    """A notebook already runs a loop; evaluate() must still work there."""
    data = Dataset.from_content([{"response": "Paris", "ground_truth": "Paris"}])
    prepared = prepare(EvalDefinition("e", CRITERIA[1:]), data, load_catalog())

    async def inside_a_loop():
        return finish_run(prepared, start(prepared, store), store)

    assert asyncio.run(inside_a_loop()).summary.result_counts.passed == 1


def _writing_threads(store, monkeypatch) -> list[bool]:
    """For each batch the run writes: whether it was written on the thread that runs the event loop."""
    on_loop: list[bool] = []
    write = store.add_output_items

    def recorded(*args, **kwargs):
        try:
            asyncio.get_running_loop()
            on_loop.append(True)
        except RuntimeError:
            on_loop.append(False)
        return write(*args, **kwargs)

    monkeypatch.setattr(store, "add_output_items", recorded)
    return on_loop


def test_a_run_waiting_on_no_model_writes_on_its_loop_only_on_sqlite(store, monkeypatch):
    # SQLite's writes are work in this process: a thread would only take turns with the workers at the
    # interpreter. PostgreSQL's are waits on another process, kept off the loop.
    on_loop = _writing_threads(store, monkeypatch)
    prepared = prepare(EvalDefinition("e", CRITERIA[1:]), Dataset.from_content(rows(300)), load_catalog())
    outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(flush_every=100, processes=1))
    assert outcome.run.status == "completed" and outcome.summary.result_counts.total == 300
    assert len(on_loop) >= 3
    expected = store.engine.dialect.name == "sqlite"
    assert on_loop == [expected] * len(on_loop)


@pytest.mark.parametrize(("flush_every", "expected"), [(None, [1000, 1000, 300]), (500, [500] * 4 + [300])])
def test_a_run_that_only_computes_writes_bigger_batches_unless_told(store, monkeypatch, flush_every, expected):
    # Each commit rewrites the tables' last pages to the write-ahead log: fewer, bigger ones cost less.
    sizes = recorded_batches(store, monkeypatch)
    prepared = prepare(EvalDefinition("e", CRITERIA[1:]), Dataset.from_content(rows(2300)), load_catalog())
    options = RunOptions(flush_every=flush_every, flush_seconds=3600, processes=1)
    outcome = finish_run(prepared, start(prepared, store), store, options=options)
    assert outcome.summary.result_counts.total == 2300
    assert sizes == expected


def test_a_run_waiting_on_a_judge_writes_off_its_loop(store, llm, monkeypatch):
    # The loop is where the judge's answers arrive: a write there would hold them up.
    llm.script(rules=[{"match": "", "reply": {"content": '{"reason": "fine", "score": 5}'}}])
    models = ModelRegistry([ModelConfig(name="judge", model="judge", base_url=llm.base_url, api_key="t")])
    criteria = [{"type": "azure_ai_evaluator", "name": "relevance", "evaluator_name": "builtin.relevance"}]
    data = [{"query": f"q{i}", "response": f"a{i}"} for i in range(12)]
    definition = EvalDefinition("e", [{**criteria[0], "initialization_parameters": {"deployment_name": "judge"}}])
    on_loop = _writing_threads(store, monkeypatch)
    prepared = prepare(definition, Dataset.from_content(data), load_catalog(), models=models)
    outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(flush_every=5))
    assert outcome.run.status == "completed" and outcome.summary.result_counts.passed == 12
    assert on_loop and not any(on_loop)


def test_a_run_waiting_on_a_judge_has_one_writer_however_slow_its_writes(store, llm, monkeypatch):
    # The writer's task writes while the reading ends: nothing else may write (or drop) its batch then.
    llm.script(rules=[{"match": "", "reply": {"content": '{"reason": "fine", "score": 5}'}}])
    models = ModelRegistry([ModelConfig(name="judge", model="judge", base_url=llm.base_url, api_key="t")])
    criterion = {"type": "azure_ai_evaluator", "name": "relevance", "evaluator_name": "builtin.relevance"}
    definition = EvalDefinition("e", [{**criterion, "initialization_parameters": {"deployment_name": "judge"}}])
    data = [{"query": f"q{i}", "response": f"a{i}"} for i in range(40)]
    writing, most = [], []
    write = store.add_output_items

    def slow(run_id, items, **kwargs):
        writing.append(True)
        most.append(len(writing))
        threading.Event().wait(0.3)  # a write that takes long, as under load
        try:
            return write(run_id, items, **kwargs)
        finally:
            writing.pop()

    monkeypatch.setattr(store, "add_output_items", slow)
    prepared = prepare(definition, Dataset.from_content(data), load_catalog(), models=models)
    options = RunOptions(concurrency=2, flush_seconds=0.01)
    outcome = finish_run(prepared, start(prepared, store), store, options=options)
    assert max(most) == 1, most  # never two writes at once
    assert outcome.summary.result_counts.total == 40
    assert sorted(item.datasource_item_id for item in store.iter_output_items(outcome.run.id)) == list(range(40))


def test_a_criterion_said_to_only_compute_that_waits_is_still_judged_once_per_item(store):
    """Criteria that only compute are judged as each item is read, without a task; one that waits
    after all (here on every third item) is judged again the usual way, and nothing is lost."""
    from assay.evaluators.base import EvaluatorSpec, Metric, Score, computes_only

    judged = []

    def factory():
        async def evaluate(inputs):
            judged.append(inputs["response"])
            if inputs["response"].endswith(("0", "3", "6", "9")):
                await asyncio.sleep(0)
            return Score(float(len(inputs["response"])))

        return computes_only(evaluate)

    catalog = load_catalog()
    metric = Metric(name="length", type="continuous", min_value=0, max_value=100, threshold=3)
    catalog.add(EvaluatorSpec(name="waits", required_inputs=["response"], metrics=[metric], factory=factory))
    definition = EvalDefinition("e", [{"type": "azure_ai_evaluator", "name": "w", "evaluator_name": "waits"}])
    data = [{"response": f"r{i}"} for i in range(40)]
    prepared = prepare(definition, Dataset.from_content(data), catalog)
    outcome = finish_run(prepared, start(prepared, store), store)
    assert outcome.run.status == "completed" and outcome.evaluated_now == 40
    items = list(store.iter_output_items(outcome.run.id))
    assert [item.datasource_item_id for item in items] == list(range(40))
    assert [item.results[0].score for item in items] == [float(len(f"r{i}")) for i in range(40)]
    waited = [f"r{i}" for i in range(40) if i % 10 in (0, 3, 6, 9)]
    assert sorted(judged) == sorted([f"r{i}" for i in range(40)] + waited)  # those that waited, twice


def test_several_criteria_that_only_compute_judge_each_item_once(store):
    """Judged as each item is read, several criteria are awaited in turn: gathered, their tasks ran
    again after the item had been judged the usual way (every criterion twice per item)."""
    from assay.evaluators.base import EvaluatorSpec, Metric, Score, computes_only

    judged = []

    def factory():
        async def evaluate(inputs):
            judged.append(inputs["response"])
            return Score(float(len(inputs["response"])))

        return computes_only(evaluate)

    catalog = load_catalog()
    metric = Metric(name="length", type="continuous", min_value=0, max_value=100, threshold=0)
    catalog.add(EvaluatorSpec(name="counted", required_inputs=["response"], metrics=[metric], factory=factory))
    criteria = [
        {"type": "azure_ai_evaluator", "name": "c", "evaluator_name": "counted"},
        {"type": "azure_ai_evaluator", "name": "f1", "evaluator_name": "builtin.f1_score"},
    ]
    data = [{"response": f"r{i}", "ground_truth": f"r{i}"} for i in range(40)]
    prepared = prepare(EvalDefinition("e", criteria), Dataset.from_content(data), catalog)
    outcome = finish_run(prepared, start(prepared, store), store, options=RunOptions(processes=1))
    assert outcome.run.status == "completed" and outcome.summary.result_counts.passed == 40
    assert sorted(judged) == sorted(f"r{i}" for i in range(40))


def test_a_worker_that_crashes_stops_the_run_with_its_error_instead_of_hanging(store, models, llm, monkeypatch):
    """A bug in the engine (not an item's failure) once left the reader waiting on a dead worker for ever."""
    import threading

    from assay.run import engine

    llm.script(default={"content": '{"reason": "fine", "score": 5}'})
    judged = engine.evaluate_item

    async def buggy(row, *args, **kwargs):
        if row.index >= 5:  # every worker meets it
            raise RuntimeError("a bug in the engine")
        return await judged(row, *args, **kwargs)

    monkeypatch.setattr(engine, "evaluate_item", buggy)
    criteria = [
        {
            "type": "azure_ai_evaluator",
            "name": "coherence",
            "evaluator_name": "builtin.coherence",
            "initialization_parameters": {"model": "judge"},
        }
    ]
    data = [{"query": f"q{i}", "response": f"r{i}"} for i in range(400)]
    prepared = prepare(EvalDefinition("e", criteria), Dataset.from_content(data), load_catalog(), models=models)
    raised: list[BaseException] = []

    def execute() -> None:
        try:
            finish_run(prepared, start(prepared, store), store, options=RunOptions(concurrency=2))
        except BaseException as exc:  # noqa: BLE001 - what the run raised is the finding
            raised.append(exc)

    thread = threading.Thread(target=execute, daemon=True)  # a hang fails the test instead of holding it
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive(), "the run hung on its dead workers"
    assert len(raised) == 1 and isinstance(raised[0], RuntimeError) and "a bug in the engine" in str(raised[0])


def test_items_judged_a_block_at_a_time_are_the_items_judged_one_by_one():
    """``judged_now`` (the block path of runs that only compute) gives each item what the usual path
    gives it: results in the criteria's order, a criterion that does not apply to an item left out
    and the others annotated, a missing input and an evaluator's exception as that item's errors."""
    import dataclasses

    from assay.run.attack_criteria import attack_criteria
    from assay.run.engine import JUDGED_TOGETHER, evaluate_item, judged_now

    criteria = [
        *CRITERIA,
        {"type": "string_check", "name": "exact", "input": "{{item.response}}", "reference": "good", "operation": "eq"},
    ]
    catalog = catalog_with(fragile)
    data = [
        {
            "query": f"q{i}",
            "response": "boom" if i % 7 == 3 else ("good" if i % 2 else "bad"),
            **({} if i % 11 == 5 else {"ground_truth": "good"}),
            "risk_category": "violence" if i % 3 == 0 else "self_harm",
        }
        for i in range(JUDGED_TOGETHER + 37)
    ]
    prepared = prepare(EvalDefinition("e", criteria), Dataset.from_content(data), catalog)
    # The red-team criteria: one that judges only attacks on its risk (here a pure one standing in
    # for the model judge), annotating what it judges.
    bound = attack_criteria(prepared.criteria)
    bound.append(dataclasses.replace(bound[0], name="violence_only", risk="violence"))
    rows = list(prepared.dataset.rows())

    one_by_one = [asyncio.run(evaluate_item(row, bound)) for row in rows]
    blocks = [judged_now(rows[i : i + JUDGED_TOGETHER], bound, "run", 0) for i in range(0, len(rows), JUDGED_TOGETHER)]
    together = [item for block in blocks for item in block]

    assert all(isinstance(item, OutputItem) for item in together)  # annotated results are no plain ones
    assert [item.model_dump() for item in together] == [item.model_dump() for item in one_by_one]
    statuses = {result.status for item in one_by_one for result in item.results}
    assert statuses == {"completed", "error"}  # both paths met failures, not only verdicts
    assert {len(item.results) for item in one_by_one} == {3, 4}  # the risk criterion judged only its attacks
    missing = one_by_one[5].results[1]
    assert missing.status == "error" and "ground_truth" in (missing.reason or "")


@evaluator(threshold=0.25, direction="decrease")
def distance(response: str) -> float:
    """Plain results of every kind but one: a NaN, an integer, and scores either side of a lower-is-
    better pass mark."""
    if response == "good":
        return float("nan")
    return 3 if response == "bad" else len(response) / 10


def test_plain_results_judged_a_block_at_a_time_are_stored_as_the_items_judged_one_by_one(store):
    """Where every result of an item is plain (``ResultForm``), ``judged_now`` gives the item as the
    rows it is stored as: the rows the usual path's item is stored as, byte for byte (the results'
    JSON too), and the same summary. An item with a result that is not plain (an error, a NaN, an
    integer score) comes whole, its plain results made into ``Result``s."""
    from assay.run.engine import JUDGED_TOGETHER, evaluate_item, judged_now
    from assay.store.item_rows import ItemRows, encode_item
    from assay.store.tally import RunTally

    criteria = [
        *CRITERIA,
        {"type": "azure_ai_evaluator", "name": "distance", "evaluator_name": "distance"},
        {"type": "azure_ai_evaluator", "name": "strict", "evaluator_name": "fragile", "threshold": 0.9},
        {
            "type": "string_check",
            "name": 'exact "é"',
            "input": "{{item.response}}",
            "reference": "bad",
            "operation": "eq",
        },
    ]
    data = [
        {
            "response": ("boom" if i % 17 == 3 else "good" if i % 5 == 1 else "bad" if i % 7 == 2 else f"r{i}"),
            **({} if i % 23 == 5 else {"ground_truth": f"r{i} good"}),
        }
        for i in range(JUDGED_TOGETHER + 37)
    ]
    prepared = prepare(EvalDefinition("e", criteria), Dataset.from_content(data), catalog_with(fragile, distance))
    rows = list(prepared.dataset.rows())
    blocks, usual = start(prepared, store), start(prepared, store)
    one_by_one = [asyncio.run(evaluate_item(row, prepared.criteria)) for row in rows]
    together = [
        item
        for first in range(0, len(rows), JUDGED_TOGETHER)
        for item in judged_now(rows[first : first + JUDGED_TOGETHER], prepared.criteria, blocks.id, 7)
    ]

    plain = [isinstance(item, ItemRows) for item in together]
    assert 0 < sum(plain) < len(plain)  # both ways were taken
    encoded = [item if isinstance(item, ItemRows) else encode_item(blocks.id, item, 7) for item in together]
    assert encoded == [encode_item(blocks.id, item, 7) for item in one_by_one]
    # Stored and summed up alike, the items judged in blocks given to the writer as they came.
    names = [(criterion.name, criterion.metric) for criterion in prepared.criteria]
    summaries, stored = [], []
    for run, items in ((blocks, together), (usual, one_by_one)):
        tally = RunTally()
        assert store.add_output_items(run.id, items, tally=tally) and tally.complete
        summaries += [store.summarize(run.id, names, tally), store.summarize(run.id, names)]
        stored.append(
            [item.model_dump_json(exclude={"run_id", "created_at"}) for item in store.iter_output_items(run.id)]
        )
    assert stored[0] == stored[1] and len(stored[0]) == len(rows)
    assert summaries[0] == summaries[1] == summaries[2] == summaries[3]


def test_a_block_stopped_by_ctrl_c_leaves_no_evaluation_unawaited():
    """Ctrl-C inside a block's scores closes the evaluations not yet driven: none is reported as
    never awaited when it is collected."""
    import gc
    import warnings

    from assay.evaluators.base import EvaluatorSpec, Metric, Score, computes_only

    def factory():
        async def evaluate(inputs):
            if inputs["response"] == "r2":
                raise KeyboardInterrupt
            return Score(1.0)

        return computes_only(evaluate)

    catalog = load_catalog()
    metric = Metric(name="one", type="continuous", min_value=0, max_value=1, threshold=0)
    catalog.add(EvaluatorSpec(name="stops", required_inputs=["response"], metrics=[metric], factory=factory))
    definition = EvalDefinition("e", [{"type": "azure_ai_evaluator", "name": "s", "evaluator_name": "stops"}])
    prepared = prepare(definition, Dataset.from_content([{"response": f"r{i}"} for i in range(6)]), catalog)
    (criterion,) = prepared.criteria
    items = [row.item for row in prepared.dataset.rows()]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyboardInterrupt):
            criterion.judge_block(items, [None] * len(items))
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]


def test_a_plain_computation_is_called_by_the_block_itself_with_the_results_one_by_one_gives():
    """A built-in evaluator written as a plain function is called by the block that judges items as
    they are read, not through a coroutine per item, and its results (scores, its failures, a missing
    input) are those judging each item on its own gives."""
    import inspect

    from assay.evaluators.base import EvaluatorSpec, Metric, Score, computation_of, computes_only

    callers = []

    def factory():
        def compute(inputs):
            callers.append(inspect.currentframe().f_back.f_code.co_name)
            if inputs["response"] == "boom":
                raise ValueError("cannot measure boom")
            return Score(float(len(inputs["response"])), reason="counted")

        return computes_only(compute)

    catalog = load_catalog()
    metric = Metric(name="length", type="continuous", min_value=0, max_value=100, threshold=3)
    catalog.add(EvaluatorSpec(name="length", required_inputs=["response"], metrics=[metric], factory=factory))
    definition = EvalDefinition("e", [{"type": "azure_ai_evaluator", "name": "l", "evaluator_name": "length"}])
    data = [{"response": "abcd"}, {"response": "ab"}, {"response": "boom"}, {"response": None}, {"response": "xyz"}]
    prepared = prepare(definition, Dataset.from_content(data), catalog)
    (criterion,) = prepared.criteria
    assert computation_of(criterion.evaluator) is not None
    items = [row.item for row in prepared.dataset.rows()]

    in_block = criterion.judge_block(items, [None] * len(items))
    assert set(callers) == {"judge_block"} and len(callers) == 4  # the item without a response is not scored
    callers.clear()
    one_by_one = [asyncio.run(criterion.evaluate_all(item, None)) for item in items]
    assert set(callers) == {"computed"}  # through the coroutine every other caller awaits
    assert in_block == one_by_one
    assert [r[0].status for r in in_block] == ["completed", "completed", "error", "error", "completed"]
    assert [r[0].passed for r in in_block] == [True, False, None, None, True]
    assert "cannot measure boom" in (in_block[2][0].reason or "") and "response" in (in_block[3][0].reason or "")
