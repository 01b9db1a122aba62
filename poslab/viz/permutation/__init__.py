"""The permutation lab: does attention care about token order, and what makes it care?

For a permutation with ``order[i]`` = the original token that lands in slot i, the permutation
matrix P has ``P[i, order[i]] = 1`` so ``(P X)[i] = X[order[i]]``. Plain self-attention is
permutation-EQUIVARIANT: ``attn(P X) = P attn(X)``; mean-pooling its output over tokens makes it
permutation-INVARIANT: ``mean(attn(P X)) = mean(attn(X))``. Adding a positional encoding, or a
causal mask, breaks both. A recurrent network gets order from its recurrence instead.

One module per part: ``orders`` (the sentence and the new order, typed, picked or shuffled),
``model`` (embeddings, one attention head, the RNN), ``equivariance`` (the experiment and its
heatmaps), ``recurrence`` (the RNN contrast and its bars). Pages use this package's names.
"""

from poslab.viz.permutation.equivariance import EquivarianceResult, comparison_charts, equivariance_experiment
from poslab.viz.permutation.model import RNN_HIDDEN, TOLERANCE, embed, rnn_final_state, self_attention, word_embedding
from poslab.viz.permutation.orders import (
    PRESETS,
    RANDOM_TOKENS,
    PermutationError,
    format_order,
    order_from_picks,
    parse_order,
    sentence_tokens,
    shuffled_order,
    suggested_order,
    validate_order,
)
from poslab.viz.permutation.recurrence import RecurrenceContrast, contrast_charts, recurrence_contrast

__all__ = [
    "EquivarianceResult",
    "comparison_charts",
    "equivariance_experiment",
    "RNN_HIDDEN",
    "TOLERANCE",
    "embed",
    "rnn_final_state",
    "self_attention",
    "word_embedding",
    "PRESETS",
    "RANDOM_TOKENS",
    "PermutationError",
    "format_order",
    "order_from_picks",
    "parse_order",
    "sentence_tokens",
    "shuffled_order",
    "suggested_order",
    "validate_order",
    "RecurrenceContrast",
    "contrast_charts",
    "recurrence_contrast",
]
