"""The relative-bias lesson: Shaw et al.'s clipped distances, T5's buckets, the bias they give, ALiBi's line.

    Shaw et al. (2018):  index(r) = clip(r, -k, k) + k          2k + 1 learned vectors, r = j - i
    T5 (Raffel et al., 2020):  bias_h(i, j) = table[bucket(j - i), h]   (see poslab.encodings.t5)
    ALiBi (Press et al., 2022):  bias_h(i, j) = -m_h (i - j)    T5's causal bias with the table
                                                                 replaced by a fixed line

Every distance from ``max_distance`` on shares T5's last bucket, so the bias is flat there; ALiBi's
line keeps falling.
"""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import pandas as pd
import torch

from poslab.encodings.alibi import alibi_slopes
from poslab.encodings.t5 import t5_relative_bias, t5_relative_bucket
from poslab.viz.common import axis_title, heatmap


def random_table(num_buckets: int, n_heads: int, seed: int = 0) -> torch.Tensor:
    """A stand-in for a trained ``[num_buckets, n_heads]`` T5 table: standard normal values."""
    return torch.randn(num_buckets, n_heads, generator=torch.Generator().manual_seed(seed))


def _region(distance: int, bucket_in_direction: int, max_exact: int, last: int) -> str:
    if distance < max_exact:
        return "exact (one distance each)"
    return "last bucket (every distance from here on)" if bucket_in_direction == last else "log-spaced"


def bucket_frame(num_buckets: int, max_distance: int, bidirectional: bool, reach: int) -> pd.DataFrame:
    """``relative position, bucket, region`` for key - query from -reach to reach."""
    relative = torch.arange(-reach, reach + 1)
    buckets = t5_relative_bucket(relative, bidirectional, num_buckets, max_distance)
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    rows = []
    for r, bucket in zip(relative.tolist(), buckets.tolist()):
        distance = abs(r) if bidirectional else max(-r, 0)
        rows.append(
            {
                "relative position": r,
                "bucket": bucket,
                "region": _region(distance, bucket % per_direction, per_direction // 2, per_direction - 1),
            }
        )
    return pd.DataFrame(rows)


UNBOUNDED = 10**9  # a distance far past any max_distance: it lies in the bucket that never ends


def bucket_ranges(num_buckets: int, max_distance: int, bidirectional: bool, reach: int = 4096) -> pd.DataFrame:
    """``bucket, first distance, last distance, distances`` for earlier keys (r <= 0), counted up to ``reach``.

    The last bucket never ends (every distance from its first on shares it): it has no last distance
    and no count. A bucket cut by ``reach`` before it ends says "or more"."""
    distance = torch.arange(reach + 1)
    buckets = t5_relative_bucket(-distance, bidirectional, num_buckets, max_distance).tolist()
    endless = int(t5_relative_bucket(torch.tensor([-UNBOUNDED]), bidirectional, num_buckets, max_distance))
    rows: dict[int, list[int]] = {}
    for d, bucket in zip(distance.tolist(), buckets):
        rows.setdefault(bucket, []).append(d)

    def row(bucket: int, ds: list[int]) -> dict:
        if bucket == endless:
            last, count = "none: every distance beyond", "unbounded"
        elif ds[-1] == reach:
            last, count = f"{reach} or more", f"{len(ds)} or more"
        else:
            last, count = f"{ds[-1]}", f"{len(ds)}"
        return {"bucket": bucket, "first distance": ds[0], "last distance": last, "distances": count}

    return pd.DataFrame([row(bucket, ds) for bucket, ds in sorted(rows.items())])


def bucket_chart(num_buckets: int, max_distance: int, bidirectional: bool, reach: int) -> alt.LayerChart:
    frame = bucket_frame(num_buckets, max_distance, bidirectional, reach)
    direction = "bidirectional (encoder)" if bidirectional else "causal (decoder)"
    x = alt.X("relative position:Q", title=axis_title("key position - query position", "tokens"))
    y = alt.Y("bucket:Q", title=axis_title("bucket", "index"))
    # One grey step line for the whole map, points coloured by region: a line per region would
    # join the earlier and the later keys' last buckets across the middle.
    steps = alt.Chart(frame).mark_line(interpolate="step-after", color="lightgray").encode(x=x, y=y)
    points = (
        alt.Chart(frame)
        .mark_circle(size=16, opacity=1)
        .encode(
            x=x,
            y=y,
            color=alt.Color("region:N", title="region", legend=alt.Legend(labelLimit=320, orient="bottom")),
            tooltip=[alt.Tooltip("relative position:Q"), alt.Tooltip("bucket:Q"), alt.Tooltip("region:N")],
        )
    )
    edges = pd.DataFrame({"edge": [-max_distance] + ([max_distance] if bidirectional else [])})
    rules = (
        alt.Chart(edges)
        .mark_rule(strokeDash=[4, 4], color="gray")
        .encode(x=alt.X("edge:Q", title=axis_title("key position - query position", "tokens")))
    )
    return alt.layer(points, steps, rules).properties(
        title=f"T5 buckets, {direction}: {num_buckets} buckets, max distance {max_distance}",
        description=(
            f"Step chart of T5's bucket index against key minus query position from {-reach} to {reach}; "
            f"dashed lines at plus and minus the maximum distance {max_distance}, beyond which every "
            f"distance shares the last bucket."
        ),
    )


def bias_matrix_chart(
    num_buckets: int,
    max_distance: int,
    bidirectional: bool,
    seq_len: int,
    head: int = 0,
    n_heads: int = 4,
    seed: int = 0,
) -> alt.Chart:
    """One head's ``[T, T]`` bias from a random table: constant along every diagonal."""
    if not 0 <= head < n_heads:
        raise ValueError(f"head must be in 0..{n_heads - 1}, got {head}")
    bias = t5_relative_bias(random_table(num_buckets, n_heads, seed), seq_len, seq_len, bidirectional, max_distance)
    chart = heatmap(
        bias[head],
        title=f"Head {head}: bias table[bucket(j - i), {head}] (random table, seed {seed})",
        x_title=axis_title("key j", "position"),
        y_title=axis_title("query i", "position"),
        value_title="bias (logit units)",
        diverging=True,
        value_format=".2f",
    )
    return chart.properties(
        description=(
            f"Heatmap of one head's T5 bias over {seq_len} queries and keys: each cell is the random table's value "
            f"for the bucket of j minus i, so the matrix is constant along diagonals and flat beyond distance "
            f"{max_distance}."
        )
    )


def distance_profile_frame(
    num_buckets: int, max_distance: int, reach: int, head: int = 0, n_heads: int = 4, seed: int = 0
) -> pd.DataFrame:
    """``distance, bias, method`` for a causal head: T5 (random table) and ALiBi's -m_h d, d = 0..reach."""
    table = random_table(num_buckets, n_heads, seed)
    distance = torch.arange(reach + 1)
    t5 = table[t5_relative_bucket(-distance, False, num_buckets, max_distance), head]
    alibi = -float(alibi_slopes(n_heads)[head]) * distance.double()
    return pd.concat(
        [
            pd.DataFrame({"distance": distance.numpy(), "bias": t5.double().numpy(), "method": "T5 (random table)"}),
            pd.DataFrame(
                {"distance": distance.numpy(), "bias": alibi.numpy(), "method": f"ALiBi (head {head} of {n_heads})"}
            ),
        ],
        ignore_index=True,
    )


def distance_profile_chart(
    num_buckets: int, max_distance: int, reach: int, head: int = 0, n_heads: int = 4, seed: int = 0
) -> alt.LayerChart:
    frame = distance_profile_frame(num_buckets, max_distance, reach, head, n_heads, seed)
    t5 = frame[frame["method"].str.startswith("T5")]["bias"]
    # ALiBi's line would squash T5's steps against the axis: give it at most T5's own range below T5.
    bottom = max(frame["bias"].min(), t5.min() - (t5.max() - t5.min()))
    top = max(t5.max(), 0.0)
    margin = 0.05 * (top - bottom)
    lines = (
        alt.Chart(frame)
        .mark_line(interpolate="step-after", clip=True)
        .encode(
            x=alt.X("distance:Q", title=axis_title("distance i - j", "tokens back")),
            y=alt.Y(
                "bias:Q",
                title=axis_title("bias", "logit units"),
                scale=alt.Scale(domain=[bottom - margin, top + margin], nice=False),
            ),
            color=alt.Color("method:N", title="bias"),
            tooltip=[alt.Tooltip("method:N"), alt.Tooltip("distance:Q"), alt.Tooltip("bias:Q", format=".3f")],
        )
    )
    edge = (
        alt.Chart(pd.DataFrame({"edge": [max_distance]}))
        .mark_rule(strokeDash=[4, 4], color="gray")
        .encode(x=alt.X("edge:Q", title=axis_title("distance i - j", "tokens back")))
    )
    falls_off = " (off the bottom of the chart)" if frame["bias"].min() < bottom else ""
    return alt.layer(lines, edge).properties(
        title=f"Past the maximum distance ({max_distance}) T5's bias is flat; ALiBi's line keeps falling{falls_off}",
        description=(
            f"Line chart of the bias against distance for a causal T5 head with a random table and for "
            f"ALiBi's fixed line, from 0 to {reach} tokens back; a dashed line marks T5's maximum distance."
        ),
    )


@dataclass(frozen=True)
class Saturation:
    first_saturated: int  # the smallest distance back that lands in the last bucket
    distances_in_last_bucket: int  # how many distances 0..reach share it
    reach: int


def saturation(num_buckets: int, max_distance: int, bidirectional: bool, reach: int) -> Saturation:
    """Where T5 stops telling earlier keys apart, within ``reach`` tokens back."""
    distance = torch.arange(reach + 1)
    buckets = t5_relative_bucket(-distance, bidirectional, num_buckets, max_distance)
    last = buckets.max()
    in_last = buckets == last
    return Saturation(int(distance[in_last].min()), int(in_last.sum()), reach)


def shaw_frame(clip: int, reach: int) -> pd.DataFrame:
    """``relative position, embedding index`` for Shaw et al.'s clip(j - i, -k, k) + k."""
    relative = torch.arange(-reach, reach + 1)
    return pd.DataFrame(
        {"relative position": relative.numpy(), "embedding index": (relative.clamp(-clip, clip) + clip).numpy()}
    )


def shaw_chart(clip: int, reach: int) -> alt.Chart:
    frame = shaw_frame(clip, reach)
    return (
        alt.Chart(frame)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("relative position:Q", title=axis_title("key position - query position", "tokens")),
            y=alt.Y("embedding index:Q", title=axis_title("learned vector", "index")),
            tooltip=[alt.Tooltip("relative position:Q"), alt.Tooltip("embedding index:Q")],
        )
        .properties(
            title=f"Shaw et al. (2018): {2 * clip + 1} learned vectors, one per distance up to {clip}, then clipped",
            description=(
                f"Step chart of the index of Shaw et al.'s relative embedding against key minus query "
                f"position: one index per distance within plus or minus {clip}, constant beyond."
            ),
        )
    )
