"""configurator.py: nanoGPT's semantics (files, then --key=value, later wins), typed keys, one-line errors,
--help, and subcommands."""

import os
import subprocess
import sys

import pytest

from configurator import ConfigError, configure, run_command

ANNOTATIONS = {'rope': bool | None, 'norm': str | None}


def defaults():
    return dict(learning_rate=1e-3, max_iters=100, compile=True, out_dir='out', variant='standard', rope=None,
                norm=None, widths=(10, 30))


def run(argv, c=None):
    c = defaults() if c is None else c
    configure(c, argv, annotations=ANNOTATIONS, exit_on_error=False)
    return c


def test_files_then_overrides_later_wins(tmp_path):
    cfg = tmp_path / 'c.py'
    cfg.write_text("# a config\nimport math\nlearning_rate = 3e-4\nmax_iters = 7\n_private = 1\n")
    c = run([str(cfg), '--max_iters=9', '--learning_rate=1', '--compile=False', '--out_dir=123', '--rope=True'])
    assert c['max_iters'] == 9 and c['compile'] is False and c['out_dir'] == '123' and c['rope'] is True
    assert c['learning_rate'] == 1.0 and isinstance(c['learning_rate'], float)   # an int where a float is fine


def test_an_older_key_sets_its_new_name(tmp_path):
    """configurator.RENAMED: a config file's or flag's lm_block_size / sentiment_block_size set block_size, the one
    name of the sequence length; a saved config's own task's older key fills its block_size when that is 0."""
    from configurator import saved_with_current_names
    cfg = tmp_path / 'c.py'
    cfg.write_text("lm_block_size = 32\n")
    assert run([str(cfg)], dict(defaults(), block_size=0))['block_size'] == 32
    assert run([str(cfg), '--sentiment_block_size=64'], dict(defaults(), block_size=0))['block_size'] == 64
    with pytest.raises(ConfigError, match="unknown config key 'lm_block_size'"):
        run([str(cfg)])                                   # a script without block_size: no new name to set
    saved = dict(task='lm', block_size=0, lm_block_size=512, sentiment_block_size=256)
    assert saved_with_current_names(saved, {'block_size': 0})['block_size'] == 512
    assert saved_with_current_names(dict(saved, block_size=1024), {'block_size': 0})['block_size'] == 1024
    assert saved_with_current_names(dict(saved, task='sentiment'), {'block_size': 0})['block_size'] == 256


def test_value_with_equals_sign_is_kept_whole():
    assert run(['--out_dir=runs/lr=3e-4'])['out_dir'] == 'runs/lr=3e-4'


def test_none_defaults_are_typed_by_their_annotation():
    assert run(['--rope=false'])['rope'] is False          # true/false in any case for a bool
    assert run(['--rope=TRUE'])['rope'] is True
    assert run(['--rope=None'])['rope'] is None
    assert run(['--norm=layer'])['norm'] == 'layer'         # str | None keeps the text
    with pytest.raises(ConfigError, match=r"rope expects bool or None, got 'maybe'"):
        run(['--rope=maybe'])
    with pytest.raises(TypeError, match='no annotation'):   # a None default without a type is a script's bug
        configure(dict(x=None), ['--x=1'], exit_on_error=False)


def test_tuples_take_lists_and_single_values_and_check_elements(tmp_path):
    assert run(['--widths=5,50,500'])['widths'] == (5, 50, 500)
    assert run(['--widths=7'])['widths'] == (7,)
    cfg = tmp_path / 'c.py'
    cfg.write_text("widths = [1, 2]\n")
    assert run([str(cfg)])['widths'] == (1, 2)
    with pytest.raises(ConfigError, match='widths expects tuple of int'):
        run(['--widths=a,b'])


@pytest.mark.parametrize('argv, message', [
    (['--lr=1e-3'], "unknown config key 'lr'"),
    (['--max_iters=1.5'], 'max_iters expects int'),
    (['--compile=1'], 'compile expects bool'),
    (['--learning_rate=fast'], 'learning_rate expects float'),
    (['--max_iters=3=4'], 'max_iters expects int'),
    (['--max_iters'], 'max_iters needs a value: --max_iters=<int>'),
    (['-x'], 'expected --key=value'),
    (['missing/config.py'], 'config file not found: missing/config.py'),
    ([os.path.dirname(os.path.abspath(__file__))], 'is a folder; name a config file in it'),
    (['--learning_rate=1e999'], 'learning_rate must be a finite number'),
])
def test_errors_name_the_key_or_file(argv, message):
    with pytest.raises(ConfigError, match=message):
        run(argv)


def test_unknown_key_in_config_file(tmp_path):
    cfg = tmp_path / 'bad.py'
    cfg.write_text("learning_rat = 1e-3\n")
    with pytest.raises(ConfigError, match="bad.py: unknown config key 'learning_rat'"):
        run([str(cfg)])


def test_foreign_collects_unknown_keys_instead_of_rejecting_them(tmp_path):
    cfg = tmp_path / 'train_config.py'
    cfg.write_text("max_iters = 7\ntask = 'dyck1'\n")
    foreign = {}
    c = dict(max_iters=0)
    configure(c, [str(cfg), '--max_iters=9'], foreign=foreign, exit_on_error=False)
    assert c == dict(max_iters=9) and foreign == dict(task='dyck1')
    with pytest.raises(ConfigError, match="unknown config key 'seed'"):    # typos on the command line still fail
        configure(c, ['--seed=3'], foreign=foreign, exit_on_error=False)
    cfg.write_text("task = 'dyck1'\ndyck1_batched = True\n")                # a flag overrides a file's foreign key
    configure(c, [str(cfg), '--dyck1_batched=False', '--task=khop'], foreign=foreign, exit_on_error=False)
    assert foreign == dict(task='khop', dyck1_batched=False)
    with pytest.raises(ConfigError, match='dyck1_batched'):                 # checked against the file's value
        configure(c, [str(cfg), '--dyck1_batched=3'], foreign=foreign, exit_on_error=False)


def test_given_records_where_each_key_was_set(tmp_path):
    cfg = tmp_path / 'c.py'
    cfg.write_text("max_iters = 7\nout_dir = 'a'\n")
    given = {}
    configure(defaults(), [str(cfg), '--max_iters=9', '--rope=True'], annotations=ANNOTATIONS, given=given,
              exit_on_error=False)
    assert given == {'max_iters': 'flag', 'out_dir': str(cfg), 'rope': 'flag'}


def test_include_applies_a_base_file_that_the_including_file_overrides(tmp_path):
    (tmp_path / 'cpu').mkdir()
    base = tmp_path / 'cpu' / 'task.py'
    base.write_text("max_iters = 7\nlearning_rate = 3e-4\nvariant = 'standard'\n")
    mixit = tmp_path / 'cpu' / 'task_mixit.py'                    # the include's path is relative to this file
    mixit.write_text("# python train.py cpu/task_mixit.py\nvariant = 'mixit'\ninclude('task.py')\nmax_iters = 9\n")
    c, given = defaults(), {}
    configure(c, [str(mixit)], annotations=ANNOTATIONS, given=given, exit_on_error=False)
    assert (c['max_iters'], c['learning_rate'], c['variant']) == (9, 3e-4, 'mixit')   # its own lines win anywhere
    assert given == {'learning_rate': str(base), 'max_iters': str(mixit), 'variant': str(mixit)}  # who set each key
    c, given = defaults(), {}
    configure(c, [str(mixit), '--learning_rate=1e-2'], annotations=ANNOTATIONS, given=given, exit_on_error=False)
    assert c['learning_rate'] == 1e-2 and given['learning_rate'] == 'flag'
    top = tmp_path / 'top.py'
    top.write_text("include('cpu/task_mixit.py')\nout_dir = 'x'\n")  # includes nest
    c, given = defaults(), {}
    configure(c, [str(top)], annotations=ANNOTATIONS, given=given, exit_on_error=False)
    assert (c['max_iters'], c['learning_rate'], c['out_dir']) == (9, 3e-4, 'x')
    assert given['learning_rate'] == str(base)
    base.write_text("max_iters = 7\ntask = 'dyck1'\n")             # an included file's foreign keys (bench.py)
    c, foreign = dict(max_iters=0), {}
    configure(c, [str(mixit)], foreign=foreign, exit_on_error=False)
    assert c == dict(max_iters=9) and foreign == dict(task='dyck1', variant='mixit')


def test_include_errors_name_the_file(tmp_path):
    a, b = tmp_path / 'a.py', tmp_path / 'b.py'
    a.write_text("include('b.py')\n")
    b.write_text("max_iters = 3\ninclude('a.py')\n")
    with pytest.raises(ConfigError, match=r"include cycle: .*a\.py -> .*b\.py -> .*a\.py"):
        run([str(a)])
    a.write_text("include('a.py')\n")
    with pytest.raises(ConfigError, match=r"include cycle: .*a\.py -> .*a\.py"):
        run([str(a)])
    a.write_text("include('missing.py')\n")
    with pytest.raises(ConfigError, match=r"a\.py: include\('missing.py'\): config file not found: .*missing\.py"):
        run([str(a)])
    a.write_text("include('b.py')\n")
    b.write_text("max_iter = 3\n")                                # an included file's error names it
    with pytest.raises(ConfigError, match=r"b\.py: unknown config key 'max_iter'"):
        run([str(a)])
    b.write_text("include('a.py')\n")                             # on a command line: one line, exit status 2
    r = subprocess.run([sys.executable, '-c', 'import configurator; configurator.configure({"max_iters": 1})',
                        str(a)], capture_output=True, text=True, env=dict(PYTHONPATH='.'))
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [f"error: include cycle: {a} -> {b} -> {a}"]


SCRIPT = '''"""A script.

Its details."""
from configurator import configure
x = 1                    # how many
rope: bool | None = None # rotary embeddings
cpu_keep_memory = False  # keep freed memory
                         # (continued here)
configure(globals())
print(x, rope)
'''


def test_command_line_errors_are_one_line_and_help_lists_every_key(tmp_path):
    script = tmp_path / 'script.py'
    script.write_text(SCRIPT)
    env = dict(PYTHONPATH='.')
    r = subprocess.run([sys.executable, str(script), '--x=oops'], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and 'Traceback' not in r.stderr
    assert r.stderr.strip().splitlines() == ["error: --x: x expects int, got 'oops' (str)"]
    r = subprocess.run([sys.executable, str(script), '--help'], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and 'A script.' in r.stdout and 'Its details' not in r.stdout
    lines = r.stdout.splitlines()
    assert any(line.split() == ['--x=1', 'how', 'many'] for line in lines)
    assert any('--rope=None' in line and 'rotary embeddings' in line and '[bool | None]' in line for line in lines)
    assert any('--cpu_keep_memory=False' in line and 'keep freed memory (continued here)' in line for line in lines)


def verify(H=2,               # heads per layer
           causal=False,      # causal attention
           tol=1e-9):         # pass below this error
    """Check a construction."""
    return H, causal, tol


def prepare(dataset: str,
            force=False):     # redo finished work
    """Tokenize a dataset."""
    return dataset, force


def test_run_command_configures_the_function_parameters(capsys):
    commands = dict(verify=verify, prepare=prepare)
    assert run_command(commands, ['verify', '--H=3', '--causal=True']) == (3, True, 1e-9)
    assert run_command(commands, ['prepare', 'wikitext2', '--force=true']) == ('wikitext2', True)
    with pytest.raises(SystemExit) as e:
        run_command(commands, ['verify', '--help'])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert 'Check a construction.' in out and any('--H=2' in s and 'heads per layer' in s for s in out.splitlines())
    for argv, message in ((['verfy'], "unknown command 'verfy'"), (['verify', '--tol=x'], 'tol expects float'),
                          (['prepare'], 'takes DATASET'), ([], 'name a command')):
        with pytest.raises(SystemExit) as e:
            run_command(commands, argv)
        assert e.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith('error: ') and message in err[0]


def test_help_groups_the_keys_under_their_sections():
    """train.py --help lists its keys under the headers of its settings (# ---- title), in the file's order; the
    model's keys, set by declare(GPTConfig), under the model's header."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, 'train.py', '--help'], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    headers = [line for line in lines if line.endswith(':') and not line.startswith(' ')]
    assert headers == ['I/O:', 'task (tasks.py):', 'model (model.py):', 'optimizer:', 'system:']
    at = {line.split('=')[0].strip(): i for i, line in enumerate(lines) if line.startswith('  --')}
    for key, header in (('--out_dir', 'I/O:'), ('--task', 'task (tasks.py):'), ('--n_layer', 'model (model.py):'),
                        ('--construction', 'model (model.py):'), ('--learning_rate', 'optimizer:'),
                        ('--device', 'system:')):
        assert max(i for i, line in enumerate(lines[:at[key]]) if line in headers) == lines.index(header), key


def test_help_into_a_pipe_that_closes_early_is_quiet():
    """`python train.py --help | head -1`: the first line, no BrokenPipeError traceback, exit 0."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run(f'{sys.executable} train.py --help | head -1', shell=True, cwd=root, capture_output=True,
                       text=True)
    assert r.stdout.startswith('usage: python train.py') and 'Traceback' not in r.stderr, r.stderr


def test_a_boolean_stands_alone_as_a_flag():
    """--key sets a boolean to True and --no-key to False, in every script's parser (train.py's, the subcommands',
    a foreign config's); another key still needs its value."""
    keys = dict(compile=True, force=False, max_iters=5)
    assert configure(dict(keys), ['--force', '--no-compile']) == dict(compile=False, force=True, max_iters=5)
    assert configure(dict(keys), ['--no-compile', '--compile=True']) == dict(keys)     # later ones win
    with pytest.raises(ConfigError, match="--max_iters needs a value"):
        configure(dict(keys), ['--max_iters'], exit_on_error=False)
    with pytest.raises(ConfigError, match="expected --key=value"):
        configure(dict(keys), ['--no-max_iters'], exit_on_error=False)
    assert run_command(dict(go=lambda force=False, n=1: (force, n)), ['go', '--force']) == (True, 1)


def test_every_flag_a_hint_names_is_one_the_parser_takes():
    """A hint that tells the user what to type ('pass --force', 'lower --learning_rate=<lr>', 'set --grad_clip=1.0',
    'with --input=<files>') names the flag in a form the parsers take: a boolean bare or as --no-key, any other
    key with its =value (a message once said 'pass --force' of a parser that refused --force)."""
    import ast
    import glob
    import io
    import re as re_
    import tokenize
    from model import GPTConfig
    root = os.path.join(os.path.dirname(__file__), '..')
    sources = glob.glob(os.path.join(root, '*.py')) + glob.glob(os.path.join(root, 'experiments', '**', '*.py'),
                                                                recursive=True)
    booleans = {f.name for f in GPTConfig.key_fields() if isinstance(f.default, bool)}
    for path in sources:                     # every script's boolean keys: module-level and parameter defaults
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                if isinstance(node.value.value, bool):
                    booleans |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.arguments):
                args = node.args[len(node.args) - len(node.defaults):] + node.kwonlyargs
                defaults = node.defaults + node.kw_defaults
                booleans |= {a.arg for a, d in zip(args, defaults)
                             if isinstance(d, ast.Constant) and isinstance(d.value, bool)}
    hint = re_.compile(r'\b(?:pass|with|lower|raise|set|choose|give|use|try)\s+--(no-)?([a-z][a-z0-9_]*)(=?)')
    found, bad = 0, []
    for path in sources:
        text = open(path).read()
        strings = ' '.join(t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                           if t.type == tokenize.STRING or t.type == getattr(tokenize, 'FSTRING_MIDDLE', -1))
        strings = re_.sub(r'"\s*f?"|\'\s*f?\'', '', strings)         # implicit concatenation across lines
        for no, key, eq in hint.findall(strings):
            found += 1
            if not eq and key not in booleans:
                bad.append((os.path.basename(path), f'--{no}{key}'))
    assert found >= 10 and not bad, (found, bad)
