"""The Instructor page: ``lock`` (its password, and the pass that keeps it unlocked across a reload),
the class, one student, pass rates by student, ``roster_admin``, ``lms`` (grades to the LMS)."""
