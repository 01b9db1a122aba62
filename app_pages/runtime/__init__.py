"""The app process, not a page: what runs outside or around every script run.

``server`` (start-up and HTTP routes), ``process`` (one value per process), ``run_gate`` (page
runs served in order), ``heap`` (the start-up heap frozen), ``sandbox_notice`` (which sandbox grades).
"""
