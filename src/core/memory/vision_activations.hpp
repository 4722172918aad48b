#pragma once
// The vision tower's part of the training activations (vision_activations.cpp): what a
// vision-language model keeps for backward of the images of one sample, beside the language
// model's ledger. A trained tower keeps its layers' tensors like any transformer layer (one ViT
// layer per image: tokens x hidden, full bidirectional attention); a frozen one (LLaVA's and
// LoRA recipes' default) keeps nothing and only needs the working memory of its largest layer
// while it runs; the projector keeps its inputs when it trains.

#include <cstdint>
#include <string>
#include <vector>

#include <memplan/model.hpp>
#include "core/memory/activations.hpp"

namespace memplan {

struct VisionActivations {
  bool trained = false;                     // the tower's weights train
  bool projector_trained = false;           // the projector's weights train
  uint64_t images = 0;                      // images per sample
  uint64_t layer_bytes_per_image = 0;       // one trained layer's saved bytes for one image
  uint64_t tower_bytes_per_image = 0;       // the trained tower's saved bytes for one image (0 frozen)
  uint64_t projector_bytes_per_image = 0;   // the projector's saved bytes for one image
  uint64_t bytes_per_sample = 0;            // images x (tower + projector)
  uint64_t fixed_bytes = 0;                 // autocast's half copies of the trained tower's weights
  uint64_t transient_bytes_per_image = 0;   // frozen tower: its largest layer's forward working set
  uint64_t patches_per_sample = 0;          // Qwen2-VL: all images of a sample in one patch sequence
  uint64_t transient_bytes_per_sample = 0;  // Qwen2-VL's frozen tower: its working set over them
  std::vector<SavedTensor> rows;            // for one sample (recording only), per image
  std::vector<SavedTensor> sample_rows;     // for one sample (recording only), per sample
  // mllama's cross-attention layers (cross_attention_activations.hpp), included in bytes_per_sample:
  // n layers x layer bytes + shared + rebuild, per sample.
  uint64_t cross_layers = 0, cross_layer_bytes = 0, cross_shared_bytes = 0, cross_rebuild_bytes = 0;
  uint64_t cross_bytes_per_sample = 0;
  std::vector<std::string> notes;
};

// The tower's and projector's activations for `images` images per sample. opts: the language
// model's options (format, attention, checkpointing, autocast); train_tower: the tower trains;
// train_projector: the projector trains.
VisionActivations vision_activations(const VisionTower& tower, uint64_t images, bool train_tower,
                                     bool train_projector, const ActivationOptions& opts);

}  // namespace memplan
