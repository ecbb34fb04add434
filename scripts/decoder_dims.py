"""A decoder's dimensions from its HF config.json, read one way by the
scripts that build shapes from configs (fused_module.py, shaped_onnx.py):
head_dim is the config's when it has one (it need not be hidden / heads)."""


def decoder_dims(config):
    """(hidden, intermediate, layers, heads, kv_heads, head_dim, vocab, eps,
    rope_theta, tied embeddings)."""
    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    return (hidden, config["intermediate_size"], config["num_hidden_layers"], heads,
            config.get("num_key_value_heads", heads), config.get("head_dim") or hidden // heads,
            config["vocab_size"], config.get("rms_norm_eps", 1e-5),
            config.get("rope_theta", 10000.0), config.get("tie_word_embeddings", False))
