#include "core/initial_law.hpp"

#include <cmath>
#include <numbers>
#include <sstream>

#include "core/random_stream.hpp"

namespace cpm {

namespace {
double unit_ball_volume(int d) {
  return std::pow(std::numbers::pi, 0.5 * d) / std::tgamma(0.5 * d + 1.0);
}
}  // namespace

double InitialLaw::density(const Eigen::Ref<const Eigen::VectorXd>& p) const {
  const int d = static_cast<int>(p.size());
  switch (kind) {
    case Kind::gaussian: {
      const double r2 = (p - centre).squaredNorm() / (scale * scale);
      return std::exp(-0.5 * r2) / std::pow(2.0 * std::numbers::pi * scale * scale, 0.5 * d);
    }
    case Kind::uniform_ball:
      return (p - centre).norm() <= scale ? 1.0 / (unit_ball_volume(d) * std::pow(scale, d)) : 0.0;
    case Kind::uniform_box: {
      const bool inside = (p.array() >= lower.array()).all() && (p.array() <= upper.array()).all();
      return inside ? 1.0 / (upper - lower).prod() : 0.0;
    }
  }
  return 0.0;
}

std::string InitialLaw::describe() const {
  std::ostringstream o;
  switch (kind) {
    case Kind::gaussian:
      o << "gaussian mean [" << centre.transpose() << "] std " << scale;
      break;
    case Kind::uniform_ball:
      o << "uniform on ball centre [" << centre.transpose() << "] radius " << scale;
      break;
    case Kind::uniform_box:
      o << "uniform on box [" << lower.transpose() << "] x [" << upper.transpose() << "]";
      break;
  }
  return o.str();
}

Particles sample_particles(const InitialLaw& law, Eigen::Index n, std::uint64_t seed,
                           std::uint64_t replica) {
  Particles p = sample_particle_ids(law, 0, n, seed, replica);
  p.ids = {};  // row k is particle k
  return p;
}

Particles sample_particle_ids(const InitialLaw& law, std::uint64_t first_id, Eigen::Index n,
                              std::uint64_t seed, std::uint64_t replica) {
  const Eigen::Index d =
      law.kind == InitialLaw::Kind::uniform_box ? law.lower.size() : law.centre.size();
  Particles p(n, d);
  p.ids.resize(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
  for (Eigen::Index k = 0; k < n; ++k) {
    const std::uint64_t id = first_id + static_cast<std::uint64_t>(k);
    p.ids[static_cast<std::size_t>(k)] = id;
    RandomStream s(seed, RandomPurpose::initial_positions, replica, id);
    switch (law.kind) {
      case InitialLaw::Kind::gaussian:
        for (Eigen::Index a = 0; a < d; ++a)
          p.positions(k, a) = law.centre[a] + law.scale * s.normal();
        break;
      case InitialLaw::Kind::uniform_ball: {
        // Uniform direction times radius U^{1/d}.
        Eigen::VectorXd z(d);
        for (Eigen::Index a = 0; a < d; ++a) z[a] = s.normal();
        const double r = law.scale * std::pow(s.uniform(), 1.0 / static_cast<double>(d));
        p.positions.row(k) = (law.centre + (r / z.norm()) * z).transpose();
        break;
      }
      case InitialLaw::Kind::uniform_box:
        for (Eigen::Index a = 0; a < d; ++a)
          p.positions(k, a) = law.lower[a] + (law.upper[a] - law.lower[a]) * s.uniform();
        break;
    }
  }
  return p;
}

}  // namespace cpm
