// TransformerClassifier<double>: the gradient checks and the reference comparisons run in double.
// Built as the library cpm_double (CMakeLists.txt), which the tests link and `cpm` does not.
#include "transformer/transformer_classifier_definitions.hpp"

namespace cpm {

template class TransformerClassifier<double>;

}  // namespace cpm
