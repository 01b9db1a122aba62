"""The Instructor page's parts: the class, one student, pass rates by student, the pass that keeps
the page unlocked across a reload."""
