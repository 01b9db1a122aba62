"""Code lesson: the generated program prints what run_demo says, and the page shows it."""

import contextlib
import io

import pytest
import torch

from poslab.encodings import sinusoidal_encoding
from poslab.lessons import get_lesson
from poslab.viz import code_demo as demo
from poslab.viz.common import convention_problems

EXACT = "exact: atol=0, rtol=0"


def printed_by(source: str) -> str:
    """Run the generated program (our own text, in the test process only) and capture its output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<demo>", "exec"), {})  # noqa: S102
    return out.getvalue().strip()


def test_default_source_is_the_seed_program():
    source = demo.demo_source(4, 8, demo.default_order(4), 0)
    # Literal lines of the source lesson.
    assert "P = torch.tensor([[0,0,1,0],[1,0,0,0],[0,0,0,1],[0,1,0,0]]).float()" in source
    assert "X = torch.randn(4, 8)         # 4 tokens, d=8" in source
    assert "print(torch.allclose(P @ out_orig, out_perm, atol=1e-5))" in source


@pytest.mark.parametrize(
    "n_tokens, d_model, order, seed",
    [(4, 8, (2, 0, 3, 1), 0), (6, 16, (5, 4, 3, 2, 1, 0), 3), (2, 2, (1, 0), 9), (8, 64, (1, 2, 3, 4, 5, 6, 7, 0), 42)],
)
@pytest.mark.parametrize("tolerance", list(demo.TOLERANCES))
@pytest.mark.parametrize("positional", [False, True])
def test_the_program_prints_what_the_page_reports(n_tokens, d_model, order, seed, tolerance, positional):
    source = demo.demo_source(n_tokens, d_model, order, seed, tolerance, positional)
    result = demo.run_demo(n_tokens, d_model, order, seed, tolerance, positional)
    assert printed_by(source) == result.output_line


@pytest.mark.parametrize("seed", range(10))
def test_the_seed_tolerance_prints_true_and_positions_print_false(seed):
    assert demo.run_demo(4, 8, demo.SEED_ORDER, seed).printed
    broken = demo.run_demo(4, 8, demo.SEED_ORDER, seed, positional=True)
    assert not broken.printed and broken.max_difference > 1e-2


def test_exact_comparison_usually_fails_on_rounding_alone():
    results = [demo.run_demo(4, 8, demo.SEED_ORDER, seed, EXACT) for seed in range(20)]
    assert sum(not r.printed for r in results) >= 10
    assert all(r.max_difference < 1e-5 for r in results)  # rounding, not a real difference


def test_identity_prints_true_even_exactly_and_with_positions():
    result = demo.run_demo(4, 8, (0, 1, 2, 3), 0, EXACT, positional=True)
    assert result.printed and result.max_difference == 0.0


def test_allowance_used_reads_like_the_verdict():
    for seed in range(10):
        result = demo.run_demo(5, 8, (4, 3, 2, 1, 0), seed, "tight: atol=1e-7, rtol=0")
        assert result.printed == (result.allowance_used <= 1.0)


def test_permutation_matrix_in_the_result_moves_row_order_i_to_slot_i():
    result = demo.run_demo(4, 8, (2, 0, 3, 1), 0)
    assert result.permutation == ((0, 0, 1, 0), (1, 0, 0, 0), (0, 0, 0, 1), (0, 1, 0, 0))


@pytest.mark.parametrize("d_model", [2, 8, 64])
def test_the_demo_encoding_is_the_sinusoidal_encoding(d_model):
    assert torch.allclose(demo.sinusoidal_table(6, d_model), sinusoidal_encoding(6, d_model), atol=1e-6)


def test_bad_orders_are_refused():
    from poslab.viz.permutation import PermutationError

    with pytest.raises(PermutationError):
        demo.demo_source(4, 8, (0, 1, 2), 0)


def test_charts_follow_the_conventions():
    result = demo.run_demo(4, 8, demo.SEED_ORDER, 0)
    assert convention_problems(demo.permutation_chart(result)) == []
    assert convention_problems(demo.difference_chart(result)) == []


def test_lesson_has_three_quick_checks():
    assert len(get_lesson("code").checks) == 3


# ---------------------------------------------------------------- the page


def _output(at) -> str:
    return next(block.value for block in at.code if block.language == "text")


def _program(at) -> str:
    return next(block.value for block in at.code if "import torch" in block.value)


def test_page_prints_the_seeds_true(lesson_page):
    page = lesson_page("code")
    assert _output(page) == "True"
    assert "[[0,0,1,0],[1,0,0,0],[0,0,0,1],[0,1,0,0]]" in _program(page)


def test_page_encoding_toggle_and_tolerance_flip_the_output(lesson_page):
    page = lesson_page("code")
    page.toggle(key="code-pe").set_value(True).run()
    assert _output(page) == "False" and "PE" in _program(page)
    page.toggle(key="code-pe").set_value(False).run()
    page.radio(key="code-tol").set_value(EXACT).run()
    assert _output(page) == "False"  # seed 0: rounding differs (see test above)
    page.radio(key="code-tol").set_value(demo.SEED_TOLERANCE).run()
    assert _output(page) == "True"


def test_page_new_order_changes_the_matrix_and_bad_order_is_explained(lesson_page):
    page = lesson_page("code")
    page.text_input(key="code-order-4").set_value("1 0 3 2").run()
    assert "[[0,1,0,0],[1,0,0,0],[0,0,0,1],[0,0,1,0]]" in _program(page)
    page.text_input(key="code-order-4").set_value("1 0 3").run()
    assert any("3 positions, but there are 4 tokens" in box.value for box in page.error)
    page.slider(key="code-n").set_value(6).run()
    assert not page.exception and "X = torch.randn(6, 8)" in _program(page)
