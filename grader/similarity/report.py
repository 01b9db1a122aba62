"""The similarity report as one self-contained HTML file: inline style, no script, and nothing it
loads or links to outside itself (copydetect's own template loads from a CDN). Every piece of
student code and every name is escaped."""

from __future__ import annotations

import html
from collections.abc import Mapping

from grader.similarity.check import Region, SimilarityReport, SimilarPair, line_ranges

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1a1a1a; background: #fff; }
table.pairs { border-collapse: collapse; margin-bottom: 2rem; }
table.pairs th, table.pairs td { border: 1px solid #bbb; padding: 0.3rem 0.6rem; text-align: left; }
section.pair { margin-bottom: 3rem; }
div.sides { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; }
pre { background: #f6f6f6; border: 1px solid #ccc; padding: 0.6rem; overflow-x: auto; font-size: 0.85rem; }
mark { background: #ffe08a; color: inherit; }
@media (max-width: 800px) { div.sides { grid-template-columns: minmax(0, 1fr); } }
"""


def _text(value: str) -> str:
    """Escaped for HTML; "://" written with an entity, so the file holds no address, even one quoted
    from a student's comment (it reads the same)."""
    return html.escape(value, quote=True).replace("://", "&#58;//")


def marked_code(code: str, regions: tuple[Region, ...]) -> str:
    """``code`` escaped, with each matched region in a ``<mark>``."""
    pieces, at = [], 0
    for start, end in sorted(regions):
        start = max(start, at)
        if end <= start:
            continue
        pieces += [_text(code[at:start]), "<mark>", _text(code[start:end]), "</mark>"]
        at = end
    pieces.append(_text(code[at:]))
    return "".join(pieces)


def _lines(code: str, regions: tuple[Region, ...]) -> str:
    ranges = line_ranges(code, regions)
    return ", ".join(f"{first}" if first == last else f"{first}-{last}" for first, last in ranges) or "none"


def _side(student: str, share: float, code: str, regions: tuple[Region, ...]) -> str:
    return (
        f"<div><h3>{_text(student)}</h3><p>{share:.0%} of this code matches (lines {_lines(code, regions)}).</p>"
        f"<pre><code>{marked_code(code, regions)}</code></pre></div>"
    )


def _pair_section(number: int, pair: SimilarPair, codes: Mapping[str, str]) -> str:
    return (
        f'<section class="pair" id="pair-{number}"><h2>{number}. {_text(pair.student_a)} and '
        f"{_text(pair.student_b)}: score {pair.score:.2f}</h2>"
        f'<div class="sides">{_side(pair.student_a, pair.share_a, codes[pair.student_a], pair.regions_a)}'
        f"{_side(pair.student_b, pair.share_b, codes[pair.student_b], pair.regions_b)}</div></section>"
    )


def render_report(report: SimilarityReport, codes: Mapping[str, str]) -> str:
    """The whole HTML page: a table of the flagged pairs, then each pair's code side by side."""
    rule = report.rule
    rows = "".join(
        f'<tr><td><a href="#pair-{number}">{number}</a></td><td>{_text(pair.student_a)}</td>'
        f"<td>{_text(pair.student_b)}</td><td>{pair.score:.2f}</td><td>{pair.matched_chars}</td></tr>"
        for number, pair in enumerate(report.pairs, start=1)
    )
    table = (
        '<table class="pairs"><thead><tr><th>pair</th><th>student</th><th>student</th><th>score</th>'
        f"<th>matched characters</th></tr></thead><tbody>{rows}</tbody></table>"
        if report.pairs
        else "<p>No pair is flagged.</p>"
    )
    sections = "".join(_pair_section(number, pair, codes) for number, pair in enumerate(report.pairs, start=1))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Similar code: {_text(report.exercise)}</title><style>{STYLE}</style></head><body>"
        f"<h1>Similar code: {_text(report.exercise)}</h1>"
        f"<p>{len(report.students)} students compared, {len(report.pairs)} "
        f"pair{'' if len(report.pairs) == 1 else 's'} flagged. A pair is flagged when "
        f"at least {rule.min_score:.0%} of one student's code (the starter code left out) is found in the "
        f"other's, in runs of at least {rule.noise_chars} characters once names, comments and layout are "
        f"set aside, and at least {rule.min_matched_chars} such characters match. A flag asks for a look, "
        "not a verdict: marked text is what matched.</p>"
        f"{table}{sections}</body></html>\n"
    )
