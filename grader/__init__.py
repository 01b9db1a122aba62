"""The autograder. It owns untrusted code: student code never runs in the process that judges it."""

__version__ = "0.1.0"
