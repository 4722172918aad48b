#include "core/memory/tensor_sizes.hpp"

#include "core/base/checked.hpp"

namespace memplan {

std::vector<uint64_t> divide(uint64_t total, const std::vector<uint64_t>& weights) {
  std::vector<uint64_t> out(weights.size(), 0);
  u128 sum = 0;
  for (uint64_t w : weights) sum += w;
  if (weights.empty() || sum == 0) return out;
  uint64_t given = 0;
  size_t largest = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    out[i] = static_cast<uint64_t>(static_cast<u128>(total) * weights[i] / sum);
    given += out[i];
    if (weights[i] > weights[largest]) largest = i;
  }
  out[largest] += total - given;
  return out;
}

Sized sized(uint64_t total, const std::vector<uint64_t>& elements, uint64_t count, uint64_t scalars) {
  Sized out;
  u128 sum = 0;
  for (uint64_t n : elements) sum += n;
  const uint64_t per = count ? total / count : 0;
  const uint64_t beyond = per ? total - per * count : 0;  // per * count <= total
  if (per == 0 || sum == 0 || sum > count || beyond > scalars) {
    out.bytes = divide(total, elements);
    return out;
  }
  out.per_element = per;
  for (uint64_t n : elements) out.bytes.push_back(checked_mul(n, per, "tensor bytes"));
  const uint64_t rest = total - static_cast<uint64_t>(static_cast<u128>(per) * sum);
  if (rest) out.bytes.push_back(rest);
  return out;
}

}  // namespace memplan
