// ModelShape: which layers attend, and the sizes validate() refuses for the convolution hybrid.
#include <gtest/gtest.h>

#include <stdexcept>

#include "transformer/model_shape.hpp"
#include "transformer/transformer_classifier.hpp"

namespace cpm {
namespace {

ModelShape small_shape() {
  ModelShape s;
  s.vocabulary = 9;
  s.max_length = 7;
  s.d_model = 8;
  s.heads = 2;
  s.layers = 2;
  s.d_ff = 12;
  s.features = 5;
  s.dropout = 0.0;
  return s;
}

TEST(ModelShape, EveryLayerAttendsWithoutConvolutionAndOddLayersWithIt) {
  ModelShape s = small_shape();
  s.layers = 4;
  for (int l = 0; l < 4; ++l) EXPECT_TRUE(s.attention_layer(l)) << l;
  s.conv_kernel = 3;
  for (int l = 0; l < 4; ++l) EXPECT_EQ(s.attention_layer(l), l % 2 == 1) << l;
}

TEST(ModelShape, ValidateRefusesANegativeKernelAndAConvolutionWithOneLayer) {
  ModelShape s = small_shape();
  s.conv_kernel = -1;
  EXPECT_THROW(s.validate(), std::invalid_argument);
  s.conv_kernel = 3;
  s.layers = 1;
  EXPECT_THROW(s.validate(), std::invalid_argument);
  s.layers = 2;
  EXPECT_NO_THROW(s.validate());
  s.conv_kernel = 1;
  s.layers = 3;
  EXPECT_NO_THROW(s.validate());
  s.conv_kernel = 0;
  s.layers = 1;
  EXPECT_NO_THROW(s.validate());
}

// The classifier has attention layers with position embeddings only.
TEST(ModelShape, TheClassifierRefusesTheConvolutionHybridAndMissingPositions) {
  ModelShape s = small_shape();
  s.conv_kernel = 3;
  EXPECT_THROW(TransformerClassifier<double>(s, 1, 7), std::invalid_argument);
  s.conv_kernel = 0;
  s.position_embedding = false;
  EXPECT_THROW(TransformerClassifier<double>(s, 1, 7), std::invalid_argument);
  s.position_embedding = true;
  EXPECT_NO_THROW(TransformerClassifier<double>(s, 1, 7));
}

}  // namespace
}  // namespace cpm
