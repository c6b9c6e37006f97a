"""The repository's layering: the modules (the model, the tasks and the ops layer beside the loop) import no
script (train.py, bench.py, sample.py and the papers' scripts), model.py imports torch alone, and none imports
torch's compiler until a model is compiled."""

import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ('model', 'head_loss', 'hardware', 'checkpoint', 'run_guard', 'runconfig', 'prefetch', 'tasks',
           'text_data', 'configurator', 'files', 'memory')
SCRIPTS = ('train', 'bench', 'sample', 'sde', 'universal', 'bayes_paths')


def imported(name):
    """The top-level names of every module that ROOT/name.py imports, anywhere in the file."""
    with open(os.path.join(ROOT, f'{name}.py')) as f:
        tree = ast.parse(f.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split('.')[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split('.')[0])
    return names


@pytest.mark.parametrize('module', MODULES)
def test_a_module_imports_no_script(module):
    assert not imported(module) & set(SCRIPTS)


def test_the_loop_imports_no_papers_script():
    """train.py is the core's loop: paper 2's construction reaches it through runconfig.write_construction, which
    imports universal.py only when a run names one."""
    assert not imported('train') & {'universal', 'bayes_paths', 'sde'}
    code = "import runconfig, sys; print('universal' in sys.modules)"
    assert subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True).stdout == 'False\n'


def test_every_python_file_at_the_root_is_a_module_or_a_script():
    files = {f[:-3] for f in os.listdir(ROOT) if f.endswith('.py')}
    assert files == set(MODULES) | set(SCRIPTS)


@pytest.mark.parametrize('name', MODULES + SCRIPTS)
def test_every_module_and_script_has_its_test_file(name):
    assert os.path.isfile(os.path.join(ROOT, 'tests', f'test_{name}.py')), f"add tests/test_{name}.py"


def test_model_imports_torch_alone():
    assert imported('model') <= {'math', 'dataclasses', 'torch'}


def test_a_scripts_help_does_not_wait_for_torchs_compiler():
    """Importing every module and script's imports leaves torch's compiler (torch._dynamo, torch._inductor: one
    to two seconds) unimported until a model is compiled, so that `--help` starts about as fast as torch."""
    code = ("import sys; import " + ", ".join(MODULES) + "; import universal, bayes_paths, sde; "
            "print(sorted(m for m in ('torch._dynamo', 'torch._inductor') if m in sys.modules))")
    r = subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == '[]'


def test_a_test_that_times_out_leaves_no_process_behind(reap_processes, tmp_path):
    """conftest's reap_processes: a child killed by subprocess.run's timeout leaves its own child (a driver's
    train.py, torchrun's ranks); the fixture's kill_groups ends the whole group."""
    import time
    from conftest import kill_groups
    pid_file = tmp_path / 'pid'
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(['sh', '-c', 'sleep 300 & echo $! > "$0"; wait', str(pid_file)], timeout=1)
    grandchild = int(pid_file.read_text())

    def alive():
        try:
            with open(f'/proc/{grandchild}/stat') as f:
                return f.read().split(')')[-1].split()[0] != 'Z'        # a zombie has ended
        except FileNotFoundError:
            return False

    assert alive()                                               # the timeout killed its parent, not it
    kill_groups(reap_processes)
    deadline = time.monotonic() + 5
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(), f"pid {grandchild} survived its group's SIGKILL"
