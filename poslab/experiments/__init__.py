"""Experiments that train small models on the CPU; the pages load their shipped results.

``extrapolation``: train short, test long, one model per positional encoding (the command line);
``config`` its settings, ``training`` the training and the accuracy and perplexity, ``passkey`` the
needle probe, ``results`` and ``result_files`` what a run records, ``lab_runner`` the page's live
quick run in a child process.
"""
