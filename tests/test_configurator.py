"""configurator.py: nanoGPT's semantics (files, then --key=value, later wins) with one-line errors."""

import subprocess
import sys

import pytest

from configurator import ConfigError, configure


def defaults():
    return dict(learning_rate=1e-3, max_iters=100, compile=True, out_dir='out', variant='standard', rope=None)


def test_files_then_overrides_later_wins(tmp_path):
    cfg = tmp_path / 'c.py'
    cfg.write_text("# a config\nimport math\nlearning_rate = 3e-4\nmax_iters = 7\n_private = 1\n")
    c = defaults()
    configure(c, [str(cfg), '--max_iters=9', '--learning_rate=1', '--compile=False', '--out_dir=123',
                  '--rope=True'], exit_on_error=False)
    assert c['max_iters'] == 9 and c['compile'] is False and c['out_dir'] == '123' and c['rope'] is True
    assert c['learning_rate'] == 1.0 and isinstance(c['learning_rate'], float)   # an int where a float is fine


def test_value_with_equals_sign_is_kept_whole():
    c = defaults()
    configure(c, ['--out_dir=runs/lr=3e-4'], exit_on_error=False)
    assert c['out_dir'] == 'runs/lr=3e-4'


@pytest.mark.parametrize('argv, message', [
    (['--lr=1e-3'], "unknown config key 'lr'"),
    (['--max_iters=1.5'], 'max_iters expects int'),
    (['--compile=1'], 'compile expects bool'),
    (['--learning_rate=fast'], 'learning_rate expects float'),
    (['--max_iters=3=4'], 'max_iters expects int'),
    (['--max_iters'], 'expected --key=value'),
    (['missing/config.py'], 'config file not found: missing/config.py'),
])
def test_errors_name_the_key_or_file(argv, message):
    with pytest.raises(ConfigError, match=message):
        configure(defaults(), argv, exit_on_error=False)


def test_unknown_key_in_config_file(tmp_path):
    cfg = tmp_path / 'bad.py'
    cfg.write_text("learning_rat = 1e-3\n")
    with pytest.raises(ConfigError, match="bad.py: unknown config key 'learning_rat'"):
        configure(defaults(), [str(cfg)], exit_on_error=False)


def test_command_line_error_is_one_line_not_a_traceback():
    script = "from configurator import configure\nx = 1\nconfigure(globals())\n"
    r = subprocess.run([sys.executable, '-c', script, '--x=oops'], capture_output=True, text=True)
    assert r.returncode == 2 and 'Traceback' not in r.stderr
    assert r.stderr.strip().splitlines() == ["error: --x: x expects int, got 'oops' (str)"]
