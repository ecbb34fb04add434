"""One decode step of a HF decoder (llama, qwen2, qwen3, mistral) in plain
PyTorch ops over a static KV cache, so that a step can be captured as one
CUDA graph: the token and the position live in device tensors that the
step itself advances, and the attention reads a fixed-length prefix of the
cache (`attend`, set before each capture), so that a step at position 4096
does not pay for the 32768 slots a larger cache holds.

The step is three pieces per layer, each a plain function of tensors:
`pre` (input norm, the fused qkv projection with its bias for qwen2, the
per-head q/k norm for qwen3, rotary), the attention over the cache (SDPA),
and `post` (o_proj, residual, post-attention norm, gate_up, silu, down,
residual); then `head` (final norm, lm_head, argmax). A caller may swap the
pieces for torch.compile'd ones (pytorch_decode.py's `compiled`): they
never change shape with the position, so they compile once, while the
attention, whose length does, stays an SDPA call inside the captured graph.
"""
import torch

F = torch.nn.functional


def rms_norm(x, weight, eps):
    # As HF's LlamaRMSNorm: in f32, back to the input dtype, then the weight.
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * weight


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


def pre(x, norm, qkv, qkv_bias, q_norm, k_norm, cos, sin, heads, kv_heads, head_dim, eps):
    """[1, hidden] -> q [heads, d], k and v [kv_heads, d], k and q roped."""
    out = F.linear(rms_norm(x, norm, eps), qkv, qkv_bias)
    q = out[:, :heads * head_dim].view(heads, head_dim)
    k = out[:, heads * head_dim:(heads + kv_heads) * head_dim].view(kv_heads, head_dim)
    v = out[:, (heads + kv_heads) * head_dim:].view(kv_heads, head_dim)
    if q_norm is not None:  # qwen3: per-head RMSNorm before rotary
        q, k = rms_norm(q, q_norm, eps), rms_norm(k, k_norm, eps)
    return rotate(q, cos, sin), rotate(k, cos, sin), v


def post(x, attended, o, norm, gate_up, down, eps):
    x = x + F.linear(attended, o)
    gate, up = F.linear(rms_norm(x, norm, eps), gate_up).chunk(2, -1)
    return x + F.linear(F.silu(gate) * up, down)


def head(x, norm, lm_head, eps):
    logits = F.linear(rms_norm(x, norm, eps), lm_head)
    return logits, logits.argmax(-1)


class GraphDecoder:
    def __init__(self, model, max_context):
        config, inner = model.config, model.model
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.eps = config.rms_norm_eps
        self.max_context = max_context
        self.pre, self.post, self.head = pre, post, head
        self.layers = []
        for layer in inner.layers:
            attention, mlp = layer.self_attn, layer.mlp
            projections = [attention.q_proj, attention.k_proj, attention.v_proj]
            biases = [p.bias for p in projections]
            q_norm, k_norm = getattr(attention, "q_norm", None), getattr(attention, "k_norm", None)
            self.layers.append({
                "norm1": layer.input_layernorm.weight,
                "qkv": torch.cat([p.weight for p in projections]),
                "qkv_bias": torch.cat(biases) if biases[0] is not None else None,
                "q_norm": q_norm.weight if q_norm is not None else None,
                "k_norm": k_norm.weight if k_norm is not None else None,
                "o": attention.o_proj.weight,
                "norm2": layer.post_attention_layernorm.weight,
                "gate_up": torch.cat([mlp.gate_proj.weight, mlp.up_proj.weight]),
                "down": mlp.down_proj.weight,
            })
        self.norm, self.embed, self.lm_head = inner.norm.weight, inner.embed_tokens.weight, model.lm_head.weight
        device, dtype = self.embed.device, self.embed.dtype
        shape = (len(self.layers), self.kv_heads, max_context, self.head_dim)
        self.keys = torch.zeros(shape, dtype=dtype, device=device)
        self.values = torch.zeros(shape, dtype=dtype, device=device)
        positions = torch.arange(max_context, device=device)
        cos, sin = inner.rotary_emb(self.embed[:1].unsqueeze(0), positions.unsqueeze(0))
        self.cos, self.sin = cos[0], sin[0]
        self.slots = positions
        self.token = torch.zeros(1, dtype=torch.long, device=device)
        self.position = torch.zeros(1, dtype=torch.long, device=device)
        self.attend = max_context  # cache slots the attention reads

    def fill(self, cache, length, cache_layer):
        """Copies the first `length` positions of a HF cache (keys already
        roped, as this decoder stores them) into the static cache: a
        prompt's worth of context in one batched write."""
        for i in range(len(self.layers)):
            keys, values = cache_layer(cache, i)
            self.keys[i, :, :length].copy_(keys[0, :, :length])
            self.values[i, :, :length].copy_(values[0, :, :length])

    def step(self):
        d, nq, nkv, eps = self.head_dim, self.heads, self.kv_heads, self.eps
        x = self.embed.index_select(0, self.token)
        cos, sin = self.cos.index_select(0, self.position), self.sin.index_select(0, self.position)
        n = self.attend
        visible = (self.slots[:n] <= self.position).view(1, 1, 1, n)
        for i, layer in enumerate(self.layers):
            q, k, v = self.pre(x, layer["norm1"], layer["qkv"], layer["qkv_bias"], layer["q_norm"],
                               layer["k_norm"], cos, sin, nq, nkv, d, eps)
            self.keys[i].index_copy_(1, self.position, k.unsqueeze(1))
            self.values[i].index_copy_(1, self.position, v.unsqueeze(1))
            attended = F.scaled_dot_product_attention(
                q.view(1, nq, 1, d), self.keys[i, :, :n].unsqueeze(0),
                self.values[i, :, :n].unsqueeze(0), attn_mask=visible, enable_gqa=True)
            x = self.post(x, attended.reshape(1, nq * d), layer["o"], layer["norm2"],
                          layer["gate_up"], layer["down"], eps)
        logits, token = self.head(x, self.norm, self.lm_head, eps)
        self.token.copy_(token)
        self.position.add_(1)
        return logits
