#!/usr/bin/env python3
"""Live-storage bytes on the CPU, as torch.cuda.memory_allocated / max_memory_allocated count them.

PeakTracker is a TorchDispatchMode: every tensor an aten op returns (factory functions, op
outputs, the autograd engine's gradients, optimizer state made by zeros_like, the outputs of
_foreach_* and _fused_adamw_) has its untyped storage registered once (key: the StorageImpl
pointer, so views of one storage count once and a storage resized in place is re-measured) with
a weakref callback that subtracts its bytes when the StorageImpl dies (torch keeps a storage's
Python object alive for as long as its StorageImpl lives, so the callback fires exactly then).
Tensors made before the tracker started (parameters, buffers, input ids) are added with
register(). The current and peak bytes are kept twice: raw (the storage's nbytes) and rounded as
the CUDA caching allocator's memory_allocated rounds a block (at least 512 bytes, a multiple of 512).

    tracker = PeakTracker()
    with tracker:
        tracker.register(model, inputs)
        with tracker.phase("forward"):
            loss = model(...)
        ...
    tracker.phases["forward"] -> {"start", "end", "peak", "start_r", "end_r", "peak_r"}

phase() resets the peak at its start, as torch.cuda.reset_peak_memory_stats would; phases may
nest (an outer phase's peak still includes the inner one's). mark(name) records the same figures
for the interval since the previous mark (or the tracker's start).

Caveats: memory a kernel allocates for itself and frees before it returns (workspaces,
temporaries inside one aten kernel) is not seen; tensors made outside the dispatcher
(torch.from_numpy, or before the tracker started and not registered) are not seen; storages
shared with another tracked tensor count once, as on a GPU. A storage whose bytes are 0 counts 0.

Self-test: bench/frameworks/.venv/bin/python bench/frameworks/peak_tracker.py
"""
import contextlib
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

BLOCK = 512  # c10/cuda/CUDACachingAllocator.cpp kMinBlockSize: every block a multiple of 512 bytes


def cuda_rounded(nbytes):
    if nbytes <= 0:
        return 0
    return max(BLOCK, (nbytes + BLOCK - 1) // BLOCK * BLOCK)


class PeakTracker(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.live = {}  # StorageImpl pointer -> [nbytes, weakref to the storage]
        self.cur = self.cur_r = 0
        self.peak = self.peak_r = 0
        self.phases = {}
        self.marks = []
        self._mark_peak = (0, 0)
        self._last_mark = None

    # ----- bookkeeping
    def _bump(self, d, dr):
        self.cur += d
        self.cur_r += dr
        if self.cur > self.peak:
            self.peak = self.cur
        if self.cur_r > self.peak_r:
            self.peak_r = self.cur_r
        mp, mpr = self._mark_peak
        self._mark_peak = (max(mp, self.cur), max(mpr, self.cur_r))

    def _died(self, key):
        ent = self.live.pop(key, None)
        if ent is not None:
            self._bump(-ent[0], -cuda_rounded(ent[0]))

    def track(self, t):
        """Count the storage of tensor t (once); returns its bytes if new, else 0."""
        if not isinstance(t, torch.Tensor) or t.device.type == "meta" or t.is_sparse:
            return 0
        try:
            s = t.untyped_storage()
        except (RuntimeError, NotImplementedError):
            return 0
        key = s._cdata
        n = s.nbytes()
        ent = self.live.get(key)
        if ent is not None:
            if ent[0] != n:  # resized in place (an out= op, resize_)
                self._bump(n - ent[0], cuda_rounded(n) - cuda_rounded(ent[0]))
                ent[0] = n
            return 0
        ref = weakref.ref(s, lambda _r, k=key: self._died(k))
        self.live[key] = [n, ref]
        self._bump(n, cuda_rounded(n))
        return n

    def register(self, *objs):
        """Count tensors that exist already: tensors, modules (parameters, buffers, .grad),
        optimizers (state), or lists / tuples / dicts of these."""
        for o in objs:
            if isinstance(o, torch.Tensor):
                self.track(o)
                if o.grad is not None:
                    self.track(o.grad)
            elif isinstance(o, torch.nn.Module):
                for p in o.parameters():
                    self.register(p)
                for b in o.buffers():
                    self.track(b)
            elif isinstance(o, torch.optim.Optimizer):
                for st in o.state.values():
                    self.register(*[v for v in st.values() if isinstance(v, torch.Tensor)])
            elif isinstance(o, dict):
                self.register(*o.values())
            elif isinstance(o, (list, tuple)):
                self.register(*o)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        flat, _ = tree_flatten(out)
        for t in flat:
            if isinstance(t, torch.Tensor):
                self.track(t)
        return out

    # ----- reading
    def snapshot(self):
        return {"live": self.cur, "live_r": self.cur_r}

    @contextlib.contextmanager
    def phase(self, name):
        outer, outer_r = self.peak, self.peak_r
        self.peak, self.peak_r = self.cur, self.cur_r
        rec = {"start": self.cur, "start_r": self.cur_r}
        try:
            yield rec
        finally:
            rec.update(end=self.cur, end_r=self.cur_r, peak=self.peak, peak_r=self.peak_r)
            self.phases[name] = rec
            self.peak, self.peak_r = max(outer, self.peak), max(outer_r, self.peak_r)

    def mark(self, name):
        """Live bytes now and the peak since the previous mark."""
        rec = {"end": self.cur, "end_r": self.cur_r, "peak": self._mark_peak[0], "peak_r": self._mark_peak[1]}
        self.marks.append((name, rec))
        self._mark_peak = (self.cur, self.cur_r)
        return rec


def unique_storage_bytes(tensors):
    """Bytes of the distinct storages among tensors (None entries skipped)."""
    seen, total = set(), 0
    for t in tensors:
        if t is None or t.device.type == "meta":
            continue
        s = t.untyped_storage()
        if s._cdata not in seen:
            seen.add(s._cdata)
            total += s.nbytes()
    return total


class SavedBytes:
    """saved_tensors_hooks counting the distinct storages autograd saves, minus the ones in
    `exclude` (parameters, buffers, inputs), by dtype. Holds no tensor (weakrefs only), so it does
    not change what is live."""

    def __init__(self, exclude=()):
        self.exclude = {t.untyped_storage()._cdata for t in exclude if t is not None}
        self.seen = {}
        self.bytes = 0
        self.by_dtype = {}

    def pack(self, t):
        if isinstance(t, torch.Tensor) and t.device.type != "meta":
            s = t.untyped_storage()
            key = s._cdata
            old = self.seen.get(key)
            if key not in self.exclude and (old is None or old() is None):
                self.seen[key] = weakref.ref(s)
                dt = str(t.dtype).replace("torch.", "")
                self.bytes += s.nbytes()
                self.by_dtype[dt] = self.by_dtype.get(dt, 0) + s.nbytes()
        return t

    def hooks(self):
        return torch.autograd.graph.saved_tensors_hooks(self.pack, lambda t: t)


def _selftest():
    torch.manual_seed(0)
    fails = []

    def check(what, got, want):
        ok = got == want
        print(f"  {'ok  ' if ok else 'FAIL'} {what}: {got} (expected {want})")
        if not ok:
            fails.append(what)

    lin = torch.nn.Linear(64, 32)  # weight 32*64*4 = 8192 bytes, bias 128
    x = torch.randn(8, 64)  # 2048
    tr = PeakTracker()
    with tr:
        tr.register(lin, x)
        base = tr.cur
        check("registered parameters + input", base, 8192 + 128 + 2048)
        check("registering twice counts once", (tr.register(lin, x), tr.cur)[1], base)
        check("cuda-rounded registered", tr.cur_r, 8192 + 512 + 2048)
        with tr.phase("forward"):
            y = lin(x)  # addmm out 8*32*4 = 1024
            check("forward output", tr.cur - base, 1024)
            v = y[:, :4]
            w = y.view(-1)
            y.mul_(2.0)
            check("views and in-place add nothing", tr.cur - base, 1024)
            loss = (y * y).sum()  # y*y 1024 (not saved by sum: freed), sum 4
        check("forward phase end", tr.phases["forward"]["end"] - base, 1024 + 4)
        check("forward phase peak", tr.phases["forward"]["peak"] - base, 1024 + 1024 + 4)
        with tr.phase("backward"):
            loss.backward()
        del loss, v, w  # y*y was freed by backward (retain_graph False) unless still referenced
        grads = 8192 + 128
        check("after backward, grads live (y still referenced)", tr.cur - base, grads + 1024)
        del y
        check("y freed", tr.cur - base, grads)
        z = torch.zeros(100)
        check("factory tensor", tr.cur - base - grads, 400)
        del z
        check("factory tensor freed", tr.cur - base, grads)
        bw = tr.phases["backward"]
        check("backward peak >= start + grads", bw["peak"] >= bw["start"] + grads, True)
        opt = torch.optim.AdamW(lin.parameters(), lr=1e-3, foreach=False)
        with tr.phase("step"):
            opt.step()
        # AdamW state: step (0-dim float32, 4 bytes) + exp_avg + exp_avg_sq per parameter
        check("optimizer state after step", tr.cur - base - grads, 2 * grads + 2 * 4)
        check("optimizer state = unique_storage_bytes",
              unique_storage_bytes([v for st in opt.state.values() for v in st.values()]), 2 * grads + 8)
        opt.zero_grad(set_to_none=True)
        check("zero_grad(set_to_none) frees grads", tr.cur - base, 2 * grads + 8)
        if hasattr(torch, "_fused_adamw_"):
            lin2 = torch.nn.Linear(64, 32)
            tr.register(lin2)
            b2 = tr.cur
            lin2(x).sum().backward()
            opt2 = torch.optim.AdamW(lin2.parameters(), fused=True)
            before = tr.cur
            opt2.step()
            check("fused AdamW state (fp32 0-dim step tensors)", tr.cur - before, 2 * grads + 8)
            del opt2, b2
    # saved-tensor hook cross-check: Linear saves x and the weight (excluded) -> 0 activation
    # bytes; exp saves its output
    sb = SavedBytes(exclude=[lin.weight, lin.bias, x])
    with sb.hooks():
        out = lin(x).exp().sum()
    check("saved bytes: exp output only", sb.bytes, 1024)
    del out
    # autograd-engine ops are seen: gradient of a bf16 Linear
    lb = torch.nn.Linear(64, 32).to(torch.bfloat16)
    xb = torch.randn(8, 64, dtype=torch.bfloat16)
    tr2 = PeakTracker()
    with tr2:
        tr2.register(lb, xb)
        b0 = tr2.cur
        lb(xb).float().sum().backward()
        check("bf16 grads", tr2.cur - b0, (32 * 64 + 32) * 2)
        lb.weight.grad = lb.bias.grad = None
        check("all freed when the grads die", tr2.cur - b0, 0)
    print("self-test", "FAILED: " + ", ".join(fails) if fails else "passed")
    return not fails


if __name__ == "__main__":
    raise SystemExit(0 if _selftest() else 1)
