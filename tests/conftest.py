import os
import signal
import subprocess
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


def kill_groups(processes):
    """SIGKILL the process group of every process in processes that a test started and left running (a child killed by
    subprocess.run's timeout leaves its own children: torchrun's ranks, a driver's train.py)."""
    for p in processes:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):   # started in the test's own group (start_new_session=False)
            if p.poll() is None:
                p.kill()
        p.poll()


@pytest.fixture(autouse=True)
def reap_processes(monkeypatch):
    """Every process a test starts gets a process group of its own (start_new_session), and the whole group is killed
    when the test ends, passed, failed or timed out: no train.py trains on after pytest has moved on."""
    started, init = [], subprocess.Popen.__init__

    def popen(self, *args, **kwargs):
        kwargs.setdefault('start_new_session', True)
        init(self, *args, **kwargs)
        started.append(self)

    monkeypatch.setattr(subprocess.Popen, '__init__', popen)
    yield started
    kill_groups(started)
