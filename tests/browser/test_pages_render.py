"""Case 1: every page opens with no exception box and no console error, and every chart drew."""

from poslab.lessons import all_lessons
from tests.browser.app_driver import exception_boxes, expand_sidebar_nav, go_to, open_app, wait_for_charts


def sidebar_titles(page) -> list[str]:
    expand_sidebar_nav(page)
    # A link's text is "<icon ligature>\n\n<title>": keep the title.
    return [link.inner_text().strip().splitlines()[-1] for link in page.locator('[data-testid="stSidebarNav"] a').all()]


def test_every_page_renders_cleanly_and_draws_its_charts(page_tour):
    titles = page_tour.titles
    assert {lesson.title for lesson in all_lessons()} <= set(titles), titles
    problems = []
    charts_seen = 0
    for stop in page_tour.stops:
        if stop.exceptions:
            problems.append(f"{stop.title}: exception shown: {stop.exceptions[0][:300]}")
        for chart in stop.charts:
            charts_seen += 1
            if chart["marks"] == 0 and chart["painted"] == 0:
                problems.append(f"{stop.title}: chart #{chart['index']} drew nothing")
    problems += [f"console: {error}" for error in page_tour.console_errors]
    assert not problems, "\n".join(problems)
    assert charts_seen > 0, "no page showed a chart: the chart check checked nothing"


def test_no_chart_title_is_cut_off_on_any_page(page_tour):
    """Each chart title's box (Vega's SVG text) lies inside its chart's box: no line is cut at the top."""
    clipped = [f"{stop.title}: {title}" for stop in page_tour.stops for title in stop.clipped_titles]
    assert not clipped, "\n".join(clipped)
    assert any(stop.title == "Positions in an inference engine" and stop.charts for stop in page_tour.stops)


def test_the_learned_fit_draws_its_tables_when_trained(page, app_url):
    open_app(page, app_url)
    go_to(page, "Learned embeddings")
    charts_before = len(wait_for_charts(page))
    page.get_by_role("button", name="Train (a second or so)").click()
    page.get_by_text("Showing the fit for").first.wait_for(timeout=60_000)
    # The fit shows two tables, two similarity maps and the loss curve.
    charts = wait_for_charts(page, timeout_ms=30_000, minimum=charts_before + 5)
    assert len(charts) >= charts_before + 5, f"pressing Train showed {len(charts) - charts_before} of 5 charts"
    assert all(chart["marks"] or chart["painted"] for chart in charts), charts
    assert not exception_boxes(page) and not page.console_log.errors
