"""Ctrl-C during a long call (a run, learning particles, a gas of features): the call ends in one
KeyboardInterrupt, and what a stopped run leaves behind is readable (the command line's clean stop, core/stop_request.hpp)."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import sys, numpy as np, cpm
    what, folder = sys.argv[1], sys.argv[2]
    print("ready", flush=True)
    try:
        if what == "run":
            cpm.run_config({{
                "particles": {{"n": 3000, "seed": 1}},
                "domain": {{"kind": "ball", "centre": [0.0, 0.0], "radius": 3.0}},
                "interaction": {{"kernel": "log", "lambda": 1.0}},
                "initial": {{"law": "gaussian", "centre": [0.0, 0.0], "std": 0.5}},
                "dynamics": {{"beta": 20.0, "step": 1e-4, "t_end": 100.0, "outputs": 2}},
            }}, "run", output=folder)
        elif what == "coulomb":  # without a stop inside the gas, this never ends
            cpm.generate_features("coulomb", n=2048, dim=16, tolerance=1e-300,
                                  max_iterations=10**9)
        else:
            rng = np.random.default_rng(0)
            x = rng.normal(size=(2000, 4))
            cpm.learn_particles(x, (x[:, 0] > 0).astype(int), n=256, steps=10**6, record_every=1)
    except KeyboardInterrupt as stop:
        print("interrupted:", stop, flush=True)
        sys.exit(3)
    sys.exit(0)
""")


@pytest.mark.parametrize("what", ["run", "learn_particles", "coulomb"])
def test_ctrl_c_raises_keyboard_interrupt_once(tmp_path, what):
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(), what, str(tmp_path / "run")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ))
    assert child.stdout.readline().strip() == "ready"
    try:
        child.wait(timeout=1.5)  # still running after its start-up
    except subprocess.TimeoutExpired:
        pass
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 3, (out, err)
    assert out.count("interrupted:") == 1
    if what == "run":
        import cpm
        run = cpm.reader.load_run(tmp_path / "run")  # the frame written at the stop
        assert run.frames.shape[1] == 3000
