"""The Instructor page: ``lock`` (its password), ``class_table``, ``roster_admin``, ``lms`` (grades to the LMS)."""
