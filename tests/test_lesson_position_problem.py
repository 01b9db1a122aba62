"""The position problem: permutation parsing, the equivariance experiment, the RNN contrast, the page."""

import pytest
import torch

from poslab.lessons import get_lesson, lesson_text
from poslab.viz import permutation as lab
from poslab.viz.common import convention_problems

DOG = lab.sentence_tokens("the dog bit the man")
SWAP_DOG_AND_MAN = (0, 4, 2, 3, 1)
SWAP_THE_AND_THE = (3, 1, 2, 0, 4)


# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize("text, expected", [("0 4 2 3 1", (0, 4, 2, 3, 1)), (" 4,3, 2 1  0 ", (4, 3, 2, 1, 0))])
def test_typed_orders_parse(text, expected):
    assert lab.parse_order(text, 5) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "Type an order"),
        ("0 1 2", "You gave 3 positions, but there are 5 tokens"),
        ("0 1 2 3 5", "5 is out of range: positions run from 0 to 4"),
        ("0 -1 2 3 4", "-1 is out of range"),
        ("0 1 1 3 4", "1 appears more than once, so 2 is missing"),
        ("0 1 2 3 x", "'x' is not a whole number"),
        ("0 1 2 3 4.5", "'4.5' is not a whole number"),
    ],
)
def test_bad_typed_orders_say_what_is_wrong(text, message):
    with pytest.raises(lab.PermutationError, match=message):
        lab.parse_order(text, 5)


def test_picks_must_be_complete():
    with pytest.raises(lab.PermutationError, match="3 picked so far"):
        lab.order_from_picks((4, 0, 1), 5)
    assert lab.order_from_picks((4, 0, 1, 2, 3), 5) == (4, 0, 1, 2, 3)


@pytest.mark.parametrize("n", range(2, 11))
def test_shuffles_are_permutations_that_move_something(n):
    for draw in range(30):
        order = lab.shuffled_order(n, draw)
        assert sorted(order) == list(range(n)) and order != tuple(range(n))


def test_sentences_tokenise_and_one_word_is_refused():
    assert DOG == ("the", "dog", "bit", "the", "man")
    assert lab.sentence_tokens(lab.RANDOM_TOKENS, 3) == ("tok0", "tok1", "tok2")
    with pytest.raises(lab.PermutationError, match="at least two words"):
        lab.sentence_tokens("dog")


def test_the_default_order_turns_each_preset_into_its_mirror():
    permuted = [DOG[i] for i in lab.suggested_order("the dog bit the man", 5)]
    assert " ".join(permuted) == "the man bit the dog"
    assert lab.suggested_order("my own words here", 4) == (3, 2, 1, 0)


# ---------------------------------------------------------------- the model


def test_embeddings_depend_only_on_seed_and_word():
    assert torch.equal(lab.word_embedding("dog", 8, 0), lab.word_embedding("dog", 8, 0))
    assert not torch.equal(lab.word_embedding("dog", 8, 0), lab.word_embedding("man", 8, 0))
    assert not torch.equal(lab.word_embedding("dog", 8, 0), lab.word_embedding("dog", 8, 1))
    x = lab.embed(DOG, 8, 0)
    assert torch.equal(x[0], x[3])  # both "the"


def test_causal_first_slot_only_sees_itself():
    x = lab.embed(DOG, 16, 3)
    # Under the mask slot 0 attends to itself alone, exactly as in a one-token sequence.
    assert torch.allclose(lab.self_attention(x, 3, causal=True)[0], lab.self_attention(x[:1], 3)[0], atol=1e-6)
    assert not torch.allclose(lab.self_attention(x, 3, causal=False)[0], lab.self_attention(x[:1], 3)[0], atol=1e-3)


# ---------------------------------------------------------------- the experiment


def test_plain_attention_is_equivariant_and_its_rows_just_move():
    result = lab.equivariance_experiment(DOG, SWAP_DOG_AND_MAN)
    assert result.holds and result.max_difference < 1e-5
    outputs = torch.tensor(result.permuted_output)
    assert torch.allclose(outputs[0], outputs[3])  # the two "the" slots get one output
    assert "holds" in result.verdict and "equivariant" in result.verdict


@pytest.mark.parametrize("switches", [{"causal": True}, {"positional": True}, {"causal": True, "positional": True}])
def test_mask_or_encoding_breaks_equivariance(switches):
    result = lab.equivariance_experiment(DOG, SWAP_DOG_AND_MAN, **switches)
    assert not result.holds and result.max_difference > 1e-2
    assert "breaks" in result.verdict


def test_pooling_gives_invariance_and_only_without_mask_or_encoding():
    pooled = lab.equivariance_experiment(DOG, SWAP_DOG_AND_MAN, pooled=True)
    assert pooled.holds and len(pooled.permuted_output) == 1 and "invariant" in pooled.verdict
    assert not lab.equivariance_experiment(DOG, SWAP_DOG_AND_MAN, pooled=True, causal=True).holds
    assert not lab.equivariance_experiment(DOG, SWAP_DOG_AND_MAN, pooled=True, positional=True).holds


def test_random_tokens_and_larger_models_behave_the_same():
    tokens = lab.sentence_tokens(lab.RANDOM_TOKENS, 9)
    order = lab.shuffled_order(9, 4)
    assert lab.equivariance_experiment(tokens, order, d_model=64, seed=11).holds
    assert not lab.equivariance_experiment(tokens, order, d_model=64, seed=11, causal=True).holds


def test_swapping_identical_tokens_changes_nothing_until_positions_matter():
    assert lab.equivariance_experiment(DOG, SWAP_THE_AND_THE).max_difference == 0.0
    assert not lab.equivariance_experiment(DOG, SWAP_THE_AND_THE, causal=True).holds
    assert not lab.equivariance_experiment(DOG, SWAP_THE_AND_THE, positional=True).holds


def test_identity_order_holds_with_everything_on():
    result = lab.equivariance_experiment(DOG, (0, 1, 2, 3, 4), positional=True, causal=True)
    assert result.holds and result.explanation_key == "why-identity"


def test_every_outcome_has_its_explanation_in_the_lesson_text():
    keys = {
        lab.equivariance_experiment(DOG, order, positional=p, causal=c, pooled=pool).explanation_key
        for order in (SWAP_DOG_AND_MAN, (0, 1, 2, 3, 4))
        for p in (False, True)
        for c in (False, True)
        for pool in (False, True)
    }
    assert keys == {
        "why-identity",
        "why-equivariant",
        "why-invariant",
        "why-positional",
        "why-causal",
        "why-positional-and-causal",
    }
    for key in keys:
        assert lesson_text("position-problem", key).strip()


def test_invalid_order_is_refused_by_the_experiment():
    with pytest.raises(lab.PermutationError):
        lab.equivariance_experiment(DOG, (0, 1, 2))


def test_comparison_charts_follow_the_conventions_and_label_slots():
    result = lab.equivariance_experiment(DOG, SWAP_DOG_AND_MAN)
    charts = lab.comparison_charts(result)
    assert [convention_problems(chart) for chart in charts] == [[], [], []]
    assert list(dict.fromkeys(charts[0].data["row_label"])) == ["0 the", "1 man", "2 bit", "3 the", "4 dog"]
    pooled = lab.comparison_charts(lab.equivariance_experiment(DOG, SWAP_DOG_AND_MAN, pooled=True))
    assert set(pooled[0].data["row_label"]) == {"0 mean over tokens"}


# ---------------------------------------------------------------- the RNN contrast


def test_rnn_tells_the_sentences_apart_and_pooled_attention_does_not():
    contrast = lab.recurrence_contrast(DOG, SWAP_DOG_AND_MAN)
    assert contrast.rnn_tells_apart and contrast.rnn_difference > 1e-2
    assert not contrast.attention_tells_apart
    summary = contrast.summary()
    assert list(summary["tells the two orders apart"]) == [True, False]
    rnn_chart, attention_chart = lab.contrast_charts(contrast)
    assert convention_problems(rnn_chart) == [] and convention_problems(attention_chart) == []
    assert len(rnn_chart.data) == 2 * lab.RNN_HIDDEN  # both orders, every hidden unit


def test_rnn_cannot_see_a_swap_of_identical_tokens():
    assert lab.recurrence_contrast(DOG, SWAP_THE_AND_THE).rnn_difference == 0.0


def test_rnn_state_is_a_tanh_vector_that_depends_on_order():
    x = lab.embed(DOG, 8, 0)
    first = lab.rnn_final_state(x[:1], 0)
    assert first.shape == (lab.RNN_HIDDEN,) and torch.all(first.abs() < 1)  # tanh keeps it in (-1, 1)
    assert not torch.allclose(lab.rnn_final_state(x[[1, 2]], 0), lab.rnn_final_state(x[[2, 1]], 0))


# ---------------------------------------------------------------- content


def test_lesson_has_three_quick_checks_including_the_causal_mask():
    checks = get_lesson("position-problem").checks
    assert len(checks) == 3 and any("causal mask" in check.question for check in checks)


# ---------------------------------------------------------------- the page


def _verdicts(at):
    return [box.value for box in at.success] + [box.value for box in at.warning]


def test_page_shows_the_equivariance_verdict(lesson_page):
    page = lesson_page("position-problem")
    assert any("attn(PX) = P·attn(X) holds" in verdict for verdict in _verdicts(page))


def test_page_mask_toggle_flips_the_verdict(lesson_page):
    page = lesson_page("position-problem")
    page.toggle(key="pp-causal").set_value(True).run()
    assert not page.exception and any("breaks" in verdict for verdict in _verdicts(page))
    page.toggle(key="pp-causal").set_value(False).run()
    assert any("holds" in verdict for verdict in _verdicts(page))


def test_page_pooling_and_encoding_toggles_change_the_claim(lesson_page):
    page = lesson_page("position-problem")
    page.toggle(key="pp-pooled").set_value(True).run()
    assert any("mean(attn(PX)) = mean(attn(X)) holds" in verdict for verdict in _verdicts(page))
    page.toggle(key="pp-positional").set_value(True).run()
    assert any("mean(attn(PX)) = mean(attn(X)) breaks" in verdict for verdict in _verdicts(page))
    page.toggle(key="pp-pooled").set_value(False).run()
    page.toggle(key="pp-positional").set_value(False).run()


def test_page_bad_order_is_explained_and_a_new_order_changes_the_numbers(lesson_page):
    page = lesson_page("position-problem")
    order_box = next(box for box in page.text_input if box.key.startswith("pp-order-"))
    order_box.set_value("0 1 1 3 4").run()
    assert any("appears more than once" in box.value for box in page.error)
    order_box.set_value("3 1 2 0 4").run()
    assert not page.error and any("largest difference 0," in verdict for verdict in _verdicts(page))
    order_box.set_value("0 4 2 3 1").run()
    assert not any("largest difference 0," in verdict for verdict in _verdicts(page))


def test_page_shuffle_and_random_tokens_run(lesson_page):
    page = lesson_page("position-problem")
    page.segmented_control(key="pp-how").set_value("shuffle").run()
    before = [m.value for m in page.markdown if m.value.startswith("**X:**")]
    page.button(key="pp-shuffle").click().run()
    after = [m.value for m in page.markdown if m.value.startswith("**X:**")]
    assert not page.exception and before != after
    page.selectbox(key="pp-sentence").set_value(lab.RANDOM_TOKENS).run()
    assert not page.exception and any("tok0" in m.value for m in page.markdown)


# ---------------------------------------------------------------- comments under the lesson


def _post(at, text: str):
    at.text_area(key="comment-text-position-problem").input(text)
    next(b for b in at.button if b.label == "Post").click().run()
    return at


def test_a_student_deletes_her_own_comment_but_not_anothers(lesson_page, app_env):
    from poslab.store import Store

    Store(app_env).add_comment("Bob", "position-problem", "Bob's note")
    at = _post(lesson_page("position-problem", student="Ann"), "my own note")
    deletes = [b for b in at.button if b.label == "Delete"]
    assert len(deletes) == 1 and "Ann" in deletes[0].help  # hers only, not Bob's
    deletes[0].click().run()
    assert [comment.text for comment in Store(app_env).comments("position-problem")] == ["Bob's note"]


def test_an_empty_comment_says_why_nothing_was_posted_under_the_box(lesson_page, app_env):
    from poslab.store import Store

    at = _post(lesson_page("position-problem", student="Ann"), "   ")
    assert any("Nothing was posted: the comment is empty" in box.value for box in at.warning)
    assert Store(app_env).comments("position-problem") == ()
