"""Chart builders and the tidy frames behind them (Altair, pandas; never streamlit).

``poslab.viz.common`` holds the conventions every chart follows (titles with units, tooltips,
heatmaps capped at ``MAX_HEATMAP_CELLS``); each lesson has a module of its own beside it.
"""
