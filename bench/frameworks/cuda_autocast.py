"""CUDA autocast's cast policies on the CPU, so the harness measures what an amp run on a GPU keeps.

torch.autocast("cpu") and torch.autocast("cuda") cast different ops: on the CPU softmax,
log_softmax, layer_norm, pow, rsqrt, exp, sum and cumsum run in the half format, where CUDA runs
them in fp32 (and cross_entropy_loss is cast to fp32 whole, where CUDA casts its log_softmax and
nll_loss). memplan's amp rules are CUDA's, so CPU autocast rows cannot check them.

install() re-registers the AutocastCPU kernel of every op in either device's lists with a Python
kernel that applies CUDA's policy, read from the installed torch's own header
(torch/include/ATen/autocast_mode.h: AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32,
AT_FORALL_FP32_SET_OPT_DTYPE, AT_FORALL_PROMOTE, the lists `TORCH_LIBRARY_IMPL(aten, AutocastCUDA,
m)` in aten/src/ATen/autocast_mode.cpp registers), the way aten/src/ATen/autocast_mode.h's
WrapFunction_ does:
  lower_precision_fp  floating arguments (not fp64) cast to the autocast dtype; a leaf fp32 tensor
                      that requires grad (a parameter) is cast once per forward (cached_cast's cache)
  fp32                floating arguments (not fp64) cast to fp32
  fp32_set_opt_dtype  when the first argument is floating (not fp64), its `dtype` set to fp32 if
                      the caller gave none (the op computes and returns fp32; no input copy)
  promote             floating arguments cast to the widest floating type among them
An op only the CPU lists hold falls through (CUDA registers no kernel for it). The kernels sit at the Autocast key, above autograd,
as CUDA's do, so autograd records the casts and saves the cast tensors, as on a GPU. Everything
else (kernels, sdpa's CPU backend, the allocator) stays the CPU's.
"""
import os
import re

import torch

_KEY = torch._C.DispatchKey.AutocastCPU
_LIB = None
_CACHE = {}
POLICIES = {}
_SDPA_LAYOUT = False


def _header_lists():
    path = os.path.join(os.path.dirname(torch.__file__), "include", "ATen", "autocast_mode.h")
    with open(path) as f:
        text = f.read()
    lists = {}
    for macro, policy in (("AT_FORALL_LOWER_PRECISION_FP", "lower"), ("AT_FORALL_FP32", "fp32"),
                          ("AT_FORALL_FP32_SET_OPT_DTYPE", "set_opt_dtype"), ("AT_FORALL_PROMOTE", "promote")):
        m = re.search(r"#define " + macro + r"\(_\)(.*?)(?:\n\n|\n#)", text, re.S)
        if not m:
            raise RuntimeError(f"{path}: no {macro}")
        for name, overload in re.findall(r"_\((\w+)(?:,\s*(\w+))?\)", m.group(1)):
            lists[f"aten::{name}" + (f".{overload}" if overload else "")] = policy
    return path, lists


def _eligible(t):
    return isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64


def _map(x, fn):
    if isinstance(x, torch.Tensor):
        return fn(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_map(v, fn) for v in x)
    return x


def _cast(to):
    def cast(t):
        if not _eligible(t) or t.dtype == to:
            return t
        cacheable = (to != torch.float32 and t.dtype == torch.float32 and t.requires_grad and t.is_leaf
                     and not t._is_view() and torch.is_autocast_cache_enabled())
        if cacheable:
            hit = _CACHE.get(id(t))
            if hit is not None and hit[0] is t:
                return hit[1]
        out = t.to(to)
        if cacheable:
            _CACHE[id(t)] = (t, out)
        return out
    return cast


def _tensors(args, kwargs):
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, torch.Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (u for u in v if isinstance(u, torch.Tensor))


def _kernel(op, policy):
    dtype_index = next((i for i, a in enumerate(op._schema.arguments) if a.name == "dtype"), None)

    def kernel(*args, **kwargs):
        half = torch.get_autocast_dtype("cpu")
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(_KEY)):
            if policy == "lower":
                args, kwargs = _map(args, _cast(half)), {k: _map(v, _cast(half)) for k, v in kwargs.items()}
            elif policy == "fp32":
                args, kwargs = _map(args, _cast(torch.float32)), {k: _map(v, _cast(torch.float32)) for k, v in kwargs.items()}
            elif policy == "set_opt_dtype":
                if args and _eligible(args[0]) and dtype_index is not None:
                    if len(args) > dtype_index:
                        if args[dtype_index] is None:
                            args = args[:dtype_index] + (torch.float32,) + args[dtype_index + 1:]
                    elif kwargs.get("dtype") is None:
                        kwargs = dict(kwargs, dtype=torch.float32)
            elif policy == "promote":
                floats = [t.dtype for t in _tensors(args, kwargs) if _eligible(t)]
                if floats:
                    widest = max(floats, key=lambda d: torch.finfo(d).bits)
                    args, kwargs = _map(args, _cast(widest)), {k: _map(v, _cast(widest)) for k, v in kwargs.items()}
            if _SDPA_LAYOUT and op is torch.ops.aten.scaled_dot_product_attention.default and args:
                args = (_cuda_layout(args[0]),) + tuple(args[1:])  # the query, after autocast's cast
            return op(*args, **kwargs)
    return kernel


def _op(qualname):
    name, _, overload = qualname.partition("::")[2].partition(".")
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return None
    return getattr(packet, overload or "default", None)


def install():
    """Registers CUDA's policies on the AutocastCPU key; returns the header it read them from."""
    global _LIB
    if _LIB is not None:
        return POLICIES["_header"]
    import warnings
    header, cuda = _header_lists()
    cpu = set(torch._C._dispatch_get_registrations_for_dispatch_key("AutocastCPU"))
    _LIB = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Overriding a previously registered kernel"
        for qualname in sorted(set(cuda) | cpu):
            op = _op(qualname)
            if op is None:
                continue
            policy = cuda.get(qualname, "fallthrough")
            # An op CUDA's lists do not hold falls through the Autocast key there: its
            # decomposition's ops (cross_entropy_loss's log_softmax and nll_loss) are cast.
            kernel = torch.library.fallthrough_kernel if policy == "fallthrough" else _kernel(op, policy)
            _LIB.impl(qualname.partition("::")[2], kernel, "AutocastCPU")
            POLICIES[qualname] = policy
    POLICIES["_header"] = header
    return header


def clear_cache():
    """What leaving the outermost autocast region does to CUDA's cast cache."""
    _CACHE.clear()


def _cuda_layout(query):
    if isinstance(query, torch.Tensor) and query.dim() == 4 and query.size(1) > 1 and query.size(2) > 1 \
            and query.is_contiguous():
        return query.transpose(1, 2).contiguous().transpose(1, 2)
    return query


def install_sdpa_layout():
    """Hands scaled_dot_product_attention a query laid out as CUDA's kernels lay out their output.

    CUDA's flash and memory-efficient kernels return the output in (batch, seq, heads, head_dim)
    memory order whatever the query's strides (pytorch aten/src/ATen/native/transformers/cuda:
    the output is allocated (B, S, H, D) and returned transposed), so the model's
    `attn_output.transpose(1, 2).contiguous()` is a view and the output projection reads sdpa's own
    output storage. The CPU flash kernel allocates its output in the query's memory order: a query
    made contiguous (B, H, S, D) by torch.cat (rotary on part of the head, Phi-3, GPT-NeoX) gives an
    output that the transpose must copy, a storage no GPU run has. A query contiguous in (B, H, S, D)
    order is re-laid out first (a copy of the same size, which sdpa keeps instead of the original,
    freed at once), so the CPU output follows CUDA's order; a strided view (GPT-2's q, a view of
    the fused c_attn output) is passed as it is, as CUDA's kernels receive and keep it. Under
    autocast the query autocast's sdpa kernel casts is re-laid out too (install()).
    """
    global _SDPA_LAYOUT
    _SDPA_LAYOUT = True  # autocast's sdpa kernel re-lays out the query it casts (install())
    F = torch.nn.functional
    if getattr(F.scaled_dot_product_attention, "_memplan_layout", False):
        return
    orig = F.scaled_dot_product_attention

    def sdpa(query, *args, **kwargs):
        return orig(_cuda_layout(query), *args, **kwargs)

    sdpa._memplan_layout = True
    F.scaled_dot_product_attention = sdpa
