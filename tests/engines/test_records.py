"""grade_record / grade_batch: plain functions for data engines."""

from __future__ import annotations

import json
import pickle

import maxrepeat
from maxrepeat.engines.records import as_configs
from tests.conftest import call, result

RUN = {"id": "r1", "events": [call("bash", f"c{i}", {"c": "ls"}) for i in range(3)]
       + [result(f"c{i}", "same") for i in range(3)]}


def test_record_shapes_agree() -> None:
    """A dict, its JSON text, its bytes and a wrapped record grade like grade() does."""
    cfg = maxrepeat.MaxRepeatConfig(2, match="name-args")
    want = [maxrepeat.grade(RUN, cfg).to_dict()]
    want[0]["metadata"]["source"] = "<record>"  # where grade_record says it was read
    text = json.dumps(RUN)
    for record in (RUN, text, text.encode(), {"trajectory": RUN}, json.dumps({"trajectory": RUN})):
        assert maxrepeat.grade_record(record, cfg) == want


def test_unreadable_record_gives_error_rows() -> None:
    """Text that is not JSON gives one error result per config, never an exception."""
    rows = maxrepeat.grade_record("{nope", [{"max": 1}, {"max": 2, "name": "two"}], source="x:3")
    assert [(r["status"], r["name"]) for r in rows] == [("error", "max-repeat(max=1)"),
                                                         ("error", "two")]
    assert rows[0]["trajectory"] == "x:3"


def test_batch_names_records_by_position() -> None:
    """Records without an id are named source[i]; results stay in record order."""
    rows = maxrepeat.grade_batch([{"events": []}, RUN, "[]"], {"max": 2}, source="part-0")
    assert [r["trajectory"] for r in rows] == ["part-0[0]", "r1", "part-0[2]"]
    assert rows[2]["status"] == "error"


def test_functions_and_configs_pickle() -> None:
    """What an engine ships to workers survives pickling."""
    fn = pickle.loads(pickle.dumps(maxrepeat.grade_record))
    cfgs = pickle.loads(pickle.dumps(as_configs([{"max": 2, "tools": ["^bash$"]}])))
    assert fn(RUN, cfgs)[0]["passed"] is False
