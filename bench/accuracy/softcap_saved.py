#!/usr/bin/env python3
"""What Hugging Face's eager attention core and Gemma 2's logit soft-capping keep for backward,
counted with torch.autograd.graph.saved_tensors_hooks on the CPU (Debian's torch 1.13:
/usr/bin/python3).

The ops are written out from transformers' eager_attention_forward (modeling_llama.py, the
template modeling_gemma2.py and the other Llama-style families copy) and Gemma2ForCausalLM's
final_logit_softcapping:
    w = matmul(q, k^T) * scaling
    [soft-capping]  w = w / cap; w = tanh(w); w = w * cap
    w = w + causal_mask
    w = softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
    o = matmul(w, v)
    logits = lm_head(h); [final soft-capping] logits = tanh(logits / cap) * cap
q, k, v and h require grad (as in a trained layer); attention dropout is 0 (Gemma 2's config).

    /usr/bin/python3 bench/accuracy/softcap_saved.py

Prints, for each case, every saved storage (shape, dtype, bytes) once and the total.
tests/unit/test_softcap_activations.cpp compares the heads x s x s and batch x seq x vocab ones with
memplan's ledger.
"""
import torch

B, NH, S, HD, VOCAB, HIDDEN = 1, 4, 64, 16, 1000, 32


def saved(fn, *inputs):
    seen = {}

    def pack(t):
        key = (t.data_ptr(), t.dtype, tuple(t.shape))
        if t.data_ptr() not in [k[0] for k in seen] and not any(t is x for x in inputs):
            seen[key] = t
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(*inputs)
    out.float().sum().backward()
    return [(tuple(t.shape), str(t.dtype).replace("torch.", ""), t.numel() * t.element_size())
            for t in seen.values()]


def attention(softcap):
    def run(q, k, v):
        mask = torch.full((S, S), float("-inf"), dtype=q.dtype).triu(1)
        w = torch.matmul(q, k.transpose(2, 3)) * HD ** -0.5
        if softcap:
            w = w / softcap
            w = torch.tanh(w)
            w = w * softcap
        w = w + mask
        w = torch.nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        return torch.matmul(w, v)
    return run


def logits(softcap, lm_head):
    def run(h):
        x = lm_head(h)
        if softcap:
            x = x / softcap
            x = torch.tanh(x)
            x = x * softcap
        return x
    return run


def main():
    torch.manual_seed(0)
    for dtype in (torch.bfloat16, torch.float32):
        for cap in (None, 50.0):
            q, k, v = (torch.randn(B, NH, S, HD, dtype=dtype, requires_grad=True) for _ in range(3))
            rows = saved(attention(cap), q, k, v)
            print(f"attention {str(dtype).replace('torch.', '')} softcap={cap}:")
            for r in rows:
                print("   ", r)
            print("    total", sum(r[2] for r in rows))
        lm = torch.nn.Linear(HIDDEN, VOCAB, bias=False).to(dtype)
        h = torch.randn(B, S, HIDDEN, dtype=dtype, requires_grad=True)
        rows = saved(logits(30.0, lm), h)
        print(f"final soft-capping {str(dtype).replace('torch.', '')}:")
        for r in rows:
            print("   ", r)


if __name__ == "__main__":
    main()
