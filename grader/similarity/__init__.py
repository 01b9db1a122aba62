"""Similar code: pairs of students whose code for one exercise is unusually similar
(``check``), the self-contained HTML report (``report``) and a folder of students' files read
for the command line (``folders``)."""

from grader.similarity.check import (
    SimilarityReport,
    SimilarityRule,
    SimilarPair,
    find_similar_pairs,
    line_ranges,
    starter_code,
)
from grader.similarity.folders import FolderRead, read_student_folders
from grader.similarity.report import marked_code, render_report

__all__ = [
    "FolderRead",
    "SimilarPair",
    "SimilarityReport",
    "SimilarityRule",
    "find_similar_pairs",
    "line_ranges",
    "marked_code",
    "read_student_folders",
    "render_report",
    "starter_code",
]
