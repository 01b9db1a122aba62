"""Case 1: every page opens with no exception box and no console error, and every chart drew."""

from poslab.lessons import all_lessons
from tests.browser.app_driver import expand_sidebar_nav
from tests.browser.tour import TRAINED_PAGE


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


def test_the_learned_fit_draws_its_tables_when_trained(page_tour):
    """Judged in the page tour (``tour.train``): Train pressed on the lesson once it was judged."""
    trained = page_tour.stop(TRAINED_PAGE).trained
    assert trained.shown, "pressing Train never showed the fit ('Showing the fit for')"
    charts, charts_before = trained.charts, trained.charts_before
    assert len(charts) >= charts_before + 5, f"pressing Train showed {len(charts) - charts_before} of 5 charts"
    assert all(chart["marks"] or chart["painted"] for chart in charts), charts
    assert not trained.exceptions and not page_tour.console_errors, (trained.exceptions, page_tour.console_errors)
