// The step timeline: what one training step has allocated, phase by phase (timeline.hpp).
//
// A steady-state step (step 2 onward; step 1 differs only in that the optimizer state does not
// exist before optimizer.step() allocates it) with zero_grad(set_to_none=True), as torch >= 2
// does by default:
//   weights    W + S                      parameters; optimizer state from earlier steps
//   forward    W + S + A - held + C       saved activations accumulate layer by layer; C: autocast's
//                                         cache of every checkpointed layer's half weights (full
//                                         checkpointing under autocast; activation_term.hpp)
//   loss       W + S + A + C              + the logits and their fp32 upcast (held), log-softmax
//   backward   W + S + A - held + T_b     held tensors are gone; cross-entropy's backward makes the
//                                         gradient of the log-softmax and of its input, each the
//                                         size of the loss input, while log-softmax is still saved
//              W + S + G                  at the end: activations freed, every gradient present
//   optimizer  W + S + G + T_opt          foreach AdamW (torch 2, CUDA): sqrt(exp_avg_sq) for every
//                                         trainable tensor at once; torch 1.13's per-tensor loop:
//                                         sqrt and its quotient for the largest tensor;
//                                         transformers' Adafactor: 2 fp32 tensors the size of one
//                                         (4 for half weights) + the previous one's update or the
//                                         factors; transformers.AdamW: one denom beside the
//                                         previous tensor's (optimizer_loop.hpp); bitsandbytes' 8-bit
//                                         optimizers update each tensor in one kernel: nothing
//   zero_grad  W + S                      set_to_none frees the gradients
// On CUDA every phase also holds torch's two cuBLAS workspaces (timeline.hpp).
// With gradient accumulation (grad_accum > 1) the gradients G of earlier micro-batches are alive
// through forward and backward; zero_grad(set_to_none=False) (torch < 2's default) keeps them
// allocated from one step to the next.
// Measured on CPU with torch 1.13's profiler (bench/measure_step_peak.py,
// tests/data/torch_cpu_step_peak.json).

#include "core/memory/step_timeline.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include <memplan/error.hpp>
#include "core/base/checked.hpp"
#include "core/memory/activation_term.hpp"
#include "core/memory/optimizer_loop.hpp"
#include "core/memory/weight_load.hpp"

namespace memplan {
namespace {

uint64_t add_bytes(uint64_t a, uint64_t b) { return checked_add(a, b, "timeline bytes"); }

// The largest trainable tensor in elements (torch 1.13's per-tensor AdamW makes two temporaries
// of its size); 0 when the model's shapes are unknown.
uint64_t largest_trainable_tensor(const EstimateRequest& r) {
  const ModelSpec& m = r.model;
  if (!m.mlp_widths.empty()) {
    uint64_t best = 0;
    for (size_t i = 0; i + 1 < m.mlp_widths.size(); ++i)
      best = std::max(best, checked_mul(m.mlp_widths[i], m.mlp_widths[i + 1], "tensor"));
    return best;
  }
  if (!m.arch) return 0;
  const TransformerArch& a = *m.arch;
  const uint64_t hd = a.resolved_head_dim();
  const uint64_t qd = checked_mul(a.heads, hd, "tensor");
  const uint64_t kvd = checked_mul(a.resolved_kv_heads(), hd, "tensor");
  const uint64_t ff = a.intermediate ? a.intermediate : checked_mul(4, a.hidden, "tensor");
  if (r.lora) return checked_mul(r.lora->rank, std::max({a.hidden, qd, kvd, ff}), "tensor");
  uint64_t best = std::max({checked_mul(a.hidden, qd, "tensor"), checked_mul(a.hidden, ff, "tensor"),
                            checked_mul(a.vocab, a.hidden, "tensor")});
  if (a.fused_qkv) best = std::max(best, checked_mul(a.hidden, qd + 2 * kvd, "tensor"));
  return best;
}

// The trainable numbers this GPU's optimizer steps on: all of them, or its shard of the state
// (ZeRO-1 and up, FSDP: the optimizer runs on the sharded flat parameters); 0 when the state is
// offloaded (the step runs on the host: DeepSpeedCPUAdam, FSDP CPUOffload).
uint64_t stepped_parameters(const Estimate& e) {
  if (!e.sharded) return e.trainable_parameters;
  if (e.sharded->layout.offload != Offload::none) return 0;
  return std::min(e.trainable_parameters, e.sharded->arithmetic.state_elements);
}

Transient optimizer_transient(const EstimateRequest& r, const Estimate& e) {
  Transient t;
  const Optimizer& o = r.optimizer;
  const uint64_t trainable = stepped_parameters(e);
  if (!trainable) return t;
  if (o.kind == StateKind::factored) {  // transformers' Adafactor (optimizer_loop.hpp)
    const LoopPeak p = adafactor_loop_peak(optimizer_loop_tensors(r, e), adafactor_fp32_copies(r));
    if (!p.bytes) return t;
    t.code = TransientCode::adafactor_update;
    t.n[0] = p.n;
    t.n[1] = p.extra;
    t.bytes = p.bytes;
    return t;
  }
  const ElementCost cost = r.recipe.has_master()    ? r.recipe.master.cost
                           : r.fp32_lora_adapters() ? ElementCost{4, 1}
                                                    : r.recipe.optimizer_state.cost;
  const uint64_t per = cost.den ? cost.num / cost.den : 0;
  if (o.transformers_loop && o.kind == StateKind::copies && o.copies == 2) {  // transformers.AdamW
    const LoopPeak p = hf_adamw_loop_peak(optimizer_loop_tensors(r, e), per);
    if (!p.bytes) return t;
    t.code = TransientCode::hf_adamw_denom;
    t.n[0] = p.n;
    t.n[1] = p.extra;
    t.bytes = p.bytes;
    return t;
  }
  if (!(o.kind == StateKind::copies && o.step_per_tensor && o.copies == 2)) return t;  // torch Adam/AdamW
  // DeepSpeed's engine runs "adam"/"adamw" as its FusedAdam (deepspeed/runtime/engine.py
  // _configure_basic_optimizer; deepspeed/ops/adam/fused_adam.py: one multi-tensor CUDA kernel that
  // updates in place, no temporaries); DDP and FSDP step with torch's own AdamW.
  if (e.sharded && e.sharded->layout.sharding != ShardingStrategy::ddp &&
      !is_fsdp(e.sharded->layout.sharding))
    return t;
  // fused=True: torch._fused_adamw_ (torch/optim/adam.py _fused_adam, aten FusedAdamWKernel.cu)
  // reads the gradients and writes parameters and state in place: no temporaries.
  if (r.optimizer_loop == OptimizerLoop::fused) return t;
  const bool per_tensor = r.optimizer_loop == OptimizerLoop::per_tensor ||
                          (r.optimizer_loop == OptimizerLoop::device_default && r.device == Device::cpu);
  if (per_tensor) {
    const uint64_t largest = std::min(largest_trainable_tensor(r), trainable);
    if (!largest) return t;
    t.code = TransientCode::per_tensor_copies;
    t.n[0] = largest;
    t.n[1] = per;
    t.bytes = checked_mul(2, bytes_for(largest, cost, "timeline bytes"), "timeline bytes");
    return t;
  }
  t.code = TransientCode::foreach_copy;
  t.n[0] = trainable;
  t.n[1] = per;
  t.bytes = bytes_for(trainable, cost, "timeline bytes");
  return t;
}

// The last layer's backward: the gradient of the MLP's inner tensor (batch x seq x ff, in the
// activation format; a gated MLP's product makes one per factor besides: 3 x ff) and of the
// hidden state (the residual format) alive together while that layer's saved tensors still are.
Transient mlp_gradients(const EstimateRequest& r) {
  Transient t;
  if (!r.model.arch || !r.seq || !r.model.mlp_widths.empty()) return t;
  const TransformerArch& a = *r.model.arch;
  const uint64_t ff = a.intermediate ? a.intermediate : checked_mul(4, a.hidden, "tensor");
  const ElementCost act = r.recipe.activations.cost;
  const ElementCost res = r.recipe.autocast ? ElementCost{4, 1} : act;
  const uint64_t tokens = checked_mul(r.batch, r.seq, "tokens");
  t.code = TransientCode::mlp_gradients;
  t.n[0] = tokens;
  t.n[1] = a.gated_mlp ? checked_mul(3, ff, "tensor") : ff;
  t.bytes = add_bytes(bytes_for(checked_mul(tokens, t.n[1], "tensor"), act, "timeline bytes"),
                      bytes_for(checked_mul(tokens, a.hidden, "tensor"), res, "timeline bytes"));
  return t;
}

// The LM head's weight elements when Lit-GPT's bitsandbytes 4-bit layers run it (its matmuls
// dequantise it, 4 B per element at once), else 0.
uint64_t litgpt_dequantised_head(const EstimateRequest& r) {
  if (r.framework != Framework::litgpt || !is_nf4(r.quantize) || !r.model.arch || !r.model.arch->causal)
    return 0;
  return checked_mul(r.model.arch->vocab, r.model.arch->hidden, "tensor");
}

PhasePoint point(Phase phase, uint64_t w, uint64_t s, uint64_t g, uint64_t a, uint64_t t, uint64_t buffers) {
  PhasePoint p;
  p.buffers = buffers;
  p.phase = phase;
  p.weights = w;
  p.optimizer_state = s;
  p.gradients = g;
  p.activations = a;
  p.transient = t;
  p.bytes = add_bytes(add_bytes(add_bytes(w, s), add_bytes(g, a)), add_bytes(t, buffers));
  return p;
}

}  // namespace

// TRL's fused LM head's backward (trl 1.16.0 kernels/chunked_logprob.py backward): grad_hidden
// zeros in fp32 for every token, mm_buf of min(tokens, 4096) x 32768 in the compute format (the
// autocast dtype, else the hidden state's) with, under autocast, the fp32 weight's slice cast to it,
// and grad_weight zeros in fp32 when the LM head trains.
Transient logprob_backward(const EstimateRequest& r) {
  Transient t;
  if (!r.model.arch || !r.model.arch->causal || !r.seq) return t;
  const TransformerArch& a = *r.model.arch;
  constexpr uint64_t k_token_tile = 4096, k_vocab_tile = 32768;
  const uint64_t tokens = checked_mul(r.batch, r.seq > 1 ? r.seq - 1 : r.seq, "tokens");
  const ElementCost compute = r.recipe.activations.cost;
  const ElementCost fp32{4, 1};
  const ElementCost res = r.recipe.autocast ? fp32 : compute;
  const ElementCost weights = r.recipe.weights.cost;
  // Each fp32 gradient is returned cast to its tensor's format (a copy unless that is fp32), the
  // tile still allocated.
  const uint64_t hidden_elems = checked_mul(tokens, a.hidden, "tensor");
  const uint64_t head_elems = checked_mul(a.vocab, a.hidden, "tensor");
  t.code = TransientCode::logprob_backward;
  t.n[0] = bytes_for(hidden_elems, fp32, "timeline bytes");
  if (!(res == fp32)) t.n[0] = add_bytes(t.n[0], bytes_for(hidden_elems, res, "timeline bytes"));
  t.n[1] = bytes_for(checked_mul(std::min(tokens, k_token_tile), k_vocab_tile, "tensor"), compute,
                     "timeline bytes");
  if (r.recipe.autocast)
    t.n[1] = add_bytes(t.n[1], bytes_for(checked_mul(std::min(a.vocab, k_vocab_tile), a.hidden, "tensor"),
                                         compute, "timeline bytes"));
  const bool head_trains = !r.lora && r.trainable >= 1.0;
  uint64_t weight_grad = 0;
  if (head_trains) {
    weight_grad = bytes_for(head_elems, fp32, "timeline bytes");
    if (!(weights == fp32))
      weight_grad = add_bytes(weight_grad, bytes_for(head_elems, weights, "timeline bytes"));
  }
  t.bytes = add_bytes(add_bytes(t.n[0], t.n[1]), weight_grad);
  return t;
}

Transient loss_backward_transient(const EstimateRequest& r, const Estimate& e) {
  if (r.loss == Loss::logprob) return logprob_backward(r);
  Transient loss;
  if (e.ledger.loss_input_bytes) {
    loss.code = TransientCode::loss_gradients;
    loss.n[0] = e.ledger.loss_input_bytes;
    loss.bytes = checked_mul(2, e.ledger.loss_input_bytes, "timeline bytes");
  }
  // Lit-GPT's bitsandbytes layers (framework.hpp): the 4-bit LM head's backward, the first to run,
  // dequantises its weight (fp16, then a bf16 copy) while the loss gradients of a chunk are alive.
  const uint64_t head = litgpt_dequantised_head(r);
  if (head) {
    loss.code = TransientCode::loss_and_dequant;
    loss.n[1] = head;
    loss.bytes = add_bytes(loss.bytes, checked_mul(4, head, "timeline bytes"));
  }
  return loss;
}

// bitsandbytes' MatMul4Bit.backward: `grad_A = torch.matmul(grad_output, F.dequantize_4bit(B,
// ctx.state).to(grad_output.dtype))` (bitsandbytes 0.50.2 autograd/_functions.py; the same
// dequantisation from 0.39): the frozen 4-bit weight is rebuilt whole, in the half format it was
// quantised from, for each Linear's input gradient, beside the layer's gradients. A dense MLP's
// down projection (hidden x ff) is the largest such matrix of the layer. torchtune's NF4 weights
// are torchao's (its LinearNF4 backward dequantises too, `weight.to(grad_output.dtype)`); MoE
// experts are not nn.Linear layers, so bitsandbytes leaves them.
Transient last_layer_backward_transient(const EstimateRequest& r) {
  Transient t = mlp_gradients(r);
  if (!t.bytes || !is_nf4(r.quantize) || r.model.arch->experts > 0) return t;
  const TransformerArch& a = *r.model.arch;
  const uint64_t ff = a.intermediate ? a.intermediate : checked_mul(4, a.hidden, "tensor");
  const uint64_t grads = t.bytes;
  t.code = TransientCode::mlp_gradients_dequant;
  t.n[0] = grads;
  t.n[1] = checked_mul(a.hidden, ff, "tensor");
  t.bytes = add_bytes(grads, checked_mul(2, t.n[1], "timeline bytes"));
  return t;
}

Transient optimizer_step_transient(const EstimateRequest& r, const Estimate& e) {
  return optimizer_transient(r, e);
}

StepTimeline step_timeline(const EstimateRequest& r, const Estimate& e) {
  StepTimeline tl;
  tl.device = r.device;
  if (r.mode != Mode::train || !e.has(TermKind::activations)) return tl;
  if (r.parallel && (!e.sharded || e.sharded->layout.tp > 1 || e.sharded->layout.pp > 1)) return tl;
  const Term& act = e.term(TermKind::activations);
  // A measured bytes-per-row figure says nothing of the loss or the layers: the sum of the terms
  // (every term at once) stays the estimate there.
  if (act.basis != Basis::ledger) return tl;
  tl.present = true;
  const uint64_t w = e.bytes(TermKind::parameters);
  const uint64_t g = e.bytes(TermKind::gradients);
  const uint64_t s = e.bytes(TermKind::optimizer_state);
  const uint64_t a = act.bytes;
  const uint64_t held = std::min(e.ledger.held_bytes, a);
  // A layout's buffers, alive through the whole step: DDP's gradient buckets exist from the
  // wrapper's construction on; ZeRO-3/FSDP's gathered layers are counted as always present (the
  // sum of the terms does too).
  const uint64_t buf = e.has(TermKind::buffers) ? e.bytes(TermKind::buffers) : 0;

  const Transient loss = loss_backward_transient(r, e);
  tl.optimizer_transient = optimizer_transient(r, e);

  // Gradients alive before backward: accumulated over earlier micro-batches, or kept (zeroed, not
  // freed) by zero_grad(set_to_none=False) from the step before.
  const uint64_t g0 = r.grad_accum > 1 || r.grads_kept ? g : 0;
  // Full checkpointing: the layer rebuilt in backward is not alive before its turn comes.
  const RecomputedLayer rl = recomputed_layer(r);
  const uint64_t rebuilt = std::min(add_bytes(rl.saved_bytes, rl.weight_copy_bytes), a - held);
  // Two high points: the start (the loss gradients, log-softmax still saved) and the last layer's
  // backward (log-softmax gone, the layer rebuilt if checkpointed, its MLP gradients alive).
  tl.backward_transient = loss;
  PhasePoint back = point(Phase::backward, w, s, g0, a - held - rebuilt, loss.bytes, buf);
  // (torch < 1.11: log-softmax's saved input goes with it.)
  const uint64_t lsm_input = e.ledger.log_softmax_input_bytes;
  const uint64_t lsm = (held || lsm_input) && r.loss == Loss::plain
                           ? std::min(add_bytes(e.ledger.loss_input_bytes, lsm_input), a - held)
                           : 0;
  const Transient mlp = last_layer_backward_transient(r);
  const PhasePoint last_layer = point(Phase::backward, w, s, g0, a - held - lsm, mlp.bytes, buf);
  if (last_layer.bytes > back.bytes) {
    back = last_layer;
    tl.backward_transient = mlp;
  }
  // The logits a training loop keeps (keep_logits) outlive backward and the optimizer step.
  const uint64_t kept = std::min(e.ledger.kept_bytes, a);
  const PhasePoint back_end = point(Phase::backward, w, s, g, kept, 0, buf);
  if (back_end.bytes > back.bytes) back = back_end;
  if (rl.autocast_cache_bytes) {
    tl.forward_transient.code = TransientCode::autocast_weight_cache;
    tl.forward_transient.n[0] = rl.autocast_cache_bytes / rl.cached_copy_bytes;
    tl.forward_transient.n[1] = rl.cached_copy_bytes;
    tl.forward_transient.bytes = rl.autocast_cache_bytes;
  }
  const uint64_t cache = tl.forward_transient.bytes;
  tl.phases = {point(Phase::weights, w, s, r.grads_kept ? g : 0, 0, 0, buf),
               point(Phase::forward, w, s, g0, a - held - rebuilt, cache, buf),
               point(Phase::loss, w, s, g0, a - rebuilt, cache, buf),
               back,
               point(Phase::optimizer, w, s, g, kept, tl.optimizer_transient.bytes, buf),
               point(Phase::zero_grad, w, s, r.grads_kept ? g : 0, kept, 0, buf)};
  // Both workspaces exist from step 1's backward on (they stay allocated with their handles).
  if (r.device == Device::cuda)
    for (PhasePoint& p : tl.phases) {
      p.workspace = k_cublas_workspaces * k_cublas_workspace_bytes;
      p.bytes = add_bytes(p.bytes, p.workspace);
    }
  for (const PhasePoint& p : tl.phases)
    if (p.bytes > tl.peak_bytes) {
      tl.peak_bytes = p.bytes;
      tl.peak_phase = p.phase;
    }
  const LoadPeak load = load_peak(r, e);
  if (load.bytes) {
    tl.load_peak_bytes = load.bytes;
    tl.load_warmup_bytes = load.warmup;
    tl.load_transient.code = TransientCode::load_staging;
    tl.load_transient.n[0] = load.staging_elements;
    tl.load_transient.n[1] = load.staging_bytes_per_element;
    tl.load_transient.bytes =
        checked_mul(load.staging_elements, load.staging_bytes_per_element, "timeline bytes");
    if (load.bytes > tl.peak_bytes) {
      tl.peak_bytes = load.bytes;
      tl.peak_phase = Phase::weights;
      tl.peak_at_load = true;
    }
  }
  // Step 1: the state appears inside optimizer.step(); before it only W, A and the gradients of
  // this step's earlier micro-batches.
  for (const PhasePoint& p : tl.phases) {
    uint64_t first = p.phase == Phase::optimizer ? p.bytes : p.bytes - p.optimizer_state;
    if (p.phase < Phase::backward && r.grads_kept && r.grad_accum <= 1) first -= p.gradients;
    tl.first_step_peak_bytes = std::max(tl.first_step_peak_bytes, first);
  }
  tl.first_step_peak_bytes = std::max(tl.first_step_peak_bytes, tl.load_peak_bytes);
  return tl;
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::weights:
      return "weights";
    case Phase::forward:
      return "forward";
    case Phase::loss:
      return "loss";
    case Phase::backward:
      return "backward";
    case Phase::optimizer:
      return "optimizer";
    case Phase::zero_grad:
      return "zero_grad";
  }
  return "";
}

const char* to_string(Device d) { return d == Device::cpu ? "cpu" : "cuda"; }

Device parse_device(std::string_view subject, std::string_view text) {
  std::string t(text);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "cuda" || t == "gpu") return Device::cuda;
  if (t == "cpu") return Device::cpu;
  throw Error(std::string(subject), "\"" + std::string(text) + "\" is not a device (expected cuda or cpu)");
}

}  // namespace memplan
