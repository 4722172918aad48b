#!/usr/bin/env python3
"""Record every allocation and free of whole BERT-large-style training steps on CPU, so that the op
sequence a real step runs can be replayed through memplan's model of PyTorch's CUDA caching
allocator and compared with memplan's own step events (tests/cli/test_cli_trace_replay.cpp).

  /usr/bin/python3 bench/accuracy/bert_step_trace.py LAYERS BATCH SEQ OUT.json

The model repeats transformers 4.16's BertModel op by op (BertEmbeddings, BertSelfAttention's
matmul / sqrt(d) / + mask / softmax / dropout / matmul, BertSelfOutput, BertIntermediate's GELU,
BertOutput, the pooler and a 2-way classifier), fp32, dropout 0.1 through torch.native_dropout,
which keeps a bool mask as CUDA's fused kernel does (CPU's F.dropout keeps a float one). The
optimizer is torch.optim.AdamW(foreach=False) and zero_grad(set_to_none=False), as the HF Trainer
of early 2022 ran on torch < 2. The load is one clone per parameter tensor in module order (what
.to("cuda") allocates). Three steps, as memplan replays.

torch 1.13's profiler records each allocation and free as a "[memory]" event with its size but no
address; a free is paired with the latest live allocation of its size (autograd frees the
activations of later layers first). Output: {"events": [[id, bytes], ...]} with bytes 0 for a free.
Takes about 15 minutes for 4 layers at batch 4 x 512 on 2 cores.
"""
import json
import math
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

H, NH, FF, V, P = 1024, 16, 4096, 30522, 0.1


def drop(x):
    return torch.native_dropout(x, P, True)[0]


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(H, H) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(H), nn.LayerNorm(H)
        self.i, self.out = nn.Linear(H, FF), nn.Linear(FF, H)

    @staticmethod
    def heads(x):
        return x.view(x.size(0), x.size(1), NH, H // NH).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / math.sqrt(H // NH)
        scores = scores + mask
        probs = drop(torch.softmax(scores, dim=-1))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size(0), ctx.size(1), H)
        a = self.ln1(drop(self.o(ctx)) + x)
        m = nn.functional.gelu(self.i(a))
        return self.ln2(drop(self.out(m)) + a)


class Bert(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.we, self.pe, self.te = nn.Embedding(V, H), nn.Embedding(512, H), nn.Embedding(2, H)
        self.ln = nn.LayerNorm(H)
        self.layers = nn.ModuleList([Layer() for _ in range(layers)])
        self.pool, self.cls = nn.Linear(H, H), nn.Linear(H, 2)

    def forward(self, ids, labels):
        pos = torch.arange(ids.size(1)).unsqueeze(0)
        x = self.we(ids) + self.te(torch.zeros_like(ids))
        x = drop(self.ln(x + self.pe(pos)))
        mask = (1.0 - torch.ones(ids.size(0), 1, 1, ids.size(1))) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        logits = self.cls(drop(torch.tanh(self.pool(x[:, 0]))))
        return nn.functional.cross_entropy(logits, labels)


def main():
    layers, batch, seq, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    torch.manual_seed(0)
    model = Bert(layers)
    ids, labels = torch.randint(0, V, (batch, seq)), torch.randint(0, 2, (batch,))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=False)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        for p in model.parameters():
            p.data = p.data.clone()
        for _ in range(3):
            loss = model(ids, labels)
            loss.backward()
            del loss
            opt.step()
            opt.zero_grad(set_to_none=False)
    mem = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"),
                 key=lambda e: e.start_us())
    live, next_id, events = {}, 0, []
    for e in mem:
        n = e.nbytes()
        if n > 0:
            next_id += 1
            live.setdefault(n, []).append(next_id)
            events.append([next_id, n])
        elif live.get(-n):
            events.append([live[-n].pop(), 0])
    json.dump({"events": events}, open(out, "w"))
    print(len(events), "events")


if __name__ == "__main__":
    main()
