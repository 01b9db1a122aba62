"""Every page at 800 px (a laptop with two windows: the sidebar open, a 500 px page beside it): the main
area never scrolls sideways, nothing in it cuts its content off (a label, a metric, a link, a button, a
chart's text ending in an ellipsis), and the Exercises buttons show their whole labels.

"Cuts its content": an element that clips (overflow hidden or clip) holding content wider than itself.
An element that scrolls sideways by design (a table, a code block, the editor's frame) is left out with
what it holds; content that overflows visibly is caught where it makes the page scroll.

Judged in the page tour (``tour.py``): each page, after its checks at 1400 px, is resized to 800 px
in place (Streamlit's layout and Vega's charts follow the viewport's width) and measured here.
"""

from __future__ import annotations

NARROW = 800
EXERCISE_BUTTONS = ("Run the public tests", "Submit for grading", "Reset to the starter code", "Download")

CUT_JS = """() => {
    const main = document.querySelector('[data-testid="stMainBlockContainer"]');
    const problems = [];
    const name = el => { const parts = [];
        for (let e = el; e && e !== main && parts.length < 3; e = e.parentElement) {
            const id = e.getAttribute('data-testid'); parts.push(e.tagName.toLowerCase() + (id ? `[${id}]` : ''));
        }
        return parts.join(' < '); };
    for (const box of [document.querySelector('[data-testid="stMain"]'), main])
        if (box.scrollWidth > box.clientWidth + 1)
            problems.push(`${box.getAttribute('data-testid')} scrolls sideways: ${box.scrollWidth} px in ${box.clientWidth} px`);
    const walk = element => {
        for (const child of element.children) {
            const style = getComputedStyle(child);
            if (['auto', 'scroll'].includes(style.overflowX) || child.tagName === 'IFRAME' || child instanceof SVGElement
                || child.classList.contains('katex')) continue;  // scrolls by design; drawn by Vega; typeset maths
            const tiny = child.getBoundingClientRect().width <= 2;
            if (tiny && ['absolute', 'fixed'].includes(style.position)) continue;  // visually hidden text
            if (!tiny && ['hidden', 'clip'].includes(style.overflowX) && child.scrollWidth > child.clientWidth + 1)
                problems.push(`${name(child)} cuts ${JSON.stringify((child.innerText || '').slice(0, 60))} `
                              + `(${child.scrollWidth} px in ${child.clientWidth} px)`);
            walk(child);
        }
    };
    walk(main);
    for (const text of main.querySelectorAll('[data-testid="stVegaLiteChart"] svg text'))
        if (text.textContent.endsWith('…')) problems.push(`a chart cuts its text ${JSON.stringify(text.textContent)}`);
    return problems;
}"""

LABELS_JS = """(names) => [...document.querySelectorAll('[data-testid="stMainBlockContainer"] button')]
    .filter(button => names.some(name => button.innerText.includes(name)))
    .map(button => { const label = button.querySelector('[data-testid="stMarkdownContainer"]');
                     return {text: button.innerText.trim(), scroll: label.scrollWidth, client: label.clientWidth}; })"""


def test_at_800_px_no_page_scrolls_sideways_or_cuts_its_content(page_tour):
    titles = page_tour.titles
    assert len(titles) >= 14 and "Exercises" in titles and "Instructor" in titles, titles
    labels = page_tour.exercise_buttons
    assert len(labels) == len(EXERCISE_BUTTONS), labels
    assert "Instructor (unlocked)" in [stop.title for stop in page_tour.stops]  # the class table is behind the lock
    problems = [problem for stop in page_tour.stops for problem in stop.narrow]
    assert not problems, "\n".join(problems)
    assert not page_tour.console_errors, page_tour.console_errors
