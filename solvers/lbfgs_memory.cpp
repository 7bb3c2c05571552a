#include "solvers/lbfgs_memory.hpp"

#include <stdexcept>

namespace cpm {

LbfgsMemory::LbfgsMemory(int capacity)
    : capacity_(capacity), s_(capacity), y_(capacity), rho_(capacity), a_(capacity) {
  if (capacity < 1) throw std::invalid_argument("L-BFGS memory must hold at least one pair");
}

bool LbfgsMemory::push(const Eigen::MatrixXd& s, const Eigen::MatrixXd& y) {
  const double sy = frobenius_dot(s, y);
  if (!(sy > 1e-12 * s.norm() * y.norm())) return false;
  const int target = size_ < capacity_ ? slot(size_) : first_;
  if (size_ < capacity_)
    ++size_;
  else
    first_ = (first_ + 1) % capacity_;
  s_[target] = s;  // the slots keep their storage: no allocation once every slot was used
  y_[target] = y;
  rho_[target] = 1.0 / sy;
  return true;
}

void LbfgsMemory::apply(const Eigen::MatrixXd& v, Eigen::MatrixXd& z, const LinearMap& initial) {
  q_ = v;
  for (int i = size_ - 1; i >= 0; --i) {
    const int k = slot(i);
    a_[k] = rho_[k] * frobenius_dot(s_[k], q_);
    q_ -= a_[k] * y_[k];
  }
  initial(q_, z);
  for (int i = 0; i < size_; ++i) {
    const int k = slot(i);
    const double b = rho_[k] * frobenius_dot(y_[k], z);
    z += (a_[k] - b) * s_[k];
  }
}

}  // namespace cpm
