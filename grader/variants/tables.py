"""Correct ``sinusoidal_encoding`` and ``LearnedPositionalEmbedding`` as published code writes them."""

from __future__ import annotations

from grader.variants import transform

TUTORIAL = """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    pe = torch.zeros(seq_len, d_model)
    position = torch.arange(0, seq_len, dtype=torch.float).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(base) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
"""

CONCATENATED = """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float64), inverse_frequencies(d_model, base))
    return torch.cat([angles.sin(), angles.cos()], dim=-1).float()
"""

DIVISION = """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    position = torch.arange(seq_len, dtype=torch.float32)[:, None]
    denominator = torch.pow(torch.tensor(base, dtype=torch.float32), torch.arange(0, d_model, 2).float() / d_model)
    angles = position / denominator
    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).reshape(seq_len, d_model)
"""

ONES_POW = """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    frequencies = (base * torch.ones(d_model // 2)).pow(-torch.arange(0, d_model, 2).float() / d_model)
    angles = torch.einsum("p,f->pf", torch.arange(seq_len).float(), frequencies)
    return torch.cat([angles.sin(), angles.cos()], dim=1)
"""

NUMPY = """
import numpy


def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    angles = numpy.arange(seq_len)[:, None] / numpy.power(base, numpy.arange(0, d_model, 2) / d_model)
    table = numpy.zeros((seq_len, d_model))
    table[:, 0::2], table[:, 1::2] = numpy.sin(angles), numpy.cos(angles)
    return torch.from_numpy(table).float()
"""

PHASE = """
def sinusoidal_encoding(seq_len, d_model, base=10000.0):
    columns = torch.arange(d_model)
    frequencies = 1.0 / base ** ((columns - columns % 2).float() / d_model)
    phase = (columns % 2).float() * (math.pi / 2)  # cos(a) = sin(a + pi/2)
    return torch.sin(torch.arange(seq_len).float()[:, None] * frequencies + phase)
"""

EMBEDDING_ARANGE = """
class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.wpe = nn.Embedding(max_len, d_model)

    def forward(self, x):
        b, t, _ = x.size()
        if t > self.max_len:
            raise ValueError(f"Cannot forward sequence of length {t}, block size is only {self.max_len}")
        pos = torch.arange(0, t, dtype=torch.long, device=x.device)
        return x + self.wpe(pos)
"""

POSITION_IDS = """
class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.position_embeddings = nn.Embedding(max_len, d_model)
        self.register_buffer("position_ids", torch.arange(max_len).expand((1, -1)), persistent=False)

    def forward(self, x):
        seq_length = x.shape[1]
        if seq_length > self.position_ids.shape[1]:
            raise IndexError(f"{seq_length} positions, but max_len is {self.position_ids.shape[1]}")
        return x + self.position_embeddings(self.position_ids[:, :seq_length])
"""

ZEROS_INDEX_SELECT = """
class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.pos_embed = nn.Parameter(torch.zeros(max_len, d_model))

    def forward(self, x):
        if x.size(1) > self.pos_embed.size(0):
            raise ValueError(f"x has {x.size(1)} positions, more than max_len={self.pos_embed.size(0)}")
        rows = self.pos_embed.index_select(0, torch.arange(x.size(1), device=x.device))
        return x + rows.unsqueeze(0)
"""

NORMAL_NARROW = """
class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(max_len, d_model))
        nn.init.normal_(self.weight, std=0.01)

    def forward(self, x):
        seq_len, max_len = x.shape[-2], self.weight.shape[0]
        if seq_len > max_len:
            raise ValueError(f"seq_len {seq_len} > max_len {max_len}")
        return torch.add(x, self.weight.narrow(0, 0, seq_len)[None])
"""

TRANSFORMS = [
    transform(
        "tutorial table",
        "sinusoidal",
        "PyTorch tutorial: float32 exp/log div_term, sliced assignment",
        sinusoidal_encoding=TUTORIAL,
    ),
    transform(
        "concatenated table",
        "sinusoidal",
        "[all sin | all cos] (tensor2tensor's layout, the spec's frequencies)",
        sinusoidal_encoding=CONCATENATED,
    ),
    transform(
        "division table", "sinusoidal", "p / base^(2i/d) in float32, stacked pairs", sinusoidal_encoding=DIVISION
    ),
    transform(
        "pow table", "sinusoidal", "(base * ones).pow(-2i/d), einsum, concatenated", sinusoidal_encoding=ONES_POW
    ),
    transform(
        "numpy table", "sinusoidal", "numpy float64, then torch.from_numpy(...).float()", sinusoidal_encoding=NUMPY
    ),
    transform("phase table", "sinusoidal", "one sin with a phase of pi/2 on odd columns", sinusoidal_encoding=PHASE),
    transform(
        "wpe embedding",
        "learned",
        "nanoGPT: nn.Embedding and torch.arange positions",
        LearnedPositionalEmbedding=EMBEDDING_ARANGE,
    ),
    transform(
        "position_ids buffer",
        "learned",
        "Hugging Face BERT/GPT-2: a position_ids buffer, IndexError",
        LearnedPositionalEmbedding=POSITION_IDS,
    ),
    transform(
        "zeros index_select",
        "learned",
        "ViT-style zeros init, index_select",
        LearnedPositionalEmbedding=ZEROS_INDEX_SELECT,
    ),
    transform(
        "normal narrow",
        "learned",
        "GPT-2's std 0.01 via nn.init.normal_, narrow",
        LearnedPositionalEmbedding=NORMAL_NARROW,
    ),
]
