// The model checkpoint of `cpm train` (`cpm eval`, `cpm predict`, the paired protocol): the
// recipe (fuzz/hdf5_recipe.hpp) becomes an HDF5 file, which is loaded, its shape read, its
// weights copied into a classifier of that shape and its vocabulary used to encode a text.
#include "fuzz/fuzz_input.hpp"
#include "fuzz/hdf5_recipe.hpp"
#include "io/model_checkpoint.hpp"
#include "transformer/classifier_checkpoint.hpp"
#include "transformer/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = cpm::fuzz::write_scratch_file({}, "-model.h5");
  cpm::fuzz::write_hdf5_recipe(cpm::fuzz::as_text(data, size), path);
  cpm::fuzz::expect_input_error_only([&] {
    const cpm::ModelCheckpoint checkpoint = cpm::load_model_checkpoint(path);
    const cpm::ModelShape shape = cpm::checkpoint_shape(checkpoint, path);
    cpm::checkpoint_text(checkpoint, "variant", path);
    cpm::TransformerClassifier<float> model(shape, 1, shape.max_length);
    cpm::load_weights(model, checkpoint, path);
    if (!checkpoint.vocabulary.empty())  // as `cpm predict` encodes its texts
      cpm::Tokenizer(checkpoint.vocabulary).encode("a fuzzed text .", shape.max_length);
  });
  return 0;
}
