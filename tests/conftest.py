import os
import signal
import sys
import tempfile

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# the CPU peak that train.py caches per machine (hardware.cpu_peak_flops) is measured anew in a cache of the test
# session's own: a measurement taken while the tests load the machine must not become the user's MFU peak
os.environ['XDG_CACHE_HOME'] = tempfile.mkdtemp(prefix='pytest-cache-home-')


def pytest_configure(config):
    # torch's own torch.utils.mkldnn, imported by torch.compile's CPU path, still uses the API it deprecates
    config.addinivalue_line('filterwarnings',
                            'ignore:`torch.jit.script_method` is deprecated:DeprecationWarning:torch')


def script_env(**settings):
    """The environment for experiments/gpu's scripts: this one with settings, and this Python first on PATH (the
    scripts call `python`)."""
    return dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ['PATH'], **settings)


@pytest.fixture
def one_thread():
    """One torch thread for the test, as OMP_NUM_THREADS=1 gives subprocesses: on cores that other processes load,
    torch's spinning worker threads make a tiny model's steps and small float64 ops many times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def keep_signal_handlers():
    """train.py run in the test's process (runpy) installs its SIGINT / SIGTERM handlers: restore pytest's."""
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in handlers.items():
        signal.signal(sig, handler)
