"""Extrapolation experiment: the task by hand, training that learns, learned tables that cannot run,
determinism, the CSV/JSON files and their loader's refusals, the CLI and the shipped results."""

from __future__ import annotations

import io
import json
import sys
import types
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from poslab.experiments import extrapolation as experiment
from poslab.experiments import measure, training
from poslab.experiments.config import FULL, ExperimentConfig
from poslab.experiments.result_files import (
    COLUMNS,
    PROBE_COLUMNS,
    load_results,
    parse_measurements,
    parse_probes,
    passkey_path,
    save_results,
    sidecar_path,
)
from poslab.experiments.results import ExtrapolationResults
from poslab.experiments.rope_arms import ARMS, SCALED_ARMS
from poslab.experiments.tasks import IGNORE, recall_targets
from poslab.experiments.terminal_progress import ProgressBar
from poslab.experiments.tiny_transformer import ENCODINGS, CannotRun, ModelConfig, TinyDecoder
from poslab.threads import one_intra_op_thread

# Small enough for a test: 16-token sequences over 8 symbols (chance 1/8), few needles.
# One scaled arm and two depths: every code path of the arms and probes, at a test's cost.
TINY = replace(
    FULL,
    seeds=(0,),
    train_len=16,
    vocab_size=8,
    steps=150,
    warmup_steps=20,
    eval_tokens=2_048,
    probe_trials=4,
    rope_scalings=("yarn",),
    probe_depths=(0.0, 1.0),
)


def test_recall_targets_by_hand():
    tokens = torch.tensor([[7, 3, 9, 3, 5, 9], [4, 4, 4, 1, 4, 1]])
    expected = torch.tensor(
        [[IGNORE, IGNORE, IGNORE, 9, IGNORE, 3], [IGNORE, 4, 4, IGNORE, 1, 4]]
    )  # the most recent match wins: 4 at t=2 -> 1
    assert torch.equal(recall_targets(tokens), expected)


def test_training_learns_the_task_at_the_training_length():
    with one_intra_op_thread():
        model = training.train_model(TINY, "rope", seed=0)
        score = training.evaluate(model, TINY, TINY.train_len, seed=0)
    assert score.accuracy >= 0.5, f"RoPE reached only {score.accuracy:.2f} (chance {TINY.chance_accuracy:.2f})"
    assert 1.0 <= score.perplexity < TINY.vocab_size / 2, score  # a learner is surer than half a guess


def test_same_seed_gives_the_same_numbers_and_leaves_the_global_rng_alone():
    config = replace(TINY, steps=5, encodings=("alibi", "learned"))
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    with one_intra_op_thread():  # as the command line runs: tiny tensors, one thread
        first = experiment.run_experiment(config, "quick", "test")
        after = torch.rand(1)
        second = experiment.run_experiment(config, "quick", "test")
    assert first.measurements == second.measurements
    assert torch.equal(before, after), "training consumed the caller's global random numbers"


def test_parallel_runs_give_the_same_numbers_as_one_process(tmp_path, monkeypatch):
    """Also in a process whose ``__main__`` must not run again: Streamlit leaves its page script there
    (AppTest's, after any app test in this process), and spawn ran it in each child of the pool."""
    # The pool is on trial, not the model: two lengths and few test tokens and needles, still every arm.
    config = replace(
        TINY, steps=5, seeds=(0, 1), encodings=("alibi", "rope"), eval_multiples=(1, 2), eval_tokens=256, probe_trials=2
    )
    with one_intra_op_thread():  # as the pool's processes run: one thread each
        serial = experiment.run_experiment(config, "quick", "test", jobs=1)
    script = tmp_path / "page_script.py"
    script.write_text("raise SystemExit('a child ran the caller's __main__ again')\n")
    page = types.ModuleType("__main__")
    page.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", page)
    pooled = experiment.run_experiment(config, "quick", "test", jobs=2)
    assert sys.modules["__main__"] is page, "the caller's __main__ was not put back"
    assert pooled.measurements == serial.measurements and pooled.probes == serial.probes
    arms = 1 + 1 + len(config.rope_scalings)  # ALiBi; RoPE, and RoPE with each schedule
    assert len(serial.measurements) == 2 * arms * len(config.eval_lens)
    assert len(serial.probes) == 2 * arms * len(config.eval_lens) * len(config.probe_depths) * 2  # passkey, two-hop


def test_learned_table_refuses_lengths_past_its_rows():
    model = TinyDecoder(ModelConfig("learned", vocab_size=8, max_len=16))
    with pytest.raises(CannotRun, match="no embedding for position 16"):
        training.evaluate(model, TINY, 32, seed=0)
    with pytest.raises(ValueError, match="cannot run"):
        model(torch.zeros(1, 17, dtype=torch.long))
    rows = measure.evaluate_all(model, TINY, "learned", seed=0)
    assert [(m.eval_len, m.status, m.accuracy is None) for m in rows] == [
        (16, "ok", False),
        (32, "cannot_run", True),
        (64, "cannot_run", True),
        (128, "cannot_run", True),
    ]


@pytest.mark.parametrize("encoding", [e for e in ENCODINGS if e != "learned"])
def test_other_encodings_run_at_any_length(encoding):
    model = TinyDecoder(ModelConfig(encoding, vocab_size=8, max_len=16)).eval()
    assert model.longest_sequence is None
    assert model(torch.zeros(2, 40, dtype=torch.long)).shape == (2, 40, 8)


def test_learning_rate_warms_up_then_decays_to_a_tenth():
    config = replace(TINY, steps=100, warmup_steps=10)
    factors = [training.learning_rate_factor(step, config) for step in range(100)]
    assert factors[0] == pytest.approx(0.1) and factors[9] == pytest.approx(1.0)
    assert factors[10] == pytest.approx(1.0) and factors[-1] == pytest.approx(0.1, abs=1e-3)
    assert all(a >= b for a, b in zip(factors[10:], factors[11:]))


def test_results_round_trip_through_csv_and_json(tmp_path):
    config = replace(TINY, steps=2)
    with one_intra_op_thread():  # as the command line runs: tiny tensors, one thread
        results = experiment.run_experiment(config, "quick", "test command")
    arms = [arm for encoding in ENCODINGS for arm in config.arms_of(encoding)]
    assert set(arms) <= set(ARMS) and "rope+yarn" in arms
    assert {(m.encoding, m.eval_len) for m in results.measurements} == {(e, n) for e in arms for n in config.eval_lens}
    # At the training length a scaled arm is RoPE itself (s = 1): the same numbers, exactly.
    at_train = {m.encoding: m for m in results.measurements if m.eval_len == config.train_len}
    scaled = [arm for arm in SCALED_ARMS if arm in at_train]
    assert scaled and {at_train[arm].accuracy for arm in ("rope", *scaled)} == {at_train["rope"].accuracy}
    assert ExtrapolationResults.from_json(results.to_json()) == results
    save_results(results, tmp_path / "r.csv")
    loaded = load_results(tmp_path / "r.csv")
    assert loaded.record == results.record and loaded.probes == results.probes  # counts: exact
    assert [(m.encoding, m.eval_len, m.status) for m in loaded.measurements] == [
        (m.encoding, m.eval_len, m.status) for m in results.measurements
    ]
    for saved, original in zip(loaded.measurements, results.measurements):
        for name in ("accuracy", "perplexity"):
            assert (getattr(saved, name) is None) == (getattr(original, name) is None)
            if getattr(saved, name) is not None:
                assert getattr(saved, name) == pytest.approx(getattr(original, name), abs=1e-4)
    # The original six columns first, in their order; new ones only after them.
    assert (tmp_path / "r.csv").read_text().splitlines()[0] == ",".join(COLUMNS) + ",perplexity"
    assert passkey_path(tmp_path / "r.csv").read_text().splitlines()[0] == ",".join(PROBE_COLUMNS) + ",probe"
    assert {p.probe for p in loaded.probes} == {"passkey", "two_hop"} and loaded.record.two_hop_chance == 1 / (7 * 6)


def test_a_file_made_before_perplexity_and_the_probe_still_loads(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text("\n".join([",".join(COLUMNS), *GOOD_ROWS]) + "\n")
    old_record = {
        "command": "x",
        "mode": "full",
        "seeds": [0],
        "config": {},
        "task": "t",
        "chance_accuracy": 0.0625,
        "versions": {},
        "run_time_s": 1.0,
        "ms_per_step": 1.0,
        "cpu_ms_per_step": 1.0,
        "finished_at": "2026-11-30T06:14:33+00:00",
    }
    sidecar_path(path).write_text(json.dumps(old_record))
    results = load_results(path)
    assert [m.perplexity for m in results.measurements] == [None, None]
    assert results.probes == () and results.record.probe is None
    sidecar_path(path).write_text(json.dumps(old_record | {"probe": "passkey", "probe_chance": 0.07}))
    with pytest.raises(ValueError, match="records a passkey probe, but old_passkey.csv is missing"):
        load_results(path)
    sidecar_path(path).write_text(json.dumps(old_record | {"colour": "red"}))
    with pytest.raises(ValueError, match="unknown field.*colour"):
        load_results(path)


GOOD_ROWS = ["rope,0,64,64,0.9,ok", "learned,0,64,128,,cannot_run"]
HEADER = ",".join(COLUMNS)
WITH_PERPLEXITY = HEADER + ",perplexity"


@pytest.mark.parametrize(
    "header, rows, message",
    [
        ("encoding,seed,train_len,eval_len,status", ["rope,0,64,64,ok"], "missing column.*accuracy"),
        (
            HEADER + ",note",
            [r + ",x" for r in GOOD_ROWS],
            "columns must be exactly .*optionally followed by perplexity",
        ),
        ("seed,encoding,train_len,eval_len,accuracy,status", ["0,rope,64,64,0.9,ok"], "columns must be exactly"),
        (HEADER, ["rope,0,64,64,0.9,fine"], "line 2: status 'fine' is not one of ok, cannot_run"),
        (HEADER, ["rope,0,64,64,1.2,ok"], r"line 2: accuracy 1.2 is outside \[0, 1\]"),
        (HEADER, ["rope,0,64,64,-0.1,ok"], r"line 2: accuracy -0.1 is outside \[0, 1\]"),
        (HEADER, ["rope,0,64,64,nan,ok"], r"outside \[0, 1\]"),
        (HEADER, [GOOD_ROWS[0], "learned,0,64,128,0.5,cannot_run"], "line 3: accuracy given but"),
        (HEADER, ["rope,0,64,64,,ok"], "line 2: status is ok but accuracy is empty"),
        (HEADER, ["xpos,0,64,64,0.5,ok"], "line 2: unknown encoding 'xpos'"),
        (HEADER, ["rope,zero,64,64,0.5,ok"], "line 2: seed must be a whole number"),
        (HEADER, ["rope,0,64,64,high,ok"], "line 2: accuracy must be a number or empty"),
        (HEADER, ["rope,0,64,64,0.5"], "line 2: expected 6 fields"),
        (HEADER, [GOOD_ROWS[0], GOOD_ROWS[0]], "line 3: a second row for encoding rope"),
        (WITH_PERPLEXITY, ["rope,0,64,64,0.5,ok,0.7"], "line 2: perplexity 0.7 is not a number of at least 1"),
        (WITH_PERPLEXITY, ["rope,0,64,64,0.5,ok,inf"], "line 2: perplexity inf is not"),
        (WITH_PERPLEXITY, ["learned,0,64,128,,cannot_run,3.0"], "line 2: perplexity given but status is cannot_run"),
        (HEADER, [], "header but no rows"),
        ("", [], "the file is empty"),
    ],
)
def test_loader_rejects_malformed_csv_saying_what_is_wrong(header, rows, message):
    with pytest.raises(ValueError, match=message):
        parse_measurements("\n".join([header, *rows]) + "\n")


def test_loader_reads_the_added_perplexity_column():
    rows = parse_measurements("\n".join([WITH_PERPLEXITY, "rope,0,64,64,0.9,ok,1.25", "learned,0,64,128,,cannot_run,"]))
    assert [(m.accuracy, m.perplexity) for m in rows] == [(0.9, 1.25), (None, None)]


PROBE_HEADER = ",".join(PROBE_COLUMNS)


@pytest.mark.parametrize(
    "row, message",
    [
        ("rope,0,64,512,0.5,256,48,12,ok", None),
        ("learned,0,64,128,0.0,127,48,,cannot_run", None),
        ("rope,0,64,512,1.5,256,48,12,ok", r"depth 1.5 is outside \[0, 1\]"),
        ("rope,0,64,512,0.5,512,48,12,ok", "distance 512 is not between 1 and eval_len - 1 = 511"),
        ("rope,0,64,512,0.5,256,48,49,ok", "retrieved 49 is not a whole number from 0 to trials = 48"),
        ("rope,0,64,512,0.5,256,48,0.5,ok", "retrieved must be a whole number"),
        ("rope,0,64,512,0.5,256,0,0,ok", "trials must be positive"),
        ("rope,0,64,512,0.5,256,48,,ok", "status is ok but retrieved is empty"),
        ("learned,0,64,128,0.0,127,48,3,cannot_run", "retrieved 3 is given but status is cannot_run"),
        ("rope,0,64,512,,256,48,3,ok", "line 2: depth is empty"),
        ("rope+yarn,0,64,512,0.5,256,48,12,ok", None),
    ],
)
def test_passkey_loader_checks_each_row(row, message):
    text = "\n".join([PROBE_HEADER, row]) + "\n"
    if message is None:
        (probe_row,) = parse_probes(text)
        assert probe_row.retrieval in (12 / 48, None)
    else:
        with pytest.raises(ValueError, match=message):
            parse_probes(text)


def test_passkey_loader_refuses_a_second_row_for_one_cell():
    row = "rope,0,64,512,0.5,256,48,12,ok"
    with pytest.raises(ValueError, match="line 3: a second row for encoding rope, seed 0, eval_len 512, depth 0.5"):
        parse_probes("\n".join([PROBE_HEADER, row, row]))


def test_loader_needs_the_sidecar_and_names_the_file(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("\n".join([",".join(COLUMNS), *GOOD_ROWS]) + "\n")
    with pytest.raises(ValueError, match="r.csv has no sidecar r.json"):
        load_results(path)
    sidecar_path(path).write_text(json.dumps({"command": "x"}))
    with pytest.raises(ValueError, match="run record is missing mode"):
        load_results(path)
    path.write_text("encoding,seed\nrope,0\n")
    with pytest.raises(ValueError, match="^r.csv: missing column"):
        load_results(path)


@pytest.fixture
def tiny_quick_mode(monkeypatch):
    """``--quick`` at TINY's sizes: these tests are about the command line, not the quick mode's sizes
    (tests/test_lab_runner.py runs the real quick mode through the real command line)."""
    monkeypatch.setattr(experiment, "QUICK", TINY)


def test_command_line_writes_csv_sidecar_and_a_progress_bar(tmp_path, capsys, tiny_quick_mode):
    out = tmp_path / "quick.csv"
    assert (
        experiment.main(
            [
                "--out",
                str(out),
                "--quick",
                "--steps",
                "2",
                "--seeds",
                "5",
                "--jobs",
                "1",
                "--encodings",
                "learned",
                "alibi",
            ]
        )
        == 0
    )
    results = load_results(out)
    record = json.loads(sidecar_path(out).read_text())
    assert record["command"].endswith("--quick --steps 2 --seeds 5 --jobs 1 --encodings learned alibi")
    assert record["seeds"] == [5] and record["config"]["encodings"] == ["learned", "alibi"]
    assert record["mode"] == "quick" and record["config"]["steps"] == 2 and record["run_time_s"] > 0
    assert {"python", "torch", "poslab"} <= set(record["versions"]) and record["probe"].startswith("passkey")
    assert record["cores"] >= 1 and record["load_average"] >= 0
    assert {m.seed for m in results.measurements} == {5} and {p.encoding for p in results.probes} == {
        "learned",
        "alibi",
    }
    stderr = capsys.readouterr().err
    assert "100%" in stderr and "alibi, seed 5: step 2/2" in stderr and "ms CPU" in stderr


def test_command_line_progress_as_json_lines_for_a_program(tmp_path, capsys, tiny_quick_mode):
    out = tmp_path / "quick.csv"
    assert (
        experiment.main(
            [
                "--out",
                str(out),
                "--quick",
                "--steps",
                "10",
                "--jobs",
                "1",
                "--encodings",
                "rope",
                "alibi",
                "--progress",
                "json",
            ]
        )
        == 0
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0] == {
        "fraction": 0.5 * 10 / 10,
        "message": "rope, seed 0: step 10/10; testing",
        "runs_done": 0,
        "runs": 2,
    }
    assert lines[-1] == {"fraction": 1.0, "message": "alibi, seed 0: done", "runs_done": 2, "runs": 2}
    assert [line["runs_done"] for line in lines] == sorted(line["runs_done"] for line in lines)


def test_progress_bar_into_a_file_writes_few_whole_lines():
    stream = io.StringIO()
    with ProgressBar(stream) as bar:
        for step in range(1, 101):
            bar.update(step / 100, f"step {step}")
    lines = stream.getvalue().splitlines()
    assert 1 <= len(lines) <= 3 and lines[-1].startswith("[" + "#" * ProgressBar.WIDTH + "] 100%")


# ---------------------------------------------------------------- the shipped results


def test_shipped_results_cover_every_encoding_length_seed_and_depth():
    results = load_results(experiment.SHIPPED_CSV)
    record = results.record
    plain = {key: tuple(value) if isinstance(value, list) else value for key, value in record.config.items()}
    config = ExperimentConfig(**{"rope_scalings": (), **plain})  # a run made before the arms has none
    arms = [arm for e in config.encodings for arm in config.arms_of(e)]
    kinds = ["passkey"] + (["two_hop"] if record.two_hop else [])
    cells = {(m.encoding, m.seed, m.eval_len): m for m in results.measurements}
    assert set(cells) == {(e, s, n) for e in arms for s in record.seeds for n in config.eval_lens}
    assert len(record.seeds) >= 3 and record.mode == "full"
    assert record.command.startswith("python -m poslab.experiments.extrapolation --out ")
    for (encoding, _, eval_len), m in cells.items():
        past_table = encoding == "learned" and eval_len > config.train_len
        assert (m.status == "cannot_run") == past_table
        assert (m.perplexity is None) == past_table
    assert max(m.accuracy for m in results.measurements if m.eval_len == config.train_len) >= 0.5
    probes = {(p.encoding, p.seed, p.eval_len, p.depth, p.probe): p for p in results.probes}
    assert set(probes) == {
        (e, s, n, d, k)
        for e in arms
        for s in record.seeds
        for n in config.eval_lens
        for d in config.probe_depths
        for k in kinds
    }
    assert all(
        p.trials == config.probe_trials
        and (p.status == "cannot_run") == (p.eval_len > config.train_len and p.encoding == "learned")
        for p in probes.values()
    )
    assert record.probe_chance == pytest.approx(1 / (config.vocab_size - 1))
    # The columns a reader of the first shipped file relied on are still the first six, in order.
    assert experiment.SHIPPED_CSV.read_text().splitlines()[0].split(",")[:6] == list(COLUMNS)


def test_passkey_file_holds_both_probes_apart_and_refuses_an_unknown_one():
    header = PROBE_HEADER + ",probe"
    rows = ["rope,0,64,512,0.5,256,48,12,ok,passkey", "rope,0,64,512,0.5,256,48,3,ok,two_hop"]
    assert [(p.probe, p.retrieved) for p in parse_probes("\n".join([header, *rows]))] == [
        ("passkey", 12),
        ("two_hop", 3),
    ]
    with pytest.raises(ValueError, match="line 2: probe 'three_hop' is not one of passkey, two_hop"):
        parse_probes("\n".join([header, "rope,0,64,512,0.5,256,48,3,ok,three_hop"]))
    with pytest.raises(ValueError, match="a second row for .* probe two_hop"):
        parse_probes("\n".join([header, rows[1], rows[1]]))
