"""The learned exercise's known mistakes, as patches on the reference source (``grader.mutants``).

A patch is ``(old, new)``: ``old`` must occur exactly once in ``reference_source()``. Names are
``learned_<mistake>``; keep each to the smallest change that reproduces the mistake, and say in the
description where it comes from or what it breaks.
"""

from __future__ import annotations

from grader.mutants.spec import MutantSpec

# Snippets of the reference that several mutants patch.
LEARNED_TABLE = "self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)"
LEARNED_ADD = "return x + self.table[:seq_len]"
LEARNED_LENGTH_CHECK = """        require(
            seq_len <= self.max_len,
            f"sequence length {seq_len} is longer than max_len {self.max_len}: "
            f"a learned table has no rows past position {self.max_len - 1}",
        )
"""

MUTANTS: tuple[MutantSpec, ...] = (
    MutantSpec(
        "learned_table_is_a_buffer",
        "learned",
        "table registered as a buffer: not trainable",
        ((LEARNED_TABLE, 'self.register_buffer("table", torch.randn(max_len, d_model) * 0.02)'),),
    ),
    MutantSpec(
        "learned_table_detached",
        "learned",
        "adds self.table.data: a parameter, but forward keeps no graph to it, so training never changes it",
        ((LEARNED_ADD, "return x + self.table.data[:seq_len]"),),
    ),
    MutantSpec(
        "learned_positions_on_the_cpu",
        "learned",
        "index_select with positions built on the CPU: on a GPU the index and the table meet on two devices",
        ((LEARNED_ADD, "return x + self.table.index_select(0, torch.arange(seq_len))"),),
    ),
    MutantSpec(
        "learned_view_not_reshape",
        "learned",
        "flattens x with view, not reshape: a transposed or sliced x raises",
        ((LEARNED_ADD, "return (x.view(x.shape[0], -1) + self.table[:seq_len].reshape(-1)).view(x.shape)"),),
    ),
    MutantSpec(
        "learned_last_rows",
        "learned",
        "adds table[-T:] (the last rows) instead of table[:T]",
        ((LEARNED_ADD, "return x + self.table[-seq_len:]"),),
    ),
    MutantSpec(
        "learned_truncates_long_input",
        "learned",
        "silently cuts sequences longer than max_len",
        ((LEARNED_LENGTH_CHECK, "        x = x[:, : self.max_len]\n        seq_len = x.shape[1]\n"),),
    ),
    MutantSpec(
        "learned_no_length_check",
        "learned",
        "no check: an IndexError from the lookup, not ValueError",
        ((LEARNED_LENGTH_CHECK, ""), (LEARNED_ADD, "return x + self.table[torch.arange(seq_len, device=x.device)]")),
    ),
    MutantSpec(
        "learned_unchecked_embedding_lookup",
        "learned",
        "no check: F.embedding's IndexError on the CPU only (a device-side assert on a GPU, nothing on meta)",
        (
            (LEARNED_LENGTH_CHECK, ""),
            (LEARNED_ADD, "return x + nn.functional.embedding(torch.arange(seq_len, device=x.device), self.table)"),
        ),
    ),
    MutantSpec(
        "learned_index_error_without_numbers",
        "learned",
        "an explicit IndexError whose message names neither T nor max_len",
        (
            (
                LEARNED_LENGTH_CHECK,
                '        if seq_len > self.max_len:\n            raise IndexError("the sequence is too long")\n',
            ),
        ),
    ),
    MutantSpec(
        "learned_assert_length",
        "learned",
        "nanoGPT's assert: AssertionError, and gone under python -O",
        ((LEARNED_LENGTH_CHECK, '        assert seq_len <= self.max_len, f"{seq_len} > {self.max_len}"\n'),),
    ),
    MutantSpec(
        "learned_two_parameters",
        "learned",
        "an extra trainable scale next to the table",
        (
            (LEARNED_TABLE, LEARNED_TABLE + "\n        self.scale = nn.Parameter(torch.ones(()))"),
            (LEARNED_ADD, "return x + self.scale * self.table[:seq_len]"),
        ),
    ),
    MutantSpec(
        "learned_in_place_add",
        "learned",
        "x += table[:T] modifies the caller's tensor",
        ((LEARNED_ADD, "x += self.table[:seq_len]\n        return x"),),
    ),
    MutantSpec(
        "learned_sequence_first",
        "learned",
        "reads T from dim 0 ([T, B, D] habit): adds table[:B]",
        (("seq_len = x.shape[1]", "seq_len = x.shape[0]"),),
    ),
    MutantSpec(
        "learned_table_not_registered",
        "learned",
        "table kept as a plain tensor in a list: .to() misses it",
        (
            (LEARNED_TABLE, "self.rows = [torch.randn(max_len, d_model) * 0.02]"),
            (LEARNED_ADD, "return x + self.rows[0][:seq_len]"),
        ),
    ),
)
