// Names of sharding strategies, offload modes, and gradient formats: parsing
// with "did you mean", and the words explain lines use.
#include <memplan/sharding.hpp>

#include <cctype>

#include <memplan/error.hpp>
#include "core/base/did_you_mean.hpp"

namespace memplan {

namespace {

// Lower case, '_' -> '-': "FULL_SHARD" and "full-shard" are the same name.
std::string normalise(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c == '_') c = '-';
  }
  return out;
}

template <typename T>
struct Named {
  const char* name;
  T value;
};

template <typename T, size_t N>
T lookup(std::string_view subject, std::string_view text, const Named<T> (&table)[N], const char* what,
         const char* expected) {
  const std::string key = normalise(text);
  std::vector<std::string> names;
  for (const auto& row : table) {
    if (key == row.name) return row.value;
    names.push_back(row.name);
  }
  throw Error(std::string(subject), "\"" + std::string(text) + "\" is not " + what + " (expected " +
                                        expected + ")" + did_you_mean(key, names));
}

const Named<ShardingStrategy> k_fsdp[] = {
    {"no-shard", ShardingStrategy::fsdp_no_shard},
    {"shard-grad-op", ShardingStrategy::fsdp_shard_grad_op},
    {"full-shard", ShardingStrategy::fsdp_full_shard},
    {"hybrid-shard", ShardingStrategy::fsdp_hybrid_shard},
};
const Named<Offload> k_offload[] = {
    {"none", Offload::none}, {"optimizer", Offload::optimizer}, {"parameters", Offload::parameters}};
const Named<GradFormat> k_grad[] = {
    {"half", GradFormat::half}, {"fp32", GradFormat::fp32}, {"half+fp32", GradFormat::half_and_fp32}};

}  // namespace

ShardingStrategy parse_zero_stage(std::string_view subject, std::string_view text) {
  static const Named<ShardingStrategy> stages[] = {{"0", ShardingStrategy::zero0},
                                                   {"1", ShardingStrategy::zero1},
                                                   {"2", ShardingStrategy::zero2},
                                                   {"3", ShardingStrategy::zero3}};
  for (const auto& row : stages)
    if (text == row.name) return row.value;
  throw Error(std::string(subject),
              "\"" + std::string(text) + "\" is not a ZeRO stage (expected 0, 1, 2 or 3)");
}

ShardingStrategy parse_fsdp_strategy(std::string_view subject, std::string_view text) {
  return lookup(subject, text, k_fsdp, "an FSDP sharding strategy",
                "no-shard, shard-grad-op, full-shard or hybrid-shard");
}

Offload parse_offload(std::string_view subject, std::string_view text) {
  return lookup(subject, text, k_offload, "an offload mode", "none, optimizer or parameters");
}

GradFormat parse_grad_format(std::string_view subject, std::string_view text) {
  return lookup(subject, text, k_grad, "a gradient format", "half, fp32 or half+fp32");
}

std::string sharding_name(ShardingStrategy s) {
  switch (s) {
    case ShardingStrategy::ddp:
      return "ddp";
    case ShardingStrategy::zero0:
      return "zero-0";
    case ShardingStrategy::zero1:
      return "zero-1";
    case ShardingStrategy::zero2:
      return "zero-2";
    case ShardingStrategy::zero3:
      return "zero-3";
    case ShardingStrategy::fsdp_no_shard:
      return "fsdp-no-shard";
    case ShardingStrategy::fsdp_shard_grad_op:
      return "fsdp-shard-grad-op";
    case ShardingStrategy::fsdp_full_shard:
      return "fsdp-full-shard";
    case ShardingStrategy::fsdp_hybrid_shard:
      return "fsdp-hybrid-shard";
  }
  return "?";
}

std::string sharding_engine(ShardingStrategy s) {
  switch (s) {
    case ShardingStrategy::ddp:
      return "plain data parallel (PyTorch DDP)";
    case ShardingStrategy::zero0:
      return "DeepSpeed ZeRO stage 0";
    case ShardingStrategy::zero1:
      return "DeepSpeed ZeRO stage 1 / Megatron distributed optimizer";
    case ShardingStrategy::zero2:
      return "DeepSpeed ZeRO stage 2";
    case ShardingStrategy::zero3:
      return "DeepSpeed ZeRO stage 3";
    case ShardingStrategy::fsdp_no_shard:
      return "PyTorch FSDP NO_SHARD";
    case ShardingStrategy::fsdp_shard_grad_op:
      return "PyTorch FSDP SHARD_GRAD_OP";
    case ShardingStrategy::fsdp_full_shard:
      return "PyTorch FSDP FULL_SHARD";
    case ShardingStrategy::fsdp_hybrid_shard:
      return "PyTorch FSDP HYBRID_SHARD";
  }
  return "?";
}

std::string offload_name(Offload o) {
  for (const auto& row : k_offload)
    if (row.value == o) return row.name;
  return "?";
}

int sharding_level(ShardingStrategy s) {
  switch (s) {
    case ShardingStrategy::ddp:
    case ShardingStrategy::zero0:
    case ShardingStrategy::fsdp_no_shard:
      return 0;
    case ShardingStrategy::zero1:
      return 1;
    case ShardingStrategy::zero2:
    case ShardingStrategy::fsdp_shard_grad_op:
      return 2;
    case ShardingStrategy::zero3:
    case ShardingStrategy::fsdp_full_shard:
    case ShardingStrategy::fsdp_hybrid_shard:
      return 3;
  }
  return 0;
}

bool is_fsdp(ShardingStrategy s) {
  return s == ShardingStrategy::fsdp_no_shard || s == ShardingStrategy::fsdp_shard_grad_op ||
         s == ShardingStrategy::fsdp_full_shard || s == ShardingStrategy::fsdp_hybrid_shard;
}

ModelStateBytes mixed_precision_state(ElementCost half, ElementCost optimizer_state, GradFormat grads) {
  ModelStateBytes b;
  b.weight = half;
  b.gathered = half;
  b.master_weight = {4, 1};
  b.optimizer_state = optimizer_state;
  b.gradient = grads == GradFormat::fp32 ? ElementCost{4, 1} : half;
  b.master_gradient = grads == GradFormat::half_and_fp32 ? ElementCost{4, 1} : ElementCost{0, 1};
  return b;
}

ModelStateBytes fsdp_mixed_precision_state(ElementCost half, ElementCost optimizer_state) {
  ModelStateBytes b;
  b.weight = {4, 1};  // the sharded flat parameter stays fp32 and is the optimizer's parameter
  b.gradient = {4, 1};
  b.master_gradient = {0, 1};
  b.master_weight = {0, 1};
  b.optimizer_state = optimizer_state;
  b.gathered = half;
  return b;
}

ModelStateBytes single_format_state(ElementCost format, ElementCost optimizer_state) {
  ModelStateBytes b;
  b.weight = format;
  b.gradient = format;
  b.gathered = format;
  b.master_gradient = {0, 1};
  b.master_weight = {0, 1};
  b.optimizer_state = optimizer_state;
  return b;
}

}  // namespace memplan
