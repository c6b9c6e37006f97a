"""
nanoGPT's poor man's configurator, with errors instead of tracebacks. A script declares its defaults as
module-level globals, then calls

    from configurator import configure
    configure(globals())

which applies, in order, every argument of the command line: a config file (plain Python assignments,
e.g. config/cpu/retrieval_standard.py) or a `--key=value` override; later ones win. Values are parsed as
Python literals (`--lr=3e-4`, `--compile=False`), falling back to a plain string (`--out_dir=out/run1`);
everything after the first '=' is the value, so `--prompt=a=b` sets prompt to 'a=b'. An unknown key, a
value of the wrong type (an int where a float is expected is fine), an argument that is neither, or a
missing config file end the program with a one-line message naming the key or file.
"""

import ast
import os
import sys


class ConfigError(ValueError):
    pass


def _coerce(key, value, default, where):
    """value converted to the type of default, or ConfigError."""
    if default is None or value is None:
        return value
    if isinstance(default, bool) or isinstance(value, bool):
        if type(value) is type(default):
            return value
    elif isinstance(default, float) and isinstance(value, int):
        return float(value)
    elif isinstance(value, type(default)):
        return value
    raise ConfigError(f"{where}: {key} expects {type(default).__name__}, got {value!r} ({type(value).__name__})")


def apply_file(config, path):
    """Execute a config file and copy its assignments into config, checking keys and types."""
    if not os.path.isfile(path):
        raise ConfigError(f"config file not found: {path}")
    values = {}
    try:
        exec(compile(open(path).read(), path, 'exec'), {}, values)
    except Exception as e:  # a config file is user input: report, don't trace
        raise ConfigError(f"{path}: {type(e).__name__}: {e}") from None
    for key, value in values.items():
        if key.startswith('_') or type(value).__name__ == 'module':
            continue
        if key not in config:
            raise ConfigError(f"{path}: unknown config key '{key}'")
        config[key] = _coerce(key, value, config[key], path)


def apply_override(config, arg):
    """Apply one '--key=value' argument."""
    key, eq, text = arg[2:].partition('=')
    if not eq or not key:
        raise ConfigError(f"expected --key=value, got '{arg}'")
    if key not in config:
        raise ConfigError(f"unknown config key '{key}' (in '{arg}')")
    default = config[key]
    if isinstance(default, str):
        value = text                       # strings stay strings: --out_dir=123 is '123'
    else:
        try:
            value = ast.literal_eval(text)
        except (SyntaxError, ValueError):
            value = text
    config[key] = _coerce(key, value, default, f"--{key}")


def configure(config, argv=None, exit_on_error=True):
    """Apply config files and --key=value overrides from argv (default sys.argv[1:]) to the dict config
    (a script's globals()). Keys that are private (_x), modules, functions or classes are not settable.
    Raises ConfigError, or with exit_on_error prints 'error: ...' and exits with status 2."""
    argv = sys.argv[1:] if argv is None else argv
    settable = {k: v for k, v in config.items()
                if not k.startswith('_') and isinstance(v, (int, float, bool, str, type(None)))}
    try:
        for arg in argv:
            if arg.startswith('--'):
                apply_override(settable, arg)
            else:
                apply_file(settable, arg)
    except ConfigError as e:
        if not exit_on_error:
            raise
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    config.update(settable)
    return settable
