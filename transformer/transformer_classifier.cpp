// TransformerClassifier<float>, the precision `cpm train` runs in.
#include "transformer/transformer_classifier_definitions.hpp"

namespace cpm {

template class TransformerClassifier<float>;

}  // namespace cpm
