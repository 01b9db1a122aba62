"""Grades in and out of an LMS: Canvas, Moodle and Gradescope.

In: ``exports.read_export`` reads a bulk download of submissions (a zip, in memory) into one
submission per student (``python -m grader grade EXPORT.zip``). Out: ``fill.fill_canvas`` and
``fill.fill_moodle`` fill the LMS's own grade file with each student's total
(``python -m grader export canvas|moodle``), from a grading folder or the app's store (``grades``).
The student key they match on is ``poslab.lms_sheets.student_key``.
"""
