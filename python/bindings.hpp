#pragma once
// What the files of the Python module share: each binds one topic (frequencies, feature maps,
// phase A, commands, arrays) into the module, and all of them cross numpy arrays the same way.
//
// Layout. The library stores particles structure-of-arrays, an (N, d) column-major
// Eigen::MatrixXd (core/particles.hpp): in numpy an (N, d) float64 array in Fortran order
// (np.asfortranarray), the same bytes as a C-ordered (d, N) array. Such an array enters without a
// copy where a call works in place (`project`), and every matrix the module returns is the
// library's own, handed to numpy without a copy. Other layouts and dtypes are converted (one
// copy), as are the inputs of library functions that take an owned matrix.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Eigen/Dense>
#include <string>
#include <type_traits>
#include <utility>

#include "physics/riesz_kernel.hpp"

namespace cpm::python {

namespace py = pybind11;

void bind_arrays(py::module_& m);
void bind_frequencies(py::module_& m);
void bind_feature_maps(py::module_& m);
void bind_attention(py::module_& m);
void bind_phase_a(py::module_& m);
void bind_attention_phase_a(py::module_& m);
void bind_datasets(py::module_& m);
void bind_commands(py::module_& m);
void bind_classifier(py::module_& m);

using FortranArray = py::array_t<double, py::array::f_style | py::array::forcecast>;

// A 2-D float64 array in Fortran order (converted if it is not) and the Eigen view of its data.
// InputError (ValueError in Python), naming the argument, for another rank, a column count other
// than `cols` (when ≥ 0), or a NaN or infinite entry.
struct MatrixArgument {
  FortranArray array;
  Eigen::Map<const Eigen::MatrixXd> map;
};
MatrixArgument matrix_argument(const py::handle& value, const std::string& name,
                               Eigen::Index cols = -1);
// The same, copied into the owned matrix that most library functions take.
Eigen::MatrixXd matrix_copy(const py::handle& value, const std::string& name,
                            Eigen::Index cols = -1);

// A matrix or vector moved into numpy: the array's memory is the Eigen object's, kept alive by
// the array, and Fortran-ordered like it.
py::array to_numpy(Eigen::MatrixXd&& matrix);
py::array to_numpy(Eigen::VectorXd&& vector);

// Runs `work` without the GIL; afterwards a Ctrl-C that arrived meanwhile raises KeyboardInterrupt
// instead of returning (the result is dropped). Loops of the library that poll its stop flag end
// earlier (core/stop_request.hpp).
template <class Work>
auto without_gil(Work&& work) {
  if constexpr (std::is_void_v<decltype(work())>) {
    {
      py::gil_scoped_release release;
      work();
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  } else {
    auto result = [&] {
      py::gil_scoped_release release;
      return work();
    }();
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    return result;
  }
}

// The repulsion W of Riesz exponent s: 0 the log kernel, −1 the linear one, |z|^{−s} otherwise.
InteractionKernel riesz_kernel(double s);

// For a callback inside such work: with the GIL taken back briefly, a pending Ctrl-C is thrown
// (as KeyboardInterrupt) through the library's loop.
void raise_pending_signal();

}  // namespace cpm::python
