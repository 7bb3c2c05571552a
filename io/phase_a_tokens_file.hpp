#pragma once
// What Phase A aligned on, written on request ([phase_a] write_tokens, cpm train): for every
// layer l and head h, the group layer_<l>/head_<h> holds
//   keys, queries      (rows, d_head) the head's projections of every token of the Phase A
//                      sequences, in sequence order, before the feature input scale (float values
//                      stored as double; with tied W_Q = W_K the queries are the keys)
//   initial_particles  (m, d_head) the particles Phase A started from
//   final_particles    (m, d_head) where it left them, in double (model.h5 keeps them as float)
// and the root holds tokens (n, L) (the token ids of the n sequences, right-padded with 0),
// sequence_lengths (n) and labels (n). Every dataset is
// row-major, so h5py and numpy read each matrix as it is written here. cpm.attention_phase_a
// given these arrays runs the same dynamics (tests/python/test_attention_phase_a.py).
#include <H5Cpp.h>
#include <Eigen/Dense>
#include <cstddef>
#include <string>
#include <vector>

namespace cpm {

class PhaseATokensFile {
 public:
  // Creates `path` (replacing a file there); InputError naming the path when it cannot.
  PhaseATokensFile(const std::string& path, const std::vector<std::vector<int>>& tokens,
                   const Eigen::VectorXi& labels);

  void add_head(int layer, int head, const Eigen::MatrixXd& keys, const Eigen::MatrixXd& queries,
                const Eigen::MatrixXd& initial, const Eigen::MatrixXd& final);

 private:
  std::string path_;
  H5::H5File file_;
};

}  // namespace cpm
