"""numpy arrays cross the module without copies where the layout allows: an (N, d) float64 array
in Fortran order is the library's particle storage (core/particles.hpp)."""
import numpy as np
import pytest

import cpm


def test_a_million_particles_pass_in_and_out_without_a_copy():
    x = np.asfortranarray(np.random.default_rng(1).normal(size=(10**6, 3)))
    address = x.ctypes.data
    y = cpm.project(x, "ball", radius=1.0)
    assert y is x and y.ctypes.data == address
    assert np.linalg.norm(x, axis=1).max() <= 1.0 + 1e-12  # projected in place


def test_returned_arrays_are_the_library_memory_in_its_layout():
    omega = cpm.generate_features("iid", 10**6, 3, seed=2)
    assert omega.shape == (10**6, 3) and omega.dtype == np.float64
    assert omega.flags.f_contiguous and not omega.flags.owndata  # owned by the Eigen matrix
    address = omega.ctypes.data
    assert cpm.project(omega, "box", lower=[-1, -1, -1], upper=[1, 1, 1]).ctypes.data == address
    assert np.abs(omega).max() <= 1.0


def test_a_c_ordered_array_is_refused_in_place_with_one_line():
    with pytest.raises(ValueError, match="Fortran order") as error:
        cpm.project(np.zeros((10, 3)), "ball")
    assert "\n" not in str(error.value)


def test_inputs_of_any_layout_and_dtype_are_converted():
    x = np.random.default_rng(3).normal(size=(20, 2)).astype(np.float32)
    omega = cpm.generate_features("sobol", 8, 2)
    assert np.array_equal(cpm.feature_map("favor", x, omega),
                          cpm.feature_map("favor", np.asfortranarray(x, dtype=np.float64), omega))
