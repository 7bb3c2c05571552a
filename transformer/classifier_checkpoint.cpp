#include "transformer/classifier_checkpoint.hpp"

#include <cstdint>
#include <limits>
#include <variant>

#include "io/input_error.hpp"
#include "transformer/tokenizer.hpp"

namespace cpm {

namespace {

struct ShapeField {
  const char* name;
  int ModelShape::*member;
};
const ShapeField kShapeFields[] = {
    {"vocabulary", &ModelShape::vocabulary}, {"max_length", &ModelShape::max_length},
    {"d_model", &ModelShape::d_model},       {"heads", &ModelShape::heads},
    {"layers", &ModelShape::layers},         {"d_ff", &ModelShape::d_ff},
    {"classes", &ModelShape::classes},       {"features", &ModelShape::features}};

template <class T>
T entry(const ModelCheckpoint& c, const std::string& key, const std::string& path) {
  const ParameterSet::Value* v = c.description.find(key);
  if (!v || !std::holds_alternative<T>(*v))
    throw InputError(path + ": not a readable cpm model checkpoint (model." + key +
                     " is missing or of the wrong type)");
  return std::get<T>(*v);
}

// What TransformerClassifier's constructor allocates for `s` (its tensor list, in the same
// order): checked against the checkpoint before a model of a damaged shape is built.
std::int64_t parameter_count(const ModelShape& s) {
  const std::int64_t C = s.d_model, F = s.d_ff, R = (s.qk_tied ? 2 : 3) * C, K = s.classes;
  const std::int64_t layer = 2 * C + R * C + R + C * C + C + 2 * C + F * C + F + C * F + C;
  return s.vocabulary * C + s.max_length * C + s.layers * layer + 2 * C + K * C + K;
}

std::int64_t particle_count(const ModelShape& s) {
  return s.attention == AttentionKind::linear
             ? std::int64_t{s.layers} * s.heads * s.features * s.head_size()
             : 0;
}

}  // namespace

ModelCheckpoint classifier_checkpoint(const TransformerClassifier<float>& model,
                                      const std::string& variant, const std::string& dataset,
                                      const std::vector<std::string>& vocabulary) {
  const ModelShape& s = model.shape();
  ModelCheckpoint c;
  for (const auto& f : kShapeFields) c.description.set(f.name, std::int64_t{s.*f.member});
  c.description.set("attention", std::string(s.attention == AttentionKind::softmax   ? "softmax"
                                             : s.attention == AttentionKind::uniform ? "uniform"
                                                                                     : "linear"));
  c.description.set("feature_map", feature_map_name(s.feature_map.kind));
  c.description.set("feature_epsilon", s.feature_map.epsilon);
  c.description.set("normalise_keys",
                    std::string(key_normalisation_name(s.feature_map.key_normalisation)));
  c.description.set("qk_tied", std::int64_t{s.qk_tied});
  c.description.set("dropout", s.dropout);
  c.description.set("variant", variant);
  c.description.set("dataset", dataset);
  c.parameters = model.parameters();
  c.particles = model.particles();
  c.vocabulary = vocabulary;
  return c;
}

ModelShape checkpoint_shape(const ModelCheckpoint& c, const std::string& path) {
  ModelShape s;
  for (const auto& f : kShapeFields) {
    const std::int64_t value = entry<std::int64_t>(c, f.name, path);
    if (value < 0 || value > std::numeric_limits<std::int32_t>::max())
      throw InputError(path + ": model." + f.name + " = " + std::to_string(value) +
                       " is out of range (damaged checkpoint)");
    s.*f.member = static_cast<int>(value);
  }
  const std::string attention = entry<std::string>(c, "attention", path);
  s.attention = attention == "softmax"   ? AttentionKind::softmax
                : attention == "uniform" ? AttentionKind::uniform
                                         : AttentionKind::linear;
  try {
    s.feature_map.kind = feature_map_kind(entry<std::string>(c, "feature_map", path));
  } catch (const std::invalid_argument& e) {
    throw InputError(path + ": " + e.what());
  }
  s.feature_map.epsilon = entry<double>(c, "feature_epsilon", path);
  if (c.description.find("normalise_keys")) {  // absent in models of earlier builds: none
    try {
      s.feature_map.key_normalisation =
          key_normalisation(entry<std::string>(c, "normalise_keys", path));
    } catch (const std::invalid_argument& e) {
      throw InputError(path + ": " + e.what() + " (damaged checkpoint)");
    }
  }
  s.qk_tied = entry<std::int64_t>(c, "qk_tied", path) != 0;
  s.dropout = entry<double>(c, "dropout", path);
  try {
    s.validate();
  } catch (const std::invalid_argument& e) {
    throw InputError(path + ": " + e.what() + " (damaged checkpoint)");
  }
  if (s.d_ff < 1 || static_cast<std::int64_t>(c.parameters.size()) != parameter_count(s) ||
      static_cast<std::int64_t>(c.particles.size()) != particle_count(s))
    throw InputError(path +
                     ": parameter count does not match the model shape (damaged checkpoint)");
  if (!c.vocabulary.empty() && (static_cast<int>(c.vocabulary.size()) != s.vocabulary ||
                                !Tokenizer::is_vocabulary(c.vocabulary)))
    throw InputError(path + ": the word list is not a vocabulary of " +
                     std::to_string(s.vocabulary) +
                     " words starting with <pad>, <unk>, <sep> (damaged checkpoint)");
  return s;
}

std::string checkpoint_text(const ModelCheckpoint& c, const std::string& key,
                            const std::string& path) {
  return entry<std::string>(c, key, path);
}

void load_weights(TransformerClassifier<float>& model, const ModelCheckpoint& c,
                  const std::string& path) {
  require_same_shape(model.shape(), checkpoint_shape(c, path), path);
  if (c.parameters.size() != model.parameters().size() ||
      c.particles.size() != model.particles().size())
    throw InputError(path +
                     ": parameter count does not match the model shape (damaged checkpoint)");
  model.parameters() = c.parameters;
  model.particles() = c.particles;
}

void require_same_shape(const ModelShape& expected, const ModelShape& found,
                        const std::string& path) {
  std::string differences;
  for (const auto& f : kShapeFields)
    if (expected.*f.member != found.*f.member)
      differences += std::string(differences.empty() ? "" : ", ") + f.name + " " +
                     std::to_string(found.*f.member) + " (model " +
                     std::to_string(expected.*f.member) + ")";
  if (expected.attention != found.attention)
    differences += std::string(differences.empty() ? "" : ", ") + "attention kind";
  if (expected.qk_tied != found.qk_tied)
    differences += std::string(differences.empty() ? "" : ", ") + "qk_tied";
  if (!differences.empty())
    throw InputError(path + ": checkpoint is for another model size: " + differences);
}

}  // namespace cpm
