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


ITEMS = [
    {"query": "q", "response": "r"},
    {"query": None, "response": "r"},  # null is kept for an input that must be there
    {"response": "r"},  # no query at all
    {"query": {"nested": [1, 2]}, "response": ["a", "b"]},
]
MAPPINGS = [
    ({"query": "{{item.query}}", "response": "{{ item.response }}"}, {}),
    ({"query": "{{item.query}}", "response": "{{item.response}}"}, {"optional": ["query"]}),
    ({"query": "{{item.query}}", "response": "{{item.response}}"}, {"lenient": True}),
    ({"response": "{{item.response}}"}, {"defaults": DataMapping({"query": "{{item.query}}"}, where="d")}),
    # Not every input one of the item's own fields: each template is walked.
    ({"query": "{{item.query}}", "response": "{{sample.output_text}}"}, {"optional": ["query"]}),
    ({"query": "Q: {{item.query}}", "response": "{{item.response}}"}, {}),
]


@pytest.mark.parametrize(("mapping", "options"), MAPPINGS)
@pytest.mark.parametrize("item", ITEMS)
def test_a_mapping_of_the_items_own_fields_reads_them_as_its_templates_would(mapping, options, item):
    """Inputs that each map one of the item's fields are read straight from it: the same inputs, and
    the same error naming the field and those the item has, as walking every template gives."""
    compiled = DataMapping(mapping, where="m", **options)
    walked = DataMapping(mapping, where="m", **options)
    walked._item_fields = None  # every template walked, as before fields were read straight
    try:
        expected = walked.resolve(item, SAMPLE)
    except ItemError as exc:
        with pytest.raises(type(exc)) as raised:
            compiled.resolve(item, SAMPLE)
        assert str(raised.value) == str(exc)
        return
    assert compiled.resolve(item, SAMPLE) == expected


def test_only_a_mapping_of_the_items_own_top_level_fields_is_read_straight():
    assert DataMapping({"a": "{{item.a}}", "b": "{{item.b}}"}, where="m")._item_fields is not None
    assert DataMapping({"a": "{{item.a}}", "b": "${data.b}"}, where="m")._item_fields is not None
    for template in ("{{item.a.b}}", "{{item[0]}}", "{{sample.a}}", "x {{item.a}}", "literal"):
        assert DataMapping({"a": "{{item.a}}", "b": template}, where="m")._item_fields is None, template
