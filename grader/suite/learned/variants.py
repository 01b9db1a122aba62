"""The learned exercise's correct variants: rewrites of its reference the way published code writes them."""

from __future__ import annotations

from grader.variants import transform

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
