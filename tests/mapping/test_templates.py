import pytest

from assay.errors import ConfigError, ItemError
from assay.mapping import DataMapping, Template

ITEM = {"query": "q", "n": 3, "ok": True, "obj": {"a": [{"c": "deep"}]}, "messages": [{"role": "user", "content": "x"}]}
SAMPLE = {"output_text": "out", "output_items": [{"type": "message"}]}


def render(value):
    return Template(value, "test").render(ITEM, SAMPLE)


def test_whole_placeholder_keeps_type():
    assert render("{{item.messages}}") == ITEM["messages"]
    assert render("{{ item.n }}") == 3
    assert render("{{item.obj.a[0].c}}") == "deep"
    assert render("{{sample.output_items}}") == SAMPLE["output_items"]


def test_embedded_placeholders_render_text():
    assert render("Q: {{item.query}} n={{item.n}} ok={{item.ok}} o={{item.obj}}") == (
        'Q: q n=3 ok=true o={"a": [{"c": "deep"}]}'
    )


def test_nested_structures_are_templated():
    assert render({"m": [{"role": "user", "content": "{{item.query}}"}]}) == {"m": [{"role": "user", "content": "q"}]}


def test_peer_references():
    assert render("${data.obj.a[0].c}") == "deep"
    assert render("${target.output_text}") == "out"
    assert render("${run.outputs.output_text}") == "out"


def test_missing_path_names_the_fields_that_exist():
    with pytest.raises(ItemError, match=r"item has no field 'answer'; it has messages, n, obj, ok, query"):
        render("{{item.answer}}")
    with pytest.raises(ItemError, match=r"item.obj.a has 1 elements, no index 5"):
        render("{{item.obj.a[5]}}")


def test_only_item_and_sample_namespaces():
    with pytest.raises(ConfigError, match="must start with item. or sample."):
        Template("{{data.query}}", "criteria[0].data_mapping.query")


def test_mapping_check_refuses_fields_no_item_has():
    mapping = DataMapping({"response": "{{item.answer}}"}, where="m")
    with pytest.raises(ConfigError, match=r"criterion 'f1': response maps to '\{\{item.answer\}\}'.*fields: query"):
        mapping.check_fields("f1", {"query"}, has_sample=False)
    with pytest.raises(ConfigError, match="no target"):
        DataMapping({"response": "{{sample.output_text}}"}, where="m").check_fields("f1", {"q"}, has_sample=False)
