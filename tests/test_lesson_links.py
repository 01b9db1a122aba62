"""Links: every reading is well-formed, filters work, and the page shows what the filters select."""

import re

from poslab import references
from poslab.lessons import all_lessons, get_lesson

# The arXiv ids the course specification names for these papers (typed here, not read from the TOML).
EXPECTED_ARXIV = {"1706.03762", "1810.04805", "2104.09864", "2108.12409", "2306.15595", "2309.00071", "2305.19466"}


def test_every_required_paper_is_linked_by_its_abs_page():
    urls = {reading.url for reading in references.readings()}
    assert {f"https://arxiv.org/abs/{arxiv_id}" for arxiv_id in EXPECTED_ARXIV} <= urls


def test_every_required_explanation_is_there():
    hosts = " ".join(reading.url for reading in references.readings())
    for needle in (
        "huggingface.co/blog",
        "d2l.ai",
        "nlp.seas.harvard.edu/annotated-transformer",
        "blog.eleuther.ai/rotary-embeddings",
        "nn.labml.ai",
    ):
        assert needle in hosts


def test_readings_are_well_formed():
    for reading in references.readings():
        assert re.fullmatch(r"https://\S+", reading.url), reading.url
        assert reading.kind in references.KINDS and 2015 <= reading.year <= 2026
        assert reading.read_for.strip() and reading.topics
        assert f"]({reading.url})" in reading.markdown


def test_arxiv_links_use_abs_pages_not_pdfs():
    for reading in references.readings():
        if "arxiv.org" in reading.url:
            assert re.fullmatch(r"https://arxiv\.org/abs/\d{4}\.\d{5}", reading.url), reading.url


def test_filters_select_by_kind_and_topic():
    papers = references.select_readings(kind="paper")
    assert papers and all(reading.kind == "paper" for reading in papers)
    rope = references.select_readings(topic="rope")
    assert {reading.title.split(":")[0] for reading in rope} >= {"RoFormer"}
    assert all("rope" in reading.topics for reading in rope)
    both = references.select_readings(kind="explanation", topic="alibi")
    assert [reading.authors for reading in both] == ["labml.ai"]


def test_papers_come_first_then_by_year():
    ordered = references.select_readings()
    keys = [(references.KINDS.index(reading.kind), reading.year) for reading in ordered]
    assert keys == sorted(keys)


def test_topics_are_lessons_in_course_order():
    topics = references.topics()
    assert topics[0] == "position-problem" and "links" not in topics
    for topic in topics:
        get_lesson(topic)


def test_lesson_has_quick_checks():
    assert len(get_lesson("links").checks) >= 2


def _shown(at) -> str:
    return next(caption.value for caption in at.caption if caption.value.startswith("Showing"))


def test_page_lists_every_source_then_filters(lesson_page):
    page = lesson_page("links")
    total = len(references.readings())
    assert _shown(page) == f"Showing {total} of {total} sources."
    page.segmented_control(key="links-kind").set_value("paper").run()
    papers = len(references.select_readings(kind="paper"))
    assert _shown(page) == f"Showing {papers} of {total} sources."
    assert not any(heading.value == "Explanations" for heading in page.header)
    page.pills(key="links-topic").set_value("alibi").run()
    assert _shown(page) == f"Showing {len(references.select_readings('paper', 'alibi'))} of {total} sources."
    assert any("2108.12409" in block.value for block in page.markdown)


def test_the_last_lesson_leads_on_to_the_exercises(lesson_page):
    last = all_lessons()[-1]
    page = lesson_page(last.id)
    targets = {link.proto.label: link.proto.page for link in page.get("page_link")}
    assert targets.get("Next: the exercises") == "exercise", targets  # the page's url_path in app.py
