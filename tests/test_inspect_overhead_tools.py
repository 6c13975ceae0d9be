"""The tool schemas reach the model on every generation without passing through `state.tools`.

The solver hands the env's tools to `generate` directly and leaves `state.tools` empty:
Inspect would re-parse the Tools it keeps there and diff all ten schemas into the solver's
state event, a tenth of a scripted sample's Python work, for a copy of what every model
event already logs. These tests pin both halves: the model (and the log) still sees each
tool with its full description and parameters, and the state event carries no tools.
"""

from __future__ import annotations

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from conftest import TEST_CATALOG_SIZE
from ecom_bench.envs.context import CatalogSpec, load_context
from ecom_bench.episode import new_episode
from ecom_bench.tasks import cart


def _run(tmp_path, samples: int = 2):
    [log] = inspect_eval(cart(samples=samples, catalog_size=TEST_CATALOG_SIZE), model="ecom/oracle",
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    return read_eval_log(log.location, resolve_attachments=True)  # long descriptions are logged as attachments


def test_every_model_call_sees_every_tool_with_its_full_schema(tmp_path):
    log = _run(tmp_path)
    specs = new_episode("cart", 0, 0, 0, context=load_context(CatalogSpec(size=TEST_CATALOG_SIZE))).tool_specs()
    for sample in log.samples:
        model_events = [e for e in sample.events if e.event == "model"]
        assert model_events
        for event in model_events:
            assert [t.name for t in event.tools] == [s.name for s in specs]
            for tool, spec in zip(event.tools, specs, strict=True):
                assert tool.description == spec.description
                logged = tool.parameters.model_dump(exclude_none=True)
                assert set(logged["properties"]) == set(spec.parameters["properties"])
                assert logged["required"] == list(spec.parameters.get("required", []))
                for name, schema in spec.parameters["properties"].items():
                    assert logged["properties"][name].get("description") == schema.get("description")


def test_the_state_event_carries_no_tool_schemas(tmp_path):
    log = _run(tmp_path, samples=1)
    [sample] = log.samples
    changes = [c for e in sample.events if e.event == "state" for c in e.changes]
    assert changes, "the solver's state event is still logged (messages, output)"
    assert not [c for c in changes if c.path.startswith("/tools")]
    assert [m.role for m in sample.messages[:2]] == ["system", "user"]
