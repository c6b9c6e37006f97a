"""
The one configurator of every script, after nanoGPT's "poor man's configurator". Two ways in:

    configure(globals())                        # settings are a script's module-level globals (train.py)
    run_command(dict(verify=verify, ...))       # subcommands, each a function whose keyword parameters are
                                                # its settings (python universal.py verify --H=2)

The rules are the same everywhere. Arguments apply in order, later ones win: `--key=value` sets one key,
anything else names a config file (plain Python assignments, e.g. config/cpu/dyck1_standard.py). A config file
may build on another with a call `include('dyck1.py')`, the path relative to the including file's folder: the
included file's assignments apply where the call stands, the including file's own ones once it has run, so they
win wherever they stand (config/cpu/dyck1_mixit.py: the task's settings from dyck1.py, then the variant's). A
value is read as a Python literal (`--learning_rate=3e-4`, `--widths=10,30,100`), else kept as text
(`--out_dir=out/run1`); a key whose default is a string takes the text as given, everything after the first
'='. A boolean also takes `--key` (True) and `--no-key` (False). The value must have its default's type: an int
passes for a float, true/false (any case) for a bool,
one value for a tuple of one, and a tuple's elements must have the type of the default's elements. A key
whose default is None is checked against its annotation (`rope: bool | None = None`). `--help` lists every
key with its default and comment. Anything else -- an unknown key, a wrong type, a missing or broken config
file, an include cycle -- ends the program with one line `error: ...` and exit status 2 (`fail`).
"""

import ast
import inspect
import io
import math
import os
import re
import sys
import textwrap
import tokenize
import types
import typing
from dataclasses import MISSING, fields, is_dataclass


class ConfigError(ValueError):
    """A bad command line or config file (reported as one line by configure and run_command)."""


FAULT = 3       # exit status of a run ended by a fault it met while running (bad input: 2)


def fail(message, status=2):
    """Every script's way to stop on bad input: one line 'error: message' on stderr, exit status 2 (FAULT for a
    fault met while running)."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(status)


def at_least(low, **values):
    """fail() on the first of values (settings, named by their keys) below low, or nan: `--key must be >= low, got
    v`."""
    for key, value in values.items():
        if not value >= low:
            fail(f"--{key} must be >= {low}, got {value}")


SIMPLE = (bool, int, float, str, tuple, type(None))
# older names of keys, still read from config files, flags and saved configs: the sequence length of the text tasks
# is train.py's block_size, as every task's (tasks.SHARED)
RENAMED = {'lm_block_size': 'block_size', 'sentiment_block_size': 'block_size'}


def current_name(key, keys):
    """key, or its new name (RENAMED) where key is an older name of a key that keys has."""
    return RENAMED[key] if key in RENAMED and RENAMED[key] in keys else key


def saved_with_current_names(saved, keys):
    """A saved config (a checkpoint's dict of train.py keys) with its task's older keys (RENAMED; a saved config
    holds every task's `<task>_*` keys, so only its own task's count) under their new names where keys has them and
    the saved config leaves them unset (0): an older LM run's lm_block_size is its block_size."""
    mine = {old: new for old, new in RENAMED.items() if old.startswith(f"{saved.get('task')}_") and old in saved}
    return {**saved, **{new: saved[old] for old, new in mine.items() if new in keys and not saved.get(new)}}


def settable(config):
    """The keys of config (a dict of defaults, or a script's globals()) that configure may set."""
    return {k: v for k, v in config.items() if not k.startswith('_') and isinstance(v, SIMPLE)}


# ----------------------------------------------------------------------------- types

def kinds_of(annotation):
    """The types an annotation admits: bool | None -> (bool, NoneType); 'str' -> (str,)."""
    if isinstance(annotation, str):
        annotation = eval(annotation, {})          # 'bool | None': builtins only
    if annotation is None:
        return (type(None),)
    return tuple(type(None) if a is None else a for a in typing.get_args(annotation)) or (annotation,)


def as_kind(value, kind, elem=None):
    """value as an instance of kind (bool, int, float, str, tuple or NoneType), or raise TypeError."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ('true', 'false'):
            return value.lower() == 'true'
    elif kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind is tuple:
        if isinstance(value, str) and elem is not str:
            value = value.split(',')
        items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
        if elem is None:
            return items
        out = []
        for v in items:
            if isinstance(v, str) and elem is not str:     # '--widths=a,b': each piece parsed again
                try:
                    v = ast.literal_eval(v.strip())
                except (SyntaxError, ValueError):
                    pass
            out.append(as_kind(v, elem))
        return tuple(out)
    elif isinstance(value, kind):
        return value
    raise TypeError


def check(key, value, default, annotation=None):
    """value converted to what key admits (the type of default, or its annotation when default is None), floats
    finite; raises ConfigError naming the key."""
    if default is None and annotation is None:
        raise TypeError(f"{key} defaults to None and has no annotation: declare it as `{key}: T | None = None`")
    kinds = kinds_of(annotation) if default is None else (type(default),)
    elem = type(default[0]) if isinstance(default, tuple) and default else None
    for kind in kinds:
        try:
            result = as_kind(value, kind, elem)
        except TypeError:
            continue
        if any(isinstance(v, float) and not math.isfinite(v) for v in (result if kind is tuple else (result,))):
            raise ConfigError(f"{key} must be a finite number, got {value!r}")
        return result
    names = ' or '.join('None' if k is type(None) else k.__name__ + (f' of {elem.__name__}' if k is tuple and elem
                                                                      else '') for k in kinds)
    raise ConfigError(f"{key} expects {names}, got {value!r} ({type(value).__name__})")


def takes_text(default, annotation):
    """Whether a key keeps its command-line value as raw text (string keys), not as a Python literal."""
    return isinstance(default, str) or (default is None and annotation is not None
                                        and set(kinds_of(annotation)) <= {str, type(None)})


# ----------------------------------------------------------------------------- comments for --help

def comments_in(source, first_line=1):
    """{name: comment} for every `name = value  # comment` (or `name: T = value  # comment`) line of source,
    and for every keyword parameter written one per line with a trailing comment; a comment continued on the
    next lines (comment-only lines indented past the name) is joined on."""
    source = textwrap.dedent(source)
    line_comments, comment_only = {}, {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                line_comments[tok.start[0]] = tok.string.lstrip('#').strip()
                if not tok.line[:tok.start[1]].strip():
                    comment_only[tok.start[0]] = tok.start[1]          # line -> column
    except (tokenize.TokenError, IndentationError):
        return {}
    tree = ast.parse(source)
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names.append((node.targets[0].id, node.col_offset, node.end_lineno))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append((node.target.id, node.col_offset, node.end_lineno))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args.args[len(node.args.args) - len(node.args.defaults):] + node.args.kwonlyargs
            defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
            names += [(a.arg, a.col_offset, d.end_lineno) for a, d in zip(args, defaults)]
    out = {}
    for name, column, line in names:
        if line in line_comments and line not in comment_only and name not in out:
            text = [line_comments[line]]
            while comment_only.get(line + 1, -1) > column:
                line += 1
                text.append(line_comments[line])
            out[name] = ' '.join(text)
    return out


def declare(config, dataclass, **defaults):
    """Add every field of a dataclass (e.g. model.GPTConfig) to config as a key, with its annotation and the
    comment on its line in the dataclass's source, so that a script takes the model's flags without listing
    them; a field that is itself a dataclass (GPTConfig.authors) adds its fields instead. defaults overrides
    some fields' defaults. --help lists the keys under the section of this call."""
    annotations = config.setdefault('__annotations__', {})
    groups = [dataclass] + [f.type for f in fields(dataclass) if is_dataclass(f.type)]
    comments_in_source = {k: v for group in groups for k, v in comments_in(inspect.getsource(group)).items()}
    keys = [f for group in groups for f in fields(group) if not is_dataclass(f.type)]
    values = {f.name: defaults.pop(f.name, None if f.default is MISSING else f.default) for f in keys}
    if defaults:
        raise TypeError(f"{dataclass.__name__} has no field {next(iter(defaults))!r}")
    annotations.update({f.name: f.type for f in keys})
    declare_keys(config, values, comments_in_source, _line=sys._getframe(1).f_lineno)


def declare_keys(config, defaults, comments, _line=None):
    """Add keys with their defaults and --help comments to config (a script's globals()), for settings whose
    owner writes them once (tasks.settings: every task's <task>_<setting>); --help lists them under the section
    of the call."""
    config.setdefault('__comments__', {}).update(comments)
    line = _line or sys._getframe(1).f_lineno
    config.setdefault('__declared_at__', {}).update(dict.fromkeys(defaults, line))
    config.update(defaults)


def sections_in(source, keys, declared_at=None):
    """{key: its section's title} for the keys of a script whose settings are grouped under header comments
    (`# ---------- title`): each key in the section of its default's assignment (before the `configure(...)`
    call), the keys a `declare(...)` or `declare_keys(...)` call sets in the section of that call (declared_at:
    {key: the call's line}, kept by those calls). {} when source has no such header."""
    headers = [(i, line.strip('# -\n')) for i, line in enumerate(source.splitlines(), 1) if line.startswith('# ----')]
    if not headers:
        return {}
    tree = ast.parse(source)

    def calls(node, name):
        return isinstance(getattr(node, 'value', None), ast.Call) and getattr(node.value.func, 'id', '') == name

    end = next((node.lineno for node in tree.body if calls(node, 'configure')), math.inf)
    lines = {}                                        # a key's assignment as a default, before configure()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.lineno < end:
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name):
                    lines.setdefault(t.id, node.lineno)
    declared = next((node.lineno for node in tree.body if isinstance(node, ast.Expr) and calls(node, 'declare')), None)
    titles = {}
    for k in keys:
        line = lines.get(k, (declared_at or {}).get(k, declared))
        above = [title for i, title in headers if line is not None and i < line]
        titles[k] = above[-1] if above else ''
    return titles


def help_text(keys, annotations, comments, doc, usage, sections=None):
    if any(isinstance(v, bool) for v in keys.values()):
        usage += '\n(a boolean key: --key for --key=True, --no-key for --key=False)'
    lines = [usage, '']
    if doc:
        lines += [inspect.cleandoc(doc).split('\n\n')[0].strip(), '']
    width = min(36, max((len(f'--{k}={v!r}') for k, v in keys.items()), default=0))
    section = None
    for k, v in keys.items():
        if sections and sections.get(k) != section:
            section = sections.get(k)
            lines += [''] * (lines[-1] != '') + ([f"{section}:"] if section else [])
        value = (f"'{v}'" if v.isprintable() else repr(v)) if isinstance(v, str) else \
            ','.join(map(str, v)) if isinstance(v, tuple) else repr(v)
        kind = ''
        if v is None and k in annotations:
            kind = '  [' + ' | '.join('None' if a is type(None) else a.__name__ for a in kinds_of(annotations[k])) + ']'
        lines.append(f"  --{k}={value}".ljust(width + 4) + f"  {comments.get(k, '')}{kind}".rstrip())
    return '\n'.join(lines)


# ----------------------------------------------------------------------------- applying arguments

def apply_file(keys, annotations, path, foreign=None, _including=()):
    """Execute a config file and set its assignments in keys, checked; unknown keys go to foreign if given. A call
    include('other.py') applies other.py (its path relative to this file's folder) the same way where the call
    stands, and this file's own assignments after the whole file has run, so they win; the included values go to
    keys, not to names this file could read. Names starting with '_', modules, and functions or classes (imported or
    defined: helpers) are not keys. Returns {key: path of the file that set it} for every key of keys
    that the file or its includes set. Raises ConfigError for a missing or broken file (included or not), an
    unknown key, a wrong type, or an include cycle."""
    if os.path.isdir(path):
        raise ConfigError(f"{path} is a folder; name a config file in it (e.g. {os.path.join(path, '<name>.py')})")
    if not os.path.isfile(path):
        raise ConfigError(f"config file not found: {path}")
    if any(os.path.samefile(path, p) for p in _including):
        raise ConfigError(f"include cycle: {' -> '.join(_including + (path,))}")
    sources = {}

    def include(name):
        target = os.path.normpath(os.path.join(os.path.dirname(path), name))
        if not os.path.isfile(target):
            raise ConfigError(f"{path}: include({name!r}): config file not found: {target}")
        sources.update(apply_file(keys, annotations, target, foreign, _including + (path,)))

    values = {}
    try:
        with open(path) as f:
            exec(compile(f.read(), path, 'exec'), {'include': include}, values)
    except ConfigError:
        raise
    except Exception as e:  # a config file is user input: report it, don't trace
        raise ConfigError(f"{path}: {type(e).__name__}: {e}") from None
    for key, value in values.items():
        if key.startswith('_') or isinstance(value, types.ModuleType) or (callable(value) and key not in keys):
            continue                  # a helper: an import (`from math import sqrt`), a function or class defined
        key = current_name(key, keys)
        if key in keys:
            try:
                keys[key] = check(key, value, keys[key], annotations.get(key))
            except ConfigError as e:
                raise ConfigError(f"{path}: {e}") from None
            sources[key] = path
        elif foreign is not None:
            foreign[key] = value
        else:
            raise ConfigError(f"{path}: unknown config key '{key}'")
    return sources


def flag_form(keys, arg):
    """A boolean's flag form as '--key=value': '--key' -> '--key=True', '--no-key' -> '--key=False' when key is a
    boolean of keys; any other argument as it is."""
    if arg.startswith('--') and '=' not in arg:
        key = arg[2:]
        if isinstance(keys.get(key), bool):
            return f'--{key}=True'
        if key.startswith('no-') and isinstance(keys.get(key[3:]), bool):
            return f'--{key[3:]}=False'
    return arg


def apply_override(keys, annotations, arg, foreign=None):
    """Apply one '--key=value' argument (or a boolean's '--key' / '--no-key'); returns the key. A key that only
    foreign has (a config file's key that keys lacks) is set there, checked against its value."""
    arg = flag_form(keys, arg) if foreign is None or arg[2:] not in foreign else flag_form(foreign, arg)
    key, eq, text = arg[2:].partition('=')
    key = current_name(key, keys)
    if not arg.startswith('--') or not eq or not key:
        if arg.startswith('--') and key in keys:
            raise ConfigError(f"--{key} needs a value: --{key}=<{type(keys[key]).__name__}> (only a boolean's "
                              f"--key / --no-key stand alone)")
        raise ConfigError(f"expected --key=value (a boolean: --key or --no-key), got '{arg}'")
    if key not in keys and foreign is not None and key in foreign:
        return apply_override(foreign, {}, arg)
    if key not in keys:
        raise ConfigError(f"unknown config key '{key}' (in '{arg}')")
    default, annotation = keys[key], annotations.get(key)
    value = text
    if not takes_text(default, annotation):
        try:
            value = ast.literal_eval(text)
        except (SyntaxError, ValueError):
            pass
    try:
        keys[key] = check(key, value, default, annotation)
    except ConfigError as e:
        raise ConfigError(f"--{key}: {e}") from None
    return key


# ----------------------------------------------------------------------------- the console

class Console:
    """A script's sys.stdout or sys.stderr that its console never stops: text the stream's encoding cannot hold is
    written with replacement (a C or ASCII locale), and a write or flush that fails (a closed pipe, `| head`; a
    full device; a closed terminal) turns the stream quiet: its file descriptor is pointed at /dev/null, the
    other stream gets one line naming the cause where it still can, and with on_close='exit' a failed stdout
    ends the script (status 141 for a closed pipe, 1 otherwise); with 'quiet' the script goes on (train.py: a
    run's record is its log files). Everything else is the wrapped stream's."""

    def __init__(self, stream, name, on_close='quiet'):
        self._stream, self._name, self.on_close, self._quiet = stream, name, on_close, False

    def write(self, text):
        if self._quiet:
            return len(text)
        try:
            try:
                return self._stream.write(text)
            except UnicodeEncodeError:
                encoding = getattr(self._stream, 'encoding', None) or 'ascii'
                return self._stream.write(text.encode(encoding, 'replace').decode(encoding))
        except (OSError, ValueError) as e:
            self._fail(e)
            return len(text)

    def flush(self):
        if not self._quiet:
            try:
                self._stream.flush()
            except (OSError, ValueError) as e:
                self._fail(e)

    def _fail(self, e):
        import errno
        from files import cause
        self._quiet = True
        try:                                        # later writes, and the interpreter's last flush, go nowhere
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._stream.fileno())
            os.close(null)
        except (OSError, ValueError, AttributeError):
            pass
        if self.on_close == 'exit' and self._name == 'stdout' and getattr(e, 'errno', None) == errno.EPIPE:
            raise SystemExit(141)                   # the reader has what it wanted (`| head`): end as quietly
        other = sys.__stderr__ if self._name == 'stdout' else sys.__stdout__
        try:
            print(f"note: {self._name} failed with {cause(e)}; it stays quiet from here", file=other, flush=True)
        except (OSError, ValueError, AttributeError):
            pass
        if self.on_close == 'exit' and self._name == 'stdout':
            raise SystemExit(1)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def guard_console(on_close='exit'):
    """Wrap sys.stdout and sys.stderr in Console (stdout ends the script on a failure with on_close='exit', goes
    quiet with 'quiet'; stderr always goes quiet), and end a script interrupted by Ctrl-C with one line and status
    130 rather than a traceback. configure and run_command call it for every script."""
    if isinstance(sys.stdout, Console):
        sys.stdout.on_close = on_close
    else:
        sys.stdout = Console(sys.stdout, 'stdout', on_close)
    if not isinstance(sys.stderr, Console):
        sys.stderr = Console(sys.stderr, 'stderr', 'quiet')
    if getattr(sys.excepthook, '__name__', '') != 'interrupted_quietly':
        before = sys.excepthook

        def interrupted_quietly(kind, value, trace):
            if issubclass(kind, KeyboardInterrupt):
                print("interrupted", file=sys.stderr, flush=True)
                os._exit(130)
            before(kind, value, trace)

        sys.excepthook = interrupted_quietly


def configure(config, argv=None, *, annotations=None, comments=None, doc=None, usage=None, foreign=None,
              given=None, exit_on_error=True, console='exit'):
    """Apply config files and --key=value overrides from argv (default sys.argv[1:]) to the dict config (a
    script's globals() or a dict of defaults) and return the settable keys with their values.

    annotations: {key: type} for keys that default to None (default: config['__annotations__']); comments:
    {key: text} for --help (default: parsed from config['__file__'] and config['__comments__']). foreign: a
    dict that collects the keys of config files that config does not have, instead of rejecting them (bench.py
    reading a train.py config); a --key that an earlier config file gave to foreign overrides it there, any
    other unknown --key is an error. given: a dict that collects {key: 'flag' or the config file's path} for
    every key argv sets (the last setting wins; a key from an included file names that file). `-h` or `--help`
    prints the keys and exits 0. console: guard_console's on_close for a script (exit_on_error): 'exit', or
    'quiet' for one that must go on without its console (train.py); None leaves the streams alone. Raises
    ConfigError, or with exit_on_error prints 'error: ...' and exits with status 2."""
    argv = sys.argv[1:] if argv is None else list(argv)
    annotations = config.get('__annotations__', {}) if annotations is None else annotations
    keys = settable(config)
    if '-h' in argv or '--help' in argv:
        source = ''
        if config.get('__file__'):
            with open(config['__file__']) as f:
                source = f.read()
        if comments is None:
            comments = {**config.get('__comments__', {}), **comments_in(source)}
        script = os.path.basename(config.get('__file__') or sys.argv[0])
        try:
            print(help_text(keys, annotations, comments, config.get('__doc__') if doc is None else doc,
                            usage or f"usage: python {script} [config.py ...] [--key=value ...]",
                            sections_in(source, keys, config.get('__declared_at__')) if source else None),
                  flush=True)
        except BrokenPipeError:         # `--help | head`: the reader left; no traceback at exit either
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    if exit_on_error and console:
        guard_console(console)
    try:
        for arg in argv:
            if arg.startswith('-'):
                sources = {apply_override(keys, annotations, arg, foreign): 'flag'}
            else:
                sources = apply_file(keys, annotations, arg, foreign)
            if given is not None:
                given.update(sources)
    except ConfigError as e:
        if not exit_on_error:
            raise
        fail(e)
    config.update(keys)
    return keys


def train_keys(argv, **keys):
    """The values that a train.py command line (config files, then --key=value) gives to keys; keys gives each
    one's default, and the command line's other keys are skipped (train.py checks them). Raises ConfigError for
    a config file that is missing or malformed, or a bad value of one of keys."""
    mine = [a for a in argv if not a.startswith('--') or a[2:].partition('=')[0] in keys]
    return configure(keys, mine, foreign={}, exit_on_error=False)


ABBREVIATIONS = ''.join(rf'(?<!\b{a})' for a in ('Fig', 'Figs', 'App', 'eq', 'eqs', 'Eq', 'Thm', 'Sec', 'e.g', 'i.e',
                                                  'vs', 'cf', 'al', 'No'))   # periods that end no sentence


def first_sentence(doc):
    """The first sentence of a docstring, on one line: up to the first '. ' (or '.' at the end) of its first
    paragraph, or the whole paragraph."""
    paragraph = ' '.join(doc.strip().split('\n\n')[0].split())
    end = re.search(ABBREVIATIONS + r'\.\s', paragraph)
    return paragraph if end is None else paragraph[:end.start() + 1]


def program():
    """How the running script was started: 'python -m experiments.paper3' for a module run with -m (or by
    runpy.run_module), else 'python <file>'."""
    spec = getattr(sys.modules.get('__main__'), '__spec__', None)
    if spec is not None and spec.name:
        return f"python -m {spec.name.removesuffix('.__main__')}"
    return f"python {os.path.basename(sys.argv[0])}"


def run_command(commands, argv=None, doc=None):
    """Run one of a script's subcommands: argv[0] names a function of commands ({name: function}); its keyword
    parameters are the settings, configured from the rest of argv as by configure (annotations type them,
    the comments on their lines are their --help). A parameter without a default is positional
    (`python tasks.py prepare wikitext2`); a command without one reads positional arguments as config
    files. Returns what the function returns."""
    argv = sys.argv[1:] if argv is None else list(argv)
    prog = program()
    listing = '\n'.join(textwrap.fill(first_sentence(fn.__doc__ or ''), 110, initial_indent=f"  {name:12s} ",
                                      subsequent_indent=' ' * 15) for name, fn in commands.items())
    if not argv or argv[0] in ('-h', '--help'):
        if argv:
            print(f"usage: {prog} {{{','.join(commands)}}} [--key=value ...]\n\n{doc.strip() if doc else ''}\n\n"
                  f"commands (--help after one lists its keys):\n{listing}")
            sys.exit(0)
        fail(f"name a command: {prog} {{{','.join(commands)}}} [--key=value ...] (--help for more)")
    name, rest = argv[0], argv[1:]
    if name not in commands:
        fail(f"unknown command {name!r}; choose from {', '.join(commands)}")
    fn = commands[name]
    params = inspect.signature(fn).parameters.values()
    required = [p for p in params if p.default is p.empty]
    defaults = {p.name: p.default for p in params if p.default is not p.empty}
    annotations = {p.name: p.annotation for p in params if p.annotation is not p.empty}
    positional = {}
    if required and not ('-h' in rest or '--help' in rest):
        given = [a for a in rest if not a.startswith('-')]
        if len(given) != len(required):
            fail(f"{prog} {name} takes {' '.join(p.name.upper() for p in required)} and --key=value flags, got "
                 f"{len(given)} positional argument(s)")
        positional = {p.name: v for p, v in zip(required, given)}
        rest = [a for a in rest if a.startswith('-')]
    positional_usage = ' '.join(p.name.upper() for p in required) or '[config.py ...]'
    values = configure(defaults, rest, annotations=annotations, comments=comments_in(inspect.getsource(fn)),
                       doc=fn.__doc__ or '', usage=f"usage: {prog} {name} {positional_usage} [--key=value ...]")
    return fn(**positional, **values)
