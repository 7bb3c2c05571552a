#pragma once
// The closed convex domain D that particles live in, with the Euclidean projection Π_D
// (the discrete counterpart of the PDE's zero-flux wall). A domain describes; it owns no state.
#include <Eigen/Dense>
#include <string>

namespace cpm {

class Domain {
 public:
  enum class Kind { whole_space, ball, box };

  static Domain whole_space(int dim);
  static Domain ball(Eigen::VectorXd centre, double radius);
  static Domain box(Eigen::VectorXd lower, Eigen::VectorXd upper);

  Kind kind() const { return kind_; }
  int dim() const { return dim_; }
  const Eigen::VectorXd& centre() const { return centre_; }  // ball only
  double radius() const { return radius_; }                  // ball only
  // Bounding box: the ball's enclosing cube, the box itself; infinite for whole space.
  const Eigen::VectorXd& lower() const { return lower_; }
  const Eigen::VectorXd& upper() const { return upper_; }

  bool contains(const Eigen::Ref<const Eigen::VectorXd>& point) const;
  // Nearest point of D to `point`, in place.
  void project(Eigen::Ref<Eigen::VectorXd> point) const;
  // Π_D applied to every row of an (N, d) position matrix.
  void project_all(Eigen::MatrixXd& positions) const;

  std::string describe() const;

 private:
  Kind kind_ = Kind::whole_space;
  int dim_ = 1;
  Eigen::VectorXd centre_, lower_, upper_;
  double radius_ = 0.0;
};

}  // namespace cpm
