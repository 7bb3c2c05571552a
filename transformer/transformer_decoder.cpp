// TransformerDecoder<float>, the precision the recall tasks train in.
#include "transformer/transformer_decoder_definitions.hpp"

namespace cpm {

template class TransformerDecoder<float>;

}  // namespace cpm
