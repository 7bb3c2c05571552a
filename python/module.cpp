// The compiled part of the Python package `cpm` (docs/guide/python.md): cpm._cpm, whose
// functions python/cpm/__init__.py re-exports. Errors cross as Python exceptions with the command
// line's one-line messages: bad input (InputError, and std::invalid_argument from the library's
// own checks) as ValueError, a stop on Ctrl-C (StopRequested) as KeyboardInterrupt.
#include <stdexcept>

#include "core/stop_request.hpp"
#include "cpm_version.hpp"
#include "io/input_error.hpp"
#include "python/bindings.hpp"

PYBIND11_MODULE(_cpm, m) {
  namespace py = pybind11;
  m.doc() = "cpm: mean-field particle dynamics and random-feature kernels (compiled part)";
  m.attr("__version__") = CPM_VERSION;
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const cpm::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const cpm::StopRequested& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });
  cpm::python::bind_arrays(m);
  cpm::python::bind_frequencies(m);
  cpm::python::bind_feature_maps(m);
  cpm::python::bind_attention(m);
  cpm::python::bind_phase_a(m);
  cpm::python::bind_attention_phase_a(m);
  cpm::python::bind_datasets(m);
  cpm::python::bind_commands(m);
  cpm::python::bind_classifier(m);
}
