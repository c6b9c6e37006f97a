"""The repository's layering: the modules (the model, the tasks and the ops layer beside the loop) import no
script (train.py, bench.py, sample.py and the papers' scripts), and model.py imports torch alone."""

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ('model', 'head_loss', 'hardware', 'checkpoint', 'run_guard', 'runconfig', 'prefetch', 'tasks',
           'text_data', 'configurator')
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


def test_every_python_file_at_the_root_is_a_module_or_a_script():
    files = {f[:-3] for f in os.listdir(ROOT) if f.endswith('.py')}
    assert files == set(MODULES) | set(SCRIPTS)


def test_model_imports_torch_alone():
    assert imported('model') <= {'math', 'dataclasses', 'torch'}
