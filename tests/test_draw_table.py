"""grader/suite/draw_table.py: the hidden suite's drawn cases, written once and read back by every judge."""

from __future__ import annotations

import json
import math

import pytest
import torch

from grader.suite.draw_table import (
    TABLE_FILE,
    TableError,
    decode,
    encode,
    fixed_draws,
    hypothesis_table,
    read_table,
)
from grader.suite.extend.domains import ExtendCase
from grader.suite_files import suite_hash
from grader.vocabulary import Visibility

REWRITE = "python -m grader.suite.draw_table"


def test_the_written_table_is_what_hypothesis_draws_for_this_suite():
    table = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    assert table["suite_hash"] == suite_hash(), f"the suite changed since its draws were written: run {REWRITE}"
    fresh = hypothesis_table()
    written = fixed_draws()
    assert sorted(written) == sorted(fresh), f"draws missing or left over: run {REWRITE}"
    for key, cases in fresh.items():
        assert written[key] == cases, f"{key}: the written cases are not Hypothesis' draws: run {REWRITE}"
        assert [type(case) for case in written[key]] == [type(case) for case in cases], key


def test_a_case_comes_back_as_it_was_with_its_types():
    case = ExtendCase(head_dim=8, base=None, rope_type="yarn", factor=4.0, original_len=64, params=(("beta", 1.5),))
    value = (
        case,
        [1, 2.5, -0.0, math.inf, True, None, "text"],
        {"dtype": torch.bfloat16, 3: (Visibility.HIDDEN,)},
    )
    back = decode(json.loads(json.dumps(encode(value))))
    assert back == value
    assert type(back[0].params) is tuple and type(back[1]) is list and back[1][4] is True
    assert math.copysign(1.0, back[1][2]) == -1.0 and back[2]["dtype"] is torch.bfloat16
    assert type(back[2][3][0]) is Visibility
    assert math.isnan(decode(json.loads(json.dumps(encode(math.nan)))))


def test_a_table_written_for_another_suite_is_not_read(tmp_path):
    path = tmp_path / "drawn_cases.json"
    path.write_text(json.dumps({"suite_hash": "another suite", "draws": {"k": encode((1, 2))}}))
    assert read_table(path, "this suite") == {}
    assert read_table(path, "another suite") == {"k": (1, 2)}
    assert read_table(tmp_path / "missing.json", "this suite") == {}


@pytest.mark.parametrize(
    "named",
    [
        {"dataclass": "subprocess:Popen", "fields": {}},
        {"enum": "os:system", "value": "true"},
        {"dataclass": "grader.vocabulary:Visibility", "fields": {}},  # an enum, not a dataclass
        {"dtype": "load"},  # a function of torch, not a dtype
        {"pickle": "gASVAAAA"},
    ],
)
def test_a_table_that_names_anything_else_is_refused_and_not_read(named, tmp_path):
    with pytest.raises(TableError):
        decode(named)
    path = tmp_path / "drawn_cases.json"
    path.write_text(json.dumps({"suite_hash": "this suite", "draws": {"k": {"tuple": [named]}}}))
    assert read_table(path, "this suite") == {}


def test_a_value_the_table_cannot_write_is_an_error_at_writing():
    with pytest.raises(TypeError, match="cannot write"):
        encode(torch.zeros(2))
