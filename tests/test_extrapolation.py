"""Extrapolation experiment: the task by hand, training that learns, learned tables that cannot run,
determinism, the CSV/JSON format and its loader's refusals, the CLI and the shipped results."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from poslab.experiments import extrapolation as experiment
from poslab.experiments.terminal_progress import ProgressBar
from poslab.experiments.results import (
    COLUMNS,
    ExtrapolationResults,
    load_results,
    parse_measurements,
    save_results,
    sidecar_path,
)
from poslab.experiments.tasks import IGNORE, recall_targets
from poslab.experiments.tiny_transformer import ENCODINGS, CannotRun, ModelConfig, TinyDecoder

# Small enough for a test: 16-token sequences over 8 symbols (chance 1/8).
TINY = replace(experiment.FULL, seeds=(0,), train_len=16, vocab_size=8, steps=150, warmup_steps=20,
               eval_tokens=2_048)


def test_recall_targets_by_hand():
    tokens = torch.tensor([[7, 3, 9, 3, 5, 9], [4, 4, 4, 1, 4, 1]])
    expected = torch.tensor([[IGNORE, IGNORE, IGNORE, 9, IGNORE, 3],
                             [IGNORE, 4, 4, IGNORE, 1, 4]])  # the most recent match wins: 4 at t=2 -> 1
    assert torch.equal(recall_targets(tokens), expected)


def test_training_learns_the_task_at_the_training_length():
    with experiment.fixed_threads(1):
        model = experiment.train_model(TINY, "rope", seed=0)
        accuracy = experiment.evaluate(model, TINY, TINY.train_len, seed=0)
    assert accuracy >= 0.5, f"RoPE reached only {accuracy:.2f} (chance {TINY.chance_accuracy:.2f})"


def test_same_seed_gives_the_same_numbers_and_leaves_the_global_rng_alone():
    config = replace(TINY, steps=5, encodings=("alibi", "learned"))
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    first = experiment.run_experiment(config, "quick", "test")
    after = torch.rand(1)
    second = experiment.run_experiment(config, "quick", "test")
    assert first.measurements == second.measurements
    assert torch.equal(before, after), "training consumed the caller's global random numbers"


def test_parallel_runs_give_the_same_numbers_as_one_process():
    config = replace(TINY, steps=5, seeds=(0, 1), encodings=("alibi", "rope"))
    serial = experiment.run_experiment(config, "quick", "test", jobs=1)
    pooled = experiment.run_experiment(config, "quick", "test", jobs=2)
    assert pooled.measurements == serial.measurements
    assert len(serial.measurements) == 2 * 2 * len(config.eval_lens)


def test_learned_table_refuses_lengths_past_its_rows():
    model = TinyDecoder(ModelConfig("learned", vocab_size=8, max_len=16))
    with pytest.raises(CannotRun, match="no embedding for position 16"):
        experiment.evaluate(model, TINY, 32, seed=0)
    with pytest.raises(ValueError, match="cannot run"):
        model(torch.zeros(1, 17, dtype=torch.long))
    rows = experiment.evaluate_all(model, TINY, "learned", seed=0)
    assert [(m.eval_len, m.status, m.accuracy is None) for m in rows] == [
        (16, "ok", False), (32, "cannot_run", True), (64, "cannot_run", True), (128, "cannot_run", True)]


@pytest.mark.parametrize("encoding", [e for e in ENCODINGS if e != "learned"])
def test_other_encodings_run_at_any_length(encoding):
    model = TinyDecoder(ModelConfig(encoding, vocab_size=8, max_len=16)).eval()
    assert model.longest_sequence is None
    assert model(torch.zeros(2, 40, dtype=torch.long)).shape == (2, 40, 8)


def test_learning_rate_warms_up_then_decays_to_a_tenth():
    config = replace(TINY, steps=100, warmup_steps=10)
    factors = [experiment.learning_rate_factor(step, config) for step in range(100)]
    assert factors[0] == pytest.approx(0.1) and factors[9] == pytest.approx(1.0)
    assert factors[10] == pytest.approx(1.0) and factors[-1] == pytest.approx(0.1, abs=1e-3)
    assert all(a >= b for a, b in zip(factors[10:], factors[11:]))


def test_results_round_trip_through_csv_and_json(tmp_path):
    config = replace(TINY, steps=2)
    results = experiment.run_experiment(config, "quick", "test command")
    assert {(m.encoding, m.eval_len) for m in results.measurements} == {
        (e, n) for e in ENCODINGS for n in config.eval_lens}
    assert ExtrapolationResults.from_json(results.to_json()) == results
    save_results(results, tmp_path / "r.csv")
    loaded = load_results(tmp_path / "r.csv")
    assert loaded.record == results.record
    assert [(m.encoding, m.eval_len, m.status) for m in loaded.measurements] == [
        (m.encoding, m.eval_len, m.status) for m in results.measurements]
    for saved, original in zip(loaded.measurements, results.measurements):
        assert (saved.accuracy is None) == (original.accuracy is None)
        if saved.accuracy is not None:
            assert saved.accuracy == pytest.approx(original.accuracy, abs=1e-4)
    assert (tmp_path / "r.csv").read_text().splitlines()[0] == ",".join(COLUMNS)


GOOD_ROWS = ["rope,0,64,64,0.9,ok", "learned,0,64,128,,cannot_run"]


@pytest.mark.parametrize("header, rows, message", [
    ("encoding,seed,train_len,eval_len,status", ["rope,0,64,64,ok"], "missing column.*accuracy"),
    (",".join(COLUMNS) + ",note", [r + ",x" for r in GOOD_ROWS], "columns must be exactly"),
    (",".join(COLUMNS), ["rope,0,64,64,0.9,fine"], "line 2: status 'fine' is not one of ok, cannot_run"),
    (",".join(COLUMNS), ["rope,0,64,64,1.2,ok"], r"line 2: accuracy 1.2 is outside \[0, 1\]"),
    (",".join(COLUMNS), ["rope,0,64,64,-0.1,ok"], r"line 2: accuracy -0.1 is outside \[0, 1\]"),
    (",".join(COLUMNS), ["rope,0,64,64,nan,ok"], r"outside \[0, 1\]"),
    (",".join(COLUMNS), [GOOD_ROWS[0], "learned,0,64,128,0.5,cannot_run"], "line 3: accuracy 0.5 is given but"),
    (",".join(COLUMNS), ["rope,0,64,64,,ok"], "line 2: status is ok but accuracy is empty"),
    (",".join(COLUMNS), ["xpos,0,64,64,0.5,ok"], "line 2: unknown encoding 'xpos'"),
    (",".join(COLUMNS), ["rope,zero,64,64,0.5,ok"], "line 2: seed must be a whole number"),
    (",".join(COLUMNS), ["rope,0,64,64,high,ok"], "line 2: accuracy must be a number or empty"),
    (",".join(COLUMNS), ["rope,0,64,64,0.5"], "line 2: expected 6 fields"),
    (",".join(COLUMNS), [GOOD_ROWS[0], GOOD_ROWS[0]], "line 3: a second row for encoding rope"),
    (",".join(COLUMNS), [], "header but no rows"),
    ("", [], "the file is empty"),
])
def test_loader_rejects_malformed_csv_saying_what_is_wrong(header, rows, message):
    with pytest.raises(ValueError, match=message):
        parse_measurements("\n".join([header, *rows]) + "\n")


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


def test_command_line_writes_csv_sidecar_and_a_progress_bar(tmp_path, capsys):
    out = tmp_path / "quick.csv"
    assert experiment.main(["--out", str(out), "--quick", "--steps", "2", "--seeds", "5", "--jobs", "1"]) == 0
    results = load_results(out)
    record = json.loads(sidecar_path(out).read_text())
    assert record["command"].endswith("--quick --steps 2 --seeds 5 --jobs 1") and record["seeds"] == [5]
    assert record["mode"] == "quick" and record["config"]["steps"] == 2 and record["run_time_s"] > 0
    assert {"python", "torch", "poslab"} <= set(record["versions"])
    assert {m.seed for m in results.measurements} == {5}
    stderr = capsys.readouterr().err
    assert "100%" in stderr and "alibi, seed 5: step 2/2" in stderr and "ms CPU" in stderr


def test_progress_bar_into_a_file_writes_few_whole_lines():
    stream = io.StringIO()
    with ProgressBar(stream) as bar:
        for step in range(1, 101):
            bar.update(step / 100, f"step {step}")
    lines = stream.getvalue().splitlines()
    assert 1 <= len(lines) <= 3 and lines[-1].startswith("[" + "#" * ProgressBar.WIDTH + "] 100%")


# ---------------------------------------------------------------- the shipped results


def test_shipped_results_cover_every_encoding_length_and_seed():
    results = load_results(experiment.SHIPPED_CSV)
    record = results.record
    config = experiment.ExperimentConfig(**{key: tuple(value) if isinstance(value, list) else value
                                            for key, value in record.config.items()})
    cells = {(m.encoding, m.seed, m.eval_len): m for m in results.measurements}
    assert set(cells) == {(e, s, n) for e in ENCODINGS for s in record.seeds for n in config.eval_lens}
    assert len(record.seeds) >= 3 and record.mode == "full"
    assert record.command.startswith("python -m poslab.experiments.extrapolation --out ")
    for (encoding, _, eval_len), m in cells.items():
        past_table = encoding == "learned" and eval_len > config.train_len
        assert (m.status == "cannot_run") == past_table
    assert max(m.accuracy for m in results.measurements if m.eval_len == config.train_len) >= 0.5
