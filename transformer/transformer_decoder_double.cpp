// TransformerDecoder<double>: the gradient checks run in double. Built into the cpm_double
// library (CMakeLists.txt), which the tests link and `cpm` does not.
#include "transformer/transformer_decoder_definitions.hpp"

namespace cpm {

template class TransformerDecoder<double>;

}  // namespace cpm
