"""The typed-in published configurations: every row sourced, its values consistent, the unchecked ones marked."""

from poslab.model_configs import UNCHECKED, breakable, config_sources, config_table, longrope_factors, model_configs


def test_every_row_names_its_repository_and_check():
    for config in model_configs():
        assert "/" in config.source and config.checked.strip(), config.name
        assert config.rope_theta > 1 and config.max_position_embeddings >= 4096
        assert config.head_dim % 2 == 0 and config.num_attention_heads >= 1 and config.num_hidden_layers >= 1
        assert config.num_attention_heads % config.num_key_value_heads == 0, config.name  # whole query groups
        assert config.trained_context.strip(), config.name  # max_position_embeddings is not the trained length
    assert [c.name for c in model_configs() if not c.is_checked] == ["Phi-4"]
    assert config_sources().set_index("model").loc["Phi-4", "checked against"] == UNCHECKED
    assert list(config_sources()["model"]) == list(config_table()["model"])


def test_scaling_blocks_that_lessons_quote():
    by_name = {config.name: config for config in model_configs()}
    assert "factor 8," in by_name["Llama 3.1 8B"].rope_scaling
    assert "factor 32," in by_name["Llama 3.2 1B / 3B"].rope_scaling
    assert by_name["Llama 4 Scout"].attention_chunk_size == 8192 and by_name["Gemma 3 27B"].sliding_window == 1024


def test_longrope_factors_have_one_value_per_pair_and_grow():
    factors = longrope_factors()
    assert len(factors.long_factor) == len(factors.short_factor) == factors.head_dim // 2
    assert list(factors.long_factor) == sorted(factors.long_factor)  # slow pairs are interpolated more


def test_repository_ids_can_wrap_but_read_the_same():
    assert breakable("meta-llama/Llama-3.1-8B").replace("\u200b", "") == "meta-llama/Llama-3.1-8B"


def test_trained_context_is_shown_beside_max_positions():
    table = config_table().set_index("model")
    assert list(table.columns[:3]) == ["rope_theta", "max positions", "trained context"]
    assert (
        "32,768" in table.loc["Qwen2.5 7B", "trained context"] and "YaRN" in table.loc["Qwen2.5 7B", "trained context"]
    )
    assert "8K of output" in table.loc["Qwen3 8B", "trained context"]
