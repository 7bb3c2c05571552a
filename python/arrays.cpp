// numpy ↔ Eigen (bindings.hpp) and the in-place projection of particles onto a domain, the call
// through which an (N, d) array enters and leaves the module without a copy.
#include <cmath>
#include <memory>
#include <optional>
#include <sstream>

#include "core/domain.hpp"
#include "io/input_error.hpp"
#include "python/bindings.hpp"

namespace cpm::python {

namespace {

std::string shape_text(const py::array& a) {
  std::ostringstream out;
  out << '(';
  for (py::ssize_t i = 0; i < a.ndim(); ++i) out << (i ? ", " : "") << a.shape(i);
  out << (a.ndim() == 1 ? ",)" : ")");
  return out.str();
}

void check_shape(const py::array& a, const std::string& name, Eigen::Index cols) {
  if (a.ndim() != 2)
    throw InputError(name + ": expected a 2-D array (rows, columns), got shape " + shape_text(a));
  if (cols >= 0 && a.shape(1) != cols)
    throw InputError(name + ": expected " + std::to_string(cols) + " columns, got shape " +
                     shape_text(a));
}

void check_finite(const Eigen::Ref<const Eigen::MatrixXd>& x, const std::string& name) {
  if (x.allFinite()) return;
  for (Eigen::Index j = 0; j < x.cols(); ++j)
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      if (!std::isfinite(x(i, j)))
        throw InputError(name + ": entry (" + std::to_string(i) + ", " + std::to_string(j) +
                         ") is " + (std::isnan(x(i, j)) ? "NaN" : "infinite"));
}

Domain make_domain(const std::string& kind, int dim, const std::optional<Eigen::VectorXd>& centre,
                   double radius, const std::optional<Eigen::VectorXd>& lower,
                   const std::optional<Eigen::VectorXd>& upper) {
  auto vector = [&](const std::optional<Eigen::VectorXd>& v, const char* name, double fill) {
    if (!v) return Eigen::VectorXd(Eigen::VectorXd::Constant(dim, fill));
    if (v->size() != dim)
      throw InputError(std::string(name) + ": expected " + std::to_string(dim) +
                       " coordinates, got " + std::to_string(v->size()));
    return *v;
  };
  if (kind == "whole_space") return Domain::whole_space(dim);
  if (kind == "ball") {
    if (!(radius > 0.0 && std::isfinite(radius))) throw InputError("radius: must be > 0");
    return Domain::ball(vector(centre, "centre", 0.0), radius);
  }
  if (kind == "box") {
    if (!lower || !upper) throw InputError("a box needs lower and upper");
    const Eigen::VectorXd lo = vector(lower, "lower", 0.0), hi = vector(upper, "upper", 0.0);
    if (!(lo.array() < hi.array()).all()) throw InputError("lower: must be below upper");
    return Domain::box(lo, hi);
  }
  throw InputError("domain: unknown kind '" + kind + "' (whole_space, ball, box)");
}

}  // namespace

MatrixArgument matrix_argument(const py::handle& value, const std::string& name,
                               Eigen::Index cols) {
  FortranArray array = FortranArray::ensure(value);
  if (!array) throw InputError(name + ": expected an array of numbers");
  check_shape(array, name, cols);
  Eigen::Map<const Eigen::MatrixXd> map(array.data(), array.shape(0), array.shape(1));
  check_finite(map, name);
  return {std::move(array), map};
}

Eigen::MatrixXd matrix_copy(const py::handle& value, const std::string& name, Eigen::Index cols) {
  return matrix_argument(value, name, cols).map;
}

py::array to_numpy(Eigen::MatrixXd&& matrix) {
  auto* owned = new Eigen::MatrixXd(std::move(matrix));
  py::capsule keeper(owned, [](void* p) { delete static_cast<Eigen::MatrixXd*>(p); });
  const auto item = static_cast<py::ssize_t>(sizeof(double));
  return py::array_t<double>({owned->rows(), owned->cols()}, {item, item * owned->rows()},
                             owned->data(), keeper);
}

py::array to_numpy(Eigen::VectorXd&& vector) {
  auto* owned = new Eigen::VectorXd(std::move(vector));
  py::capsule keeper(owned, [](void* p) { delete static_cast<Eigen::VectorXd*>(p); });
  return py::array_t<double>({owned->size()}, {static_cast<py::ssize_t>(sizeof(double))},
                             owned->data(), keeper);
}

void raise_pending_signal() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

void bind_arrays(py::module_& m) {
  m.def(
      "project",
      [](py::array positions, const std::string& domain, std::optional<Eigen::VectorXd> centre,
         double radius, std::optional<Eigen::VectorXd> lower,
         std::optional<Eigen::VectorXd> upper) {
        // In place: the array must already be the library's layout, writable and finite.
        if (!py::isinstance<py::array_t<double>>(positions) ||
            !(positions.flags() & py::array::f_style) || !positions.writeable())
          throw InputError(
              "positions: expected a writable float64 array in Fortran order "
              "(np.asfortranarray), the library's (N, d) layout");
        check_shape(positions, "positions", -1);
        Eigen::Map<Eigen::MatrixXd> x(static_cast<double*>(positions.mutable_data()),
                                      positions.shape(0), positions.shape(1));
        check_finite(x, "positions");
        const Domain d =
            make_domain(domain, static_cast<int>(x.cols()), centre, radius, lower, upper);
        {
          py::gil_scoped_release release;
#pragma omp parallel for if (x.rows() > 10000)
          for (Eigen::Index k = 0; k < x.rows(); ++k) {
            Eigen::VectorXd row = x.row(k).transpose();
            d.project(row);
            x.row(k) = row.transpose();
          }
        }
        return positions;
      },
      py::arg("positions"), py::arg("domain") = "ball", py::arg("centre") = py::none(),
      py::arg("radius") = 1.0, py::arg("lower") = py::none(), py::arg("upper") = py::none(),
      "Projects every row of an (N, d) Fortran-ordered float64 array onto the domain Π_D\n"
      "(core/domain.hpp: 'whole_space', 'ball' of centre and radius, 'box' of lower and upper),\n"
      "in place, and returns the same array: no copy in or out.");
}

}  // namespace cpm::python
