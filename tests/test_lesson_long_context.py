"""The long-context page: a KV cache, packed documents and partial rotary follow their widgets."""

from tests.app_harness import chart_titles, metrics, numbers

LESSON = "long-context"


def positions(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Positions: "))


def test_a_correct_cache_matches_the_full_pass_and_rotating_again_drifts_from_step_2(lesson_page):
    at = lesson_page(LESSON)
    assert not at.exception and len(chart_titles(at)) == 3
    shown = metrics(at)
    assert float(shown["max |cached - full pass| over all scores"]) < 1e-12
    assert shown["first decode step that differs"] == "none"
    assert numbers(at, 0).shape == (16, 16)
    at.radio(key="lc-mode").set_value("re-rotated every step").run()
    shown = metrics(at)
    # Step 1 re-rotates only key 0, at position 0 (no change); step 2 re-rotates key 1 by theta.
    assert not at.exception and shown["first decode step that differs"] == "2"
    assert float(shown["max |cached - full pass| over all scores"]) > 0.1
    assert "(re-rotated every step)" in chart_titles(at)[0]
    at.slider(key="lc-seq-len").set_value(6).run()
    assert not at.exception and numbers(at, 0).shape == (6, 6)


def test_packed_positions_restart_per_document_and_not_resetting_leaks(lesson_page):
    at = lesson_page(LESSON)
    assert positions(at) == "Positions: 0, 1, 2, 3, 4, 0, 1, 2, 3, 0, 1, 2"
    shown = metrics(at)
    assert shown["largest attention weight on other documents"] == "0.000"
    assert float(shown["max |packed output - document alone|"]) < 1e-12
    at.toggle(key="lc-reset").set_value(False).run()
    shown = metrics(at)
    assert not at.exception and positions(at) == "Positions: " + ", ".join(str(p) for p in range(12))
    assert float(shown["largest attention weight on other documents"]) > 0.01
    assert float(shown["max |packed output - document alone|"]) > 0.01
    weights = numbers(at, 1).to_numpy()
    assert weights[11, :5].sum() > 0  # the last document's last token attends to the first document
    at.toggle(key="lc-reset").set_value(True).run()
    at.number_input(key="lc-doc-0").set_value(2).run()
    assert not at.exception and positions(at) == "Positions: 0, 1, 0, 1, 2, 3, 0, 1, 2"
    weights = numbers(at, 1).to_numpy()
    assert weights.shape == (9, 9) and weights[2:, :2].sum() == 0  # no weight on the first document


def test_partial_rotary_keeps_the_unrotated_part_of_the_score_constant(lesson_page):
    at = lesson_page(LESSON)
    assert chart_titles(at)[2] == "Partial rotary: 64 of 256 features rotated"  # GPT-J
    parts = numbers(at, 2)
    content = parts[parts["part"].str.startswith("unrotated")]["score"]
    rotated = parts[parts["part"] == "rotated features"]["score"]
    assert len(content) == 101 and content.nunique() == 1 and rotated.nunique() > 1
    at.selectbox(key="lc-model").set_value("GPT-NeoX-20B").run()
    assert not at.exception and chart_titles(at)[2] == "Partial rotary: 24 of 96 features rotated"
    at.slider(key="lc-rotary-GPT-NeoX-20B").set_value(96).run()
    parts = numbers(at, 2)
    assert not at.exception and (parts[parts["part"].str.startswith("unrotated")]["score"] == 0).all()
