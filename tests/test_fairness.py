"""The five problems issue 11 measured, one test each (each failed on the grader before the fix).

1. an IndexError from an explicit length check, and a finite future mask (finfo.min, -1e4), cost points;
2. one deviation cost several tests (a buffer table 16 of 20 points, a numpy table 20 of 20, a
   finite mask also the two slope-value tests);
3. the grader's own exceptions were reported as "your code raised";
4. a syntax error read as eight "not implemented" failures and counted in the pass rates;
5. a flipped RoPE sign lost hidden points that nothing accounted for.

The submissions are files of the corpus (tests/corpus, see its README), graded in the sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.api import Grader, load_submission
from grader.gradebook import gradescope_test_rows, per_test_rows
from grader.mutants import get_mutant
from grader.results import SubmissionResult
from tests.corpus.bugs import BUGS
from tests.grading_fixtures import on_the_warm_worker

CORPUS = Path(__file__).parent / "corpus"
RAISED = "your code raised"


@pytest.fixture(scope="module")
def grading(warm_grader):
    return warm_grader


def grade(grading: Grader, files: dict[str, str], exercises: list[str], name: str = "fairness") -> SubmissionResult:
    return grading.grade(load_submission(files, name, grading.settings), exercises=exercises)


def corpus_file(name: str) -> dict[str, str]:
    path = next((CORPUS / "correct").glob(f"{name}_*.py"), None)
    source = (
        path.read_text(encoding="utf-8") if path else next(b for b in BUGS if b.name.startswith(f"{name}_")).source()
    )
    return {"solution.py": source}


def failed(result: SubmissionResult) -> dict[str, str]:
    return {test.name: test.output for test in result.tests if test.status != "passed"}


def test_index_error_from_an_explicit_check_gets_full_marks_and_a_lookup_error_does_not(grading):
    for name in ("c05", "c18"):  # IndexError from an explicit check, before any lookup
        result = grade(grading, corpus_file(name), ["learned"])
        assert failed(result) == {}, name
    unchecked = grade(grading, corpus_file("b23"), ["learned"])  # nn.Embedding's own IndexError
    assert set(failed(unchecked)) == {
        "learned: too long raises value error",
        "learned: too long message names both numbers",
    }
    assert "from inside the lookup" in failed(unchecked)["learned: too long raises value error"]


def test_finite_future_mask_is_accepted_and_the_slope_tests_do_not_fail_for_it(grading):
    for name in ("c02", "c06", "c16"):  # finfo(float32).min, finfo(dtype).min, -10000.0
        assert failed(grade(grading, corpus_file(name), ["alibi"])) == {}, name
    open_future = grade(grading, corpus_file("b24"), ["alibi"])  # -m |i - j|: right below the diagonal
    assert set(failed(open_future)) == {"alibi: causal mask"}
    weak = grade(grading, {"solution.py": get_mutant("alibi_mask_not_low_enough").source}, ["alibi"])  # -1e3
    assert set(failed(weak)) == {"alibi: causal mask"}


def test_a_buffer_table_loses_only_one_trainable_table_and_a_numpy_table_only_the_type_test(grading):
    buffered = failed(grade(grading, corpus_file("b09"), ["learned"]))
    assert set(buffered) == {"learned: one trainable table"}
    assert "a buffer of that shape was found" in buffered["learned: one trainable table"]
    numpy_table = failed(grade(grading, corpus_file("b07"), ["sinusoidal"]))
    assert set(numpy_table) == {"sinusoidal: shape and dtype"}
    assert "returned a numpy.ndarray, not a torch.Tensor" in numpy_table["sinusoidal: shape and dtype"]


def test_the_graders_own_findings_are_never_reported_as_the_students_exceptions(grading):
    outputs = {
        **failed(grade(grading, corpus_file("b07"), ["sinusoidal"])),
        **failed(grade(grading, corpus_file("b09"), ["learned"])),
    }
    unregistered = failed(
        grade(grading, {"solution.py": get_mutant("learned_table_not_registered").source}, ["learned"])
    )
    forward = unregistered["learned: forward adds the first rows"]
    assert forward.startswith("The grader could not check that") and "no parameter (and no buffer)" in forward
    for name, output in {**outputs, **unregistered}.items():
        if name != "learned: meta device":  # the one the student's own code raised (a CPU tensor on meta)
            assert RAISED not in output, (name, output)
    assert not any("(pairs)" in output or "(halves)" in output for output in outputs.values())


def test_a_syntax_error_gives_one_message_and_counts_in_no_pass_rate(grading):
    result = grade(
        grading, {"rope.py": "def apply_rope(x:\n    return x\n", "alibi.py": "import torch\n"}, ["rope", "attention"]
    )
    assert result.status == "import_failed"
    assert result.messages == ("rope.py could not be imported: SyntaxError on line 1: '(' was never closed.",)
    assert result.exercise_status("rope") == result.exercise_status("attention") == "did_not_import"
    assert not any("not implemented" in test.output for test in result.tests)
    assert {test.status for test in result.tests} == {"did_not_import"}
    feedback = result.feedback("rope")
    assert feedback.import_messages == result.messages and feedback.hidden_losses == ()
    assert per_test_rows(result) == () and gradescope_test_rows(result.to_gradescope()) == []
    # Round trips keep it (the CLI reads results.json back; the store keeps to_dict()).
    assert SubmissionResult.from_gradescope(result.to_gradescope()).exercise_status("rope") == "did_not_import"
    assert SubmissionResult.from_json(result.to_json()) == result


def test_every_point_a_flipped_rope_sign_loses_is_accounted_for(grading):
    result = grade(grading, corpus_file("b13"), ["rope"])
    feedback = result.feedback("rope")
    visible_lost = sum(test.max_score - test.score for test in feedback.visible)
    hidden_lost = sum(loss.points for loss in feedback.hidden_losses)
    assert feedback.max_score - feedback.score == visible_lost + hidden_lost > visible_lost
    assert [(loss.family, loss.failed, loss.points) for loss in feedback.hidden_losses] == [("values", 1, 4.0)]
    assert feedback.hidden_summary() == "hidden tests: 1 about values failed, 4 points"
    assert "rope: hidden tests: 1 about values failed, 4 points." in result.to_gradescope()["output"]
    # Never a hidden test's name, input or message in what the student is shown about it.
    hidden_names = [test.name for test in result.tests if test.visibility == "hidden"]
    assert not any(name in feedback.hidden_summary() for name in hidden_names)


VALUE_READING = (
    # learned: an explicit check that reads the positions' values and raises IndexError
    (
        "        require(\n            seq_len <= self.max_len,",
        "        if int(torch.arange(seq_len, device=x.device).max()) >= self.max_len:\n"
        '            raise IndexError(f"sequence length {seq_len} is past the table (max_len {self.max_len})")\n'
        "        require(\n            seq_len <= self.max_len,",
    ),
    # attention: a branch on the bias's values (a fully masked row), as tiled kernels take
    (
        "    require(q.dim() >= 2 and k.dim() >= 2 and v.dim() >= 2,",
        '    if bias is not None and bool(torch.isinf(bias).all()):\n        raise ValueError("every key is masked")\n'
        "    require(q.dim() >= 2 and k.dim() >= 2 and v.dim() >= 2,",
    ),
)


def test_the_meta_device_judges_devices_only_where_code_can_run_without_values(grading):
    """Issue 23, batch 3: a test that judged "keeps x's device" on the meta device failed correct code that reads
    values (b3c05 sizes its cos/sin cache from positions.max()); it still catches a tensor built on the CPU (b3b06)."""
    from grader.mutants import apply_patches, reference_source

    batch3 = CORPUS / "batch3"
    reads_values = grade(
        grading, {"solution.py": (batch3 / "correct" / "b3c05_vllm_cos_sin_cache.py").read_text()}, ["rope"]
    )
    assert failed(reads_values) == {}
    on_the_cpu = grade(
        grading, {"solution.py": (batch3 / "bugs" / "b3b06_rope_default_positions_on_cpu.py").read_text()}, ["rope"]
    )
    assert set(failed(on_the_cpu)) == {"rope: meta device"}
    source = apply_patches(reference_source(), VALUE_READING, "value-reading checks")
    assert failed(grade(grading, {"solution.py": source}, ["attention", "learned"])) == {}


def test_code_that_raises_everywhere_earns_nothing(grading):
    """A test that cannot judge a case (code that reads values on the meta device, a call that raises in every
    layout) gives no point for it: a submission whose every function raises scores 0 in every exercise."""
    from poslab.exercises import EXERCISES

    names = sorted({name for exercise in EXERCISES for name in exercise.names})
    raising = "(*args, **kwargs):\n{indent}raise RuntimeError('nothing here')\n"
    source = "".join(
        f"\n\nclass {name}:\n    def __init__(self, " + raising.format(indent=" " * 8)[1:]
        if name[0].isupper()
        else f"\n\ndef {name}" + raising.format(indent=" " * 4)
        for name in names
    )
    result = grade(grading, {"solution.py": source}, [exercise.id for exercise in EXERCISES])
    assert result.status == "graded" and all(test.status != "did_not_import" for test in result.tests)
    assert result.score == 0, {test.name: test.output for test in result.tests if test.status == "passed"}


def test_a_numpy_attention_factor_costs_the_type_test_alone(grading):
    """Batch 5's review: a right attention_factor returned as numpy.float64 (0.1 * np.log(s) + 1) lost the
    value tests too, each saying it was not a number. Its value is judged as a number; the spec's "a Python
    float" is the contract test's, whose message names the type."""
    from grader.mutants import reference_source

    source = reference_source() + (
        "\n\nimport numpy as _np\n_scaled_inv_freq = scaled_inv_freq\n\n\n"
        "def scaled_inv_freq(head_dim, base=10000.0, scaling=None, seq_len=None):\n"
        "    inv_freq, attention_factor = _scaled_inv_freq(head_dim, base, scaling, seq_len)\n"
        "    return inv_freq, _np.float64(attention_factor)\n"
    )
    lost = failed(grade(grading, {"solution.py": source}, ["extend"]))
    assert set(lost) == {"extend: returns float32 frequencies and a float"}
    assert "got numpy.float64" in next(iter(lost.values()))


def test_a_hang_in_one_call_costs_that_test_alone(grading):
    """Batch 6's review: a call that never returned used up the exercise's whole time, so every later test
    failed too. One call now waits half the exercise's time at most, and the later tests run in a fresh child
    with the time left: the exercise still takes no longer than its limit."""
    from grader.mutants import reference_source

    source = reference_source() + (
        "\n\n_sinusoidal_encoding = sinusoidal_encoding\n\n\n"
        "def sinusoidal_encoding(seq_len, d_model, base=10000.0):\n"
        "    while seq_len == 100_001:  # the long-sequence test's length, and no other test's\n"
        "        pass\n"
        "    return _sinusoidal_encoding(seq_len, d_model, base)\n"
    )
    with on_the_warm_worker(grading, timeout=6.0) as short:
        lost = failed(grade(short, {"solution.py": source}, ["sinusoidal"]))
    assert set(lost) == {"sinusoidal: long sequence finite and distinct"}, lost
    assert "one call ran past 3 s, half the 6 s time limit" in next(iter(lost.values()))
