"""Hostile: ends the interpreter while being imported, hoping a clean exit reads as success."""

import sys

sys.exit(0)
