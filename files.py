"""
Files written so that no failure is silent: a failed read or write is named by its cause (the errno's name and
meaning) and its path, whole files are replaced atomically, a written file can be checked against what was meant,
and a folder is locked against a second writer. A file system that cannot fsync a folder or lock a file degrades
with one warning, not a refusal. checkpoint.py (checkpoints, logs), run_guard.py (a run's lock) and text_data.py
(prepared data) write through here.
"""

import errno
import hashlib
import os
import sys

_warned = set()


def cause(e):
    """What went wrong, in words: 'ENOSPC (No space left on device)' for an OSError with an errno, else the
    exception's last line (torch reports a short write as a RuntimeError)."""
    if isinstance(e, OSError) and e.errno:
        return f"{errno.errorcode.get(e.errno, e.errno)} ({e.strerror or os.strerror(e.errno)})"
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[-1][:200]}" if text else type(e).__name__


def warn_once(key, message):
    """Print 'warning: message' on stderr the first time key is met in this process."""
    if key not in _warned:
        _warned.add(key)
        print(f"warning: {message}", file=sys.stderr, flush=True)


def output_folder(path, key):
    """Make the folder a script will write into (key names its setting), before any work, so that an unusable one
    costs nothing: returns path. Raises ValueError naming key, the path and the cause (a file in the way, no
    permission, a read-only file system)."""
    if not path:
        raise ValueError(f"--{key} is empty: name a folder")
    try:
        os.makedirs(path, exist_ok=True)
        probe = os.path.join(path, f'.write_test.{os.getpid()}')
        with open(probe, 'w'):
            pass
        os.remove(probe)
    except OSError as e:
        raise ValueError(f"--{key}={path}: cannot write there: {cause(e)}") from None
    return path


def output_file(path, key):
    """Check, before any work, that a script can write the file path (key names its setting): its folder made and
    writable, the path not a folder. Returns path. Raises ValueError naming key, the path and the cause."""
    if os.path.isdir(path):
        raise ValueError(f"--{key}={path} is a folder: name a file")
    output_folder(os.path.dirname(os.path.abspath(path)), key)
    return path


def input_file(path, key):
    """Check that path names a readable file (key names its setting). Returns path. Raises ValueError naming
    key, the path and what is wrong (missing, a folder, not readable)."""
    if os.path.isdir(path):
        raise ValueError(f"--{key}={path} is a folder: name a file")
    try:
        with open(path, 'rb'):
            pass
    except OSError as e:
        raise ValueError(f"--{key}={path}: {cause(e)}") from None
    return path


UNSUPPORTED = {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.ENOLCK}


def fsync_dir(folder):
    """fsync a folder, so that a rename into it survives a crash; where the file system cannot (EINVAL, ENOTSUP,
    ...: some network and FUSE file systems) one warning, and on. Raises OSError for any other failure."""
    fd = os.open(folder or '.', os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in UNSUPPORTED:
            raise
        warn_once('fsync_dir', f"{folder or '.'}: this file system cannot fsync a folder ({cause(e)}); a crash right "
                               f"after a file is replaced there may lose the new one")
    finally:
        os.close(fd)


class _Witness:
    """A file whose failed writes are remembered (first_error): a writer that turns an OSError into its own
    exception (torch.save: 'unexpected pos 0 vs 64') does not lose the cause."""

    def __init__(self, f):
        self._f, self.first_error = f, None

    def write(self, data):
        try:
            return self._f.write(data)
        except OSError as e:
            self.first_error = self.first_error or e
            raise

    def __getattr__(self, name):
        return getattr(self._f, name)


def replace_atomically(path, write, mode='wb'):
    """write(f) into path + '.tmp', flush, fsync, rename it over path, fsync the folder: a kill at any moment
    leaves either the old file or the new one. A failure removes the .tmp, leaves the old file and raises the
    first OSError a write met (with its errno, even where write turned it into another exception), else what
    write raised."""
    tmp = path + '.tmp'
    witness = None
    try:
        with open(tmp, mode) as f:
            witness = _Witness(f)
            write(witness)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        if witness is not None and witness.first_error is not None and witness.first_error is not e:
            raise witness.first_error from e
        raise
    fsync_dir(os.path.dirname(path))


class Digest:
    """The bytes written to a file, counted and hashed as they go (write), to check the file against afterwards
    (check): a write that the file system lost without an error (a hole of zeros) shows there."""

    def __init__(self):
        self.size, self.sha256 = 0, hashlib.sha256()

    def write(self, f, data):
        """Write bytes data to the open file f, whole (a short write raises OSError), and count them."""
        view = memoryview(data)
        while view:
            n = f.write(view)
            if not n:
                raise OSError(errno.EIO, 'a write wrote nothing', getattr(f, 'name', None))
            view = view[n:]
        self.size += len(data)
        self.sha256.update(data)

    def check(self, path):
        """Raise OSError (EIO) naming path when the file's size or bytes are not those written through write."""
        size = os.path.getsize(path)
        h = hashlib.sha256()
        with open(path, 'rb') as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
        if size != self.size or h.hexdigest() != self.sha256.hexdigest():
            raise OSError(errno.EIO, f"holds other bytes than were written ({size:,} bytes read back, "
                                     f"{self.size:,} written): a failing disk or file system", path)


_locks = {}                     # folder (real path) -> its open lock file, for this process's life


def lock_folder(path, holder='another run', owner="the run's"):
    """Make the folder path and hold an exclusive lock on path/.lock (fcntl.flock) until the process ends, however
    it ends, the lock file holding the holder's PID; a folder this process locked before is locked anew. Where the
    file system cannot lock (ENOLCK, ENOTSUP, ...) one warning, and on unlocked. Raises ValueError naming the
    holder's PID when another process holds it (holder: who that is, in words), or naming the folder and the cause
    when it cannot be made or written (a full disk, .lock a folder; owner: whose lock file it is)."""
    import fcntl
    key = os.path.realpath(path)
    if key in _locks:
        _locks.pop(key).close()
    lock_path = os.path.join(path, '.lock')
    if os.path.isdir(lock_path):
        raise ValueError(f"{lock_path} is a folder, where {owner} lock file belongs: move it out of --out_dir")
    try:
        os.makedirs(path, exist_ok=True)
        lock = open(lock_path, 'a+')
    except OSError as e:
        raise ValueError(f"cannot write in --out_dir={path}: {cause(e)}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        pid = lock.read().strip() or 'unknown'
        lock.close()
        raise ValueError(f"--out_dir={path} is in use by {holder} (PID {pid}); wait for it to end, or choose "
                         f"--out_dir=<another folder>") from None
    except OSError as e:
        if e.errno not in UNSUPPORTED:
            lock.close()
            raise ValueError(f"cannot lock {lock_path}: {cause(e)}") from None
        warn_once('flock', f"{lock_path}: this file system cannot lock files ({cause(e)}); nothing stops a second "
                           f"process from writing {path} at the same time")
    try:
        lock.truncate(0)
        lock.write(f'{os.getpid()}\n')
        lock.flush()
    except OSError as e:                       # a full disk
        lock.close()
        raise ValueError(f"cannot write {lock_path}: {cause(e)}") from None
    _locks[key] = lock


def unlock_folder(path):
    """Let go of a lock_folder lock this process holds on path (a no-op where it holds none)."""
    lock = _locks.pop(os.path.realpath(path), None)
    if lock is not None:
        lock.close()
