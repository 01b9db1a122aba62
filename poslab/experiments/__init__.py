"""Experiments that train small models on the CPU; the pages load their shipped results.

``extrapolation``: train short, test long, one model per positional encoding.
"""
