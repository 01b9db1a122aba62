"""Everything measured on one trained model, once per arm it is tested as (``rope_arms``).

Per arm and test length: accuracy and perplexity on the recall task (``training.evaluate``),
then the passkey probe (``passkey``) and the two-hop probe (``two_hop``) at every depth. A RoPE
model is also tested with each context-extension schedule of ``config.rope_scalings``: the same
weights, no new training. A length an arm cannot represent is ``cannot_run``, never a number.
"""

from __future__ import annotations

from poslab.experiments.config import ExperimentConfig
from poslab.experiments.passkey import probe
from poslab.experiments.results import CANNOT_RUN, OK, Measurement, ProbeMeasurement
from poslab.experiments.rope_arms import arm_model
from poslab.experiments.tiny_transformer import CannotRun, TinyDecoder
from poslab.experiments.training import evaluate
from poslab.experiments.two_hop import probe_two_hop


def evaluate_all(model: TinyDecoder, config: ExperimentConfig, arm: str, seed: int) -> list[Measurement]:
    """One Measurement per evaluation length; a length the model cannot represent is ``cannot_run``."""
    rows = []
    for eval_len in config.eval_lens:
        try:
            score = evaluate(arm_model(model, arm, eval_len, config.train_len), config, eval_len, seed)
            rows.append(Measurement(arm, seed, config.train_len, eval_len, score.accuracy, OK, score.perplexity))
        except CannotRun:
            rows.append(Measurement(arm, seed, config.train_len, eval_len, None, CANNOT_RUN))
    return rows


def measure_model(
    model: TinyDecoder, config: ExperimentConfig, encoding: str, seed: int
) -> tuple[list[Measurement], list[ProbeMeasurement]]:
    """The measurements and probe rows of every arm of one trained model."""
    measurements, probes = [], []
    for arm in config.arms_of(encoding):
        measurements += evaluate_all(model, config, arm, seed)
        probes += probe(model, config, arm, seed) + probe_two_hop(model, config, arm, seed)
    return measurements, probes
