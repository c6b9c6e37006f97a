"""files.py: every write checked and every failure named by its cause, by injecting the failures: a write that
fails with a chosen errno at its n-th call, a write the file system loses without an error, a folder fsync or a
lock that the file system cannot give."""

import builtins
import errno
import os
import subprocess
import sys

import pytest

import files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class FailingFile:
    """An open file whose write fails with OSError(code) at call number `at` of every FailingFile (0-based), or,
    with code=None, writes zeros there instead of the bytes, and reports success (a lost write)."""
    calls = 0

    def __init__(self, f, at, code):
        self._f, self._at, self._code = f, at, code

    def write(self, data):
        n, FailingFile.calls = FailingFile.calls, FailingFile.calls + 1
        if n == self._at:
            if self._code is not None:
                raise OSError(self._code, os.strerror(self._code), getattr(self._f, 'name', None))
            return self._f.write(b'\0' * len(data))
        return self._f.write(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._f.__exit__(*exc)

    def __getattr__(self, name):
        return getattr(self._f, name)


def inject(monkeypatch, module, at, code, suffix='.tmp'):
    """Make every file that module opens for writing with a name ending in suffix a FailingFile."""
    FailingFile.calls = 0

    def failing_open(path, mode='r', *args, **kwargs):
        f = builtins.open(path, mode, *args, **kwargs)
        return FailingFile(f, at, code) if 'w' in mode and str(path).endswith(suffix) else f

    monkeypatch.setattr(module, 'open', failing_open, raising=False)


def test_cause_names_the_errno():
    assert files.cause(OSError(errno.ENOSPC, 'No space left on device')) == 'ENOSPC (No space left on device)'
    assert files.cause(OSError(errno.EFBIG, None)) == 'EFBIG (File too large)'
    assert files.cause(RuntimeError('one\n[enforce fail] unexpected pos 0')) == \
        'RuntimeError: [enforce fail] unexpected pos 0'


@pytest.mark.parametrize('code', [errno.ENOSPC, errno.EFBIG, errno.EIO])
def test_a_failed_replace_keeps_the_old_file(code, tmp_path, monkeypatch):
    path = tmp_path / 'f.bin'
    path.write_bytes(b'old')
    inject(monkeypatch, files, at=1, code=code)
    with pytest.raises(OSError) as e:
        files.replace_atomically(str(path), lambda f: (f.write(b'new '), f.write(b'bytes')))
    assert e.value.errno == code and path.read_bytes() == b'old' and not (tmp_path / 'f.bin.tmp').exists()


def test_a_folder_that_cannot_be_fsynced_warns_once(tmp_path, monkeypatch, capsys):
    """Some network and FUSE file systems refuse fsync on a folder (EINVAL): one warning, the file replaced; any
    other failure is raised."""
    real = os.fsync
    state = dict(code=errno.EINVAL)

    def fsync(fd):
        if os.path.isdir(f'/proc/self/fd/{fd}') or os.fstat(fd).st_mode & 0o040000:
            raise OSError(state['code'], os.strerror(state['code']))
        return real(fd)

    monkeypatch.setattr(files.os, 'fsync', fsync)
    monkeypatch.setattr(files, '_warned', set())
    for i in range(2):
        files.replace_atomically(str(tmp_path / 'f'), lambda f: f.write(b'%d' % i))
    err = capsys.readouterr().err
    assert (tmp_path / 'f').read_bytes() == b'1' and err.count('cannot fsync a folder') == 1
    state['code'] = errno.EIO
    with pytest.raises(OSError):
        files.replace_atomically(str(tmp_path / 'f'), lambda f: f.write(b'2'))


def test_a_lost_write_is_found_before_the_file_counts(tmp_path, monkeypatch):
    """A write that the file system reports as done but did not make (zeros where the bytes belong) is found by
    Digest.check; one made whole passes."""
    written = files.Digest()
    with open(tmp_path / 'ok', 'wb') as f:
        written.write(f, b'abc' * 1000)
    written.check(str(tmp_path / 'ok'))
    inject(monkeypatch, files, at=1, code=None, suffix='lost')
    lost = files.Digest()
    with files.open(str(tmp_path / 'lost'), 'wb') as f:
        for _ in range(3):
            lost.write(f, b'abc' * 1000)
    with pytest.raises(OSError, match='holds other bytes than were written') as e:
        lost.check(str(tmp_path / 'lost'))
    assert e.value.errno == errno.EIO


def test_a_lock_the_file_system_cannot_give_warns_once(tmp_path, monkeypatch, capsys):
    import fcntl

    def flock(f, how):
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))

    monkeypatch.setattr(fcntl, 'flock', flock)
    monkeypatch.setattr(files, '_warned', set())
    files.lock_folder(str(tmp_path / 'a'))
    files.lock_folder(str(tmp_path / 'b'))
    assert capsys.readouterr().err.count('cannot lock files (ENOLCK') == 1
    files.unlock_folder(str(tmp_path / 'a'))
    files.unlock_folder(str(tmp_path / 'b'))


def prepare(args, capsys):
    import text_data
    from configurator import run_command
    with pytest.raises(SystemExit) as e:
        run_command(dict(prepare=text_data.prepare_command), ['prepare', *args])
    return e.value.code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize('code, shown', [(errno.ENOSPC, 'ENOSPC (No space left on device)'),
                                         (errno.EFBIG, 'EFBIG (File too large)'),
                                         (None, 'EIO (holds other bytes than were written')])
def test_prepare_never_keeps_a_token_file_it_did_not_write_whole(code, shown, tmp_path, monkeypatch, capsys):
    """A failing write at the token file's second write (a full disk, a file-size limit), or one the file system
    lost (a hole of zeros, exit 0 before): exit 2 naming the file and the cause, no train.bin, and a second
    prepare writes it whole."""
    import text_data
    (tmp_path / 'text.txt').write_text('the cat sat on the mat. ' * 40000)
    args = ['x', f'--input={tmp_path / "text.txt"}', '--tokenizer=char', '--test_fraction=0.1',
            f'--out_dir={tmp_path / "d"}']
    inject(monkeypatch, text_data, at=1, code=code, suffix='.bin.tmp')
    status, err = prepare(args, capsys)
    err = [line for line in err if line.startswith('error:')]                   # not the progress bars
    assert status == 2 and len(err) == 1 and shown in err[0], err
    failed = err[0].split('cannot write ')[1].split(': ')[0]
    assert failed.endswith('.bin.tmp') and not os.path.exists(failed[:-len('.tmp')])
    assert not list((tmp_path / 'd').glob('*.tmp'))
    monkeypatch.undo()
    from configurator import run_command
    for out in ('d', 'clean'):                             # the same prepare again, and one never failed
        run_command(dict(prepare=text_data.prepare_command), ['prepare', *args[:-1], f'--out_dir={tmp_path / out}'])
    for split in ('train.bin', 'test.bin'):
        assert (tmp_path / 'd' / split).read_bytes() == (tmp_path / 'clean' / split).read_bytes()


def test_two_prepares_into_one_folder_one_waits_its_turn(tmp_path):
    """While one prepare writes a folder, another into it stops at once with one line naming the first's PID."""
    import fcntl
    (tmp_path / 'd').mkdir()
    with open(tmp_path / 'd' / '.lock', 'a+') as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.write('12345\n')
        held.flush()
        (tmp_path / 'text.txt').write_text('the cat sat on the mat. ' * 100)
        r = subprocess.run([sys.executable, 'tasks.py', 'prepare', 'x', f'--input={tmp_path / "text.txt"}',
                            '--tokenizer=char', '--test_fraction=0.1', f'--out_dir={tmp_path / "d"}'], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"error: --out_dir={tmp_path / 'd'} is in use by another prepare (PID 12345); wait for it to end, or choose "
        f"--out_dir=<another folder>"]
