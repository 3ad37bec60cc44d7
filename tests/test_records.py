"""Results and output items built without validation (a run's hot path) are what validation builds."""

import pytest

from assay.results import OutputItem, Result
from assay.store.item_rows import results_json


@pytest.mark.parametrize("passed, reason, properties", [(True, None, {}), (False, "too short", {"precision": 0.2})])
def test_a_checked_result_is_the_validated_one(passed, reason, properties):
    fields = dict(type="azure_ai_evaluator", name="f1", metric="f1_score", score=0.25, threshold=0.5)
    checked = Result.checked(**fields, passed=passed, reason=reason, properties=properties)
    validated = Result(
        **fields, passed=passed, label="pass" if passed else "fail", reason=reason, properties=properties
    )
    assert checked == validated
    assert list(checked.model_dump()) == list(validated.model_dump())  # the order stored JSON has
    assert results_json([checked]) == results_json([validated])
    assert checked.model_fields_set == validated.model_fields_set | {"status"}


def test_a_checked_output_item_is_the_validated_one():
    results = [Result(name="f1", metric="f1_score", score=0.0, passed=False, label="fail")]
    checked = OutputItem.checked(3, {"q": "x"}, {"output_text": "y"}, results)
    validated = OutputItem(
        datasource_item_id=3, datasource_item={"q": "x"}, sample={"output_text": "y"}, results=results, status="fail"
    )
    assert checked == validated and checked.status == "fail"
    assert checked.model_dump() == validated.model_dump()
