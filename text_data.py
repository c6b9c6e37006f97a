"""
The text datasets of the lm and sentiment tasks (paper 1, Tables 2 and 3): download, tokenise (GPT-2 BPE through
tiktoken, or characters), verify, and load back, in nanoGPT's uint16 token files. The tasks themselves, `lm` and
`sentiment`, are in tasks.py, whose command line runs this file's `prepare` command:

    python tasks.py prepare wikitext103          # Hugging Face -> data/wikitext103/
    python tasks.py prepare shakespeare_char     # downloaded, one token per character
    python tasks.py prepare brown --input=path/to/brown.txt.xz --test_fraction=0.1 --tokenizer=path/to/gpt2.tiktoken

    meta = prepare('brown', ['path/to/brown.txt.xz'], test_fraction=0.1, tokenizer='path/to/gpt2.tiktoken')
    meta = load_prepared('data/brown', 'lm')     # meta.json, checked against the token files; raises DataError
"""

import json
import os
import shutil
import sys

import numpy as np

from files import Digest, cause, lock_folder, replace_atomically, unlock_folder


# -----------------------------------------------------------------------------
# Text (paper 1, Table 2 language modeling, Table 3 Yelp sentiment): GPT-2 BPE through tiktoken, tokens in
# uint16 memmaps, as nanoGPT. `python tasks.py prepare <dataset>` writes DATA_DIR/<dataset>/:
#   meta.json                      tokenizer, vocab_size, eot, and per split its token and document counts
#   train.bin, test.bin            uint16 token ids; lm: documents concatenated, each followed by <|endoftext|>
#   train.docs.npy, test.docs.npy  sentiment only: int64 (N, 3) rows (start, end, label) into the .bin
# Every file is written under a .tmp name and renamed when complete: a file with its final name is finished.
# meta.json records what the data was made from (its `recipe`: the options and a SHA-256 of the input files);
# re-running skips a finished split only when the recipe is the same, and otherwise prepares it again.

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')
TOKENIZER_ENV = 'TIKTOKEN_GPT2_FILE'    # path to a local gpt2.tiktoken, used instead of tiktoken's download
GPT2_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
HF_DATASETS = {  # name -> (task, Hugging Face path, config, {split: (hf split, first row, end row)})
    'wikitext103': ('lm', 'Salesforce/wikitext', 'wikitext-103-raw-v1',
                    {'train': ('train', 0, None), 'test': ('test', 0, None)}),
    'wikitext2': ('lm', 'Salesforce/wikitext', 'wikitext-2-raw-v1',
                  {'train': ('train', 0, None), 'test': ('test', 0, None)}),
    'fineweb_edu': ('lm', 'HuggingFaceFW/fineweb-edu', 'sample-10BT',
                    {'train': ('train', 0, 2 ** 20), 'test': ('train', 2 ** 20, 2 ** 20 + 2 ** 12)}),
    'yelp': ('sentiment', 'fancyzhx/yelp_polarity', None, {'train': ('train', 0, None), 'test': ('test', 0, None)}),
    'imdb': ('sentiment', 'stanfordnlp/imdb', None, {'train': ('train', 0, None), 'test': ('test', 0, None)}),
}


CHAR_DATASETS = {  # name -> (URL of its one text file, the fraction at its end held out as test text)
    'shakespeare_char': ('https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt',
                         0.1),
}


KNOWN_INPUTS = {  # name -> (bytes, sha256) of the text a named dataset's one local input file should be
    'shakespeare_char': (1_115_394, '86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed'),
}
MIN_INPUT_BYTES = 100       # inputs holding less are refused: nothing a model could learn from


class DataError(ValueError):
    """A data preparation or loading problem, reported as one line (no network, unknown dataset, bad file)."""


class CharEncoding:
    """A character-level tokenizer with the part of tiktoken.Encoding's interface used here (nanoGPT's
    shakespeare_char): id i is the i-th character of `chars` (sorted, no repeats), and <|endoftext|>, the
    document separator, is len(chars). name is 'char'; prepare records `chars` in meta.json, from which
    encoding_of rebuilds it."""

    name = 'char'

    def __init__(self, chars):
        self.chars = ''.join(chars)
        self.n_vocab = len(self.chars) + 1
        self.eot_token = len(self.chars)
        self.index = {c: i for i, c in enumerate(self.chars)}

    @classmethod
    def of_texts(cls, texts):
        """The encoding whose characters are those that occur in the strings `texts`."""
        return cls(sorted(set().union(*map(set, texts))))

    def encode_ordinary(self, text):
        """list of ids of text's characters. Raises DataError for a character outside the vocabulary."""
        try:
            return [self.index[c] for c in text]
        except KeyError as e:
            raise DataError(f"the character {e.args[0]!r} is not in this character vocabulary") from None

    def encode_ordinary_batch(self, texts, num_threads=1):
        return [self.encode_ordinary(t) for t in texts]

    def encode(self, text, allowed_special=()):
        """ids of text, with '<|endoftext|>' as the separator's id when allowed_special names it."""
        parts = text.split('<|endoftext|>') if '<|endoftext|>' in allowed_special else [text]
        ids = self.encode_ordinary(parts[0])
        for part in parts[1:]:
            ids += [self.eot_token] + self.encode_ordinary(part)
        return ids

    def decode(self, ids):
        return ''.join(self.chars[i] if i < len(self.chars) else '<|endoftext|>' for i in ids)


def encoding_from_file(path):
    """A tiktoken.Encoding built from a local .tiktoken file (lines `base64(token bytes) rank`) with GPT-2's split
    pattern and <|endoftext|> = the next id: for the GPT-2 BPE file gpt2.tiktoken exactly the ids of
    tiktoken.get_encoding('gpt2'). Raises DataError if the file is missing or malformed."""
    import tiktoken
    import tiktoken.load
    try:
        ranks = tiktoken.load.load_tiktoken_bpe(path)
    except FileNotFoundError:
        raise DataError(f"tokenizer file not found: {path}") from None
    except Exception as e:
        raise DataError(f"{path} is not a .tiktoken file (base64 token and rank per line): "
                        f"{type(e).__name__}") from None
    if sorted(ranks.values()) != list(range(len(ranks))):
        raise DataError(f"{path}: token ranks are not 0..{len(ranks) - 1}")
    try:
        from tiktoken_ext.openai_public import r50k_pat_str as pattern   # the installed tiktoken's own gpt2 pattern
    except ImportError:
        pattern = GPT2_PAT
    name = os.path.splitext(os.path.basename(path))[0]
    return tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks,
                             special_tokens={'<|endoftext|>': len(ranks)})


def gpt2_encoding(path=None):
    """GPT-2 BPE: from the local .tiktoken file `path` (or $TIKTOKEN_GPT2_FILE) if given, else
    tiktoken.get_encoding('gpt2'), which downloads the vocabulary on first use. Raises DataError."""
    path = path or os.environ.get(TOKENIZER_ENV)
    if path:
        return encoding_from_file(path)
    import tiktoken
    try:
        return tiktoken.get_encoding('gpt2')
    except Exception as e:
        raise DataError(f"tiktoken could not load GPT-2 BPE ({type(e).__name__}, no network?); pass "
                        f"--tokenizer=path/to/gpt2.tiktoken or set {TOKENIZER_ENV}") from None


def encoding_of(meta, tokenizer=None, data_dir=None):
    """The tokenizer a prepared dataset was made with, from its meta.json dict: a CharEncoding for
    tokenizer 'char', else GPT-2 BPE: gpt2_encoding(tokenizer), where tokenizer defaults to the .tiktoken file
    that prepare keeps in data_dir when it was made from one (then no download is needed). Raises DataError."""
    if meta.get('tokenizer') == CharEncoding.name:
        if not isinstance(meta.get('chars'), str):
            raise DataError("meta.json of character-level data has no 'chars'; prepare the data again")
        return CharEncoding(meta['chars'])
    kept = os.path.join(data_dir, f"{meta.get('tokenizer')}.tiktoken") if data_dir else ''
    use_kept = os.path.isfile(kept) and not os.environ.get(TOKENIZER_ENV)
    return gpt2_encoding(tokenizer or (kept if use_kept else None))


def download(url, path):
    """Fetch url into the file path (written whole or not at all). Raises DataError without network."""
    import urllib.request
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=60) as r, open(path + '.tmp', 'wb') as f:
            f.write(r.read())
    except OSError as e:
        raise DataError(f"could not download {url} ({type(e).__name__}); offline, pass --input=a local "
                        f"copy") from None
    os.replace(path + '.tmp', path)


def exact_cut(s, i):
    """The last position <= i where s can be cut without changing its GPT-2 encoding: right after a newline that
    the pre-tokenizer always ends a token with (a newline after a non-blank character and before a letter or
    digit, or before ' ' + letter or digit). 0 if there is none."""
    while (i := s.rfind('\n', 0, i)) > 0:
        a, b = s[i + 1:i + 2], s[i + 2:i + 3]
        if (a.isalnum() and not s[i - 1].isspace()) or (a == ' ' and b.isalnum()):
            return i + 1
    return 0


def exact_pieces(parts, size=1 << 18):
    """Concatenate the strings `parts` and cut the text into pieces of about `size` characters at exact_cut
    positions, so that encoding the pieces one by one (in parallel) gives exactly the ids of encoding the whole
    text. Yields strings."""
    buf, n = [], 0
    for part in parts:
        buf.append(part)
        n += len(part)
        if n >= size:
            s = ''.join(buf)
            cut = exact_cut(s, len(s))
            if cut:
                yield s[:cut]
            buf, n = [s[cut:]], len(s) - cut
    if n:
        yield ''.join(buf)


def encode_parallel(enc, items, num_proc, total=None, desc=''):
    """Encode (text, tag) items with tiktoken in num_proc threads (its Rust core runs without the GIL), in
    order. Yields (ids list, tag); a tqdm bar counts characters (of `total` when known)."""
    from tqdm import tqdm
    bar = tqdm(total=total, unit='char', unit_scale=True, desc=desc, dynamic_ncols=True)
    batch = []

    def flush():
        ids = enc.encode_ordinary_batch([t for t, _ in batch], num_threads=num_proc)
        bar.update(sum(len(t) for t, _ in batch))
        return zip(ids, [tag for _, tag in batch])

    chars = 0
    for item in items:
        batch.append(item)
        chars += len(item[0])
        if len(batch) >= 256 * num_proc or chars >= num_proc << 20:
            yield from flush()
            batch, chars = [], 0
    if batch:
        yield from flush()
    bar.close()


def _finish(tmp_paths):
    """Rename finished .tmp files to their final names, the .bin last (its presence marks the split done)."""
    for tmp in sorted(tmp_paths, key=lambda p: p.endswith('.bin.tmp')):
        os.replace(tmp, tmp[:-len('.tmp')])


def write_lm_split(path, docs, enc, num_proc=1, total=None):
    """Tokenize documents into a uint16 token file `path`, each followed by <|endoftext|>. docs: an iterable of
    documents, each an iterable of text parts (a file's text, a dataset row, or the rows of a whole split).
    Returns (tokens, documents) written. Writes path + '.tmp' and renames it when complete."""
    if enc.n_vocab > 2 ** 16:
        raise DataError(f"vocabulary of {enc.n_vocab} does not fit uint16 token files")

    def items():
        for d, parts in enumerate(docs):
            pieces = exact_pieces(parts)
            prev = next(pieces, '')
            for piece in pieces:
                yield prev, None
                prev = piece
            yield prev, d                                  # the document's last piece carries its index

    n_tokens = n_docs = 0
    written = Digest()
    with open(path + '.tmp', 'wb') as f:
        for ids, end in encode_parallel(enc, items(), num_proc, total, os.path.basename(path)):
            if end is not None:
                ids, n_docs = ids + [enc.eot_token], n_docs + 1
            written.write(f, np.asarray(ids, dtype=np.uint16).tobytes())
            n_tokens += len(ids)
        os.fsync(f.fileno())
    written.check(path + '.tmp')                       # what is on disk is what was written, before it counts
    _finish([path + '.tmp'])
    return n_tokens, n_docs


def write_sentiment_split(path, examples, enc, num_proc=1, total=None):
    """Tokenize labelled texts: ids into the uint16 file `path` (no separators), and (start, end, label) per
    text into path without '.bin' + '.docs.npy'. examples: iterable of (text, label int). Returns (tokens, texts)."""
    if enc.n_vocab > 2 ** 16:
        raise DataError(f"vocabulary of {enc.n_vocab} does not fit uint16 token files")
    docs, n = [], 0
    written = Digest()
    with open(path + '.tmp', 'wb') as f:
        for ids, label in encode_parallel(enc, examples, num_proc, total, os.path.basename(path)):
            if not ids:
                continue                                   # an empty text has no last token to classify from
            written.write(f, np.asarray(ids, dtype=np.uint16).tobytes())
            docs.append((n, n + len(ids), label))
            n += len(ids)
        os.fsync(f.fileno())
    written.check(path + '.tmp')
    index = path[:-len('.bin')] + '.docs.npy'
    with open(index + '.tmp', 'wb') as f:
        np.save(f, np.array(docs, dtype=np.int64).reshape(-1, 3))
        f.flush()
        os.fsync(f.fileno())
    _finish([index + '.tmp', path + '.tmp'])
    return n, len(docs)


# ---- sources: Hugging Face datasets, or local files

def read_text(path):
    """A local file's text: plain, .xz, .gz or .bz2 compressed, UTF-8. Raises DataError."""
    import bz2, gzip, lzma
    opener = {'.xz': lzma.open, '.gz': gzip.open, '.bz2': bz2.open}.get(os.path.splitext(path)[1], open)
    try:
        with opener(path, 'rt', encoding='utf-8', newline='') as f:
            return f.read()
    except FileNotFoundError:
        raise DataError(f"input not found: {path}") from None
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text (byte {e.object[e.start]:#04x} at position {e.start:,})") from None
    except (OSError, EOFError, lzma.LZMAError) as e:
        what = f"a truncated or damaged {os.path.splitext(path)[1]} file" if opener is not open else "not readable"
        raise DataError(f"{path}: {what} ({type(e).__name__}: {str(e) or 'ends too early'})") from None


def list_files(inputs):
    """The files named by `inputs` (files or folders, searched recursively, in sorted order; files named
    *readme* in folders skipped). Raises DataError for a missing path or an empty folder."""
    files = []
    for p in inputs:
        if os.path.isdir(p):
            found = sorted(os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs
                           if not f.startswith('.') and 'readme' not in f.lower())
            if not found:
                raise DataError(f"no files in folder {p}")
            files += found
        elif os.path.isfile(p):
            files.append(p)
        else:
            raise DataError(f"input not found: {p}")
    return files


def check_inputs(name, files, force=False):
    """Refuse local inputs that cannot be the named dataset meant (one of HF_DATASETS, CHAR_DATASETS): fewer than
    MIN_INPUT_BYTES in all, or, for a dataset of KNOWN_INPUTS, a size more than 10% off its text's (unless force);
    a known dataset's input of about the right size but other bytes gets a one-line note. (Any dataset's empty
    file is refused where it is read.) Raises DataError."""
    if name not in HF_DATASETS and name not in CHAR_DATASETS:
        return
    total = sum(os.path.getsize(f) for f in files)
    if total < MIN_INPUT_BYTES:
        raise DataError(f"the inputs ({', '.join(files)}) hold {total} bytes: nothing to prepare")
    if name not in KNOWN_INPUTS:
        return
    size, sha256 = KNOWN_INPUTS[name]
    if abs(total - size) > 0.1 * size and not force:
        raise DataError(f"{', '.join(files)}: {total:,} bytes, where {name}'s text is {size:,}: not that dataset? "
                        f"pass --force to prepare it anyway")
    if len(files) == 1:
        import hashlib
        with open(files[0], 'rb') as f:
            if hashlib.sha256(f.read()).hexdigest() != sha256:
                print(f"note: {files[0]} is not the known {name} text (its sha256 differs); preparing it as given",
                      file=sys.stderr)


def split_of(path):
    """'test' if the file's name says test, else 'train' (a dev or valid file is training text here)."""
    return 'test' if 'test' in os.path.basename(path).lower() else 'train'


def read_labelled(path):
    """(text, label) pairs from a local labelled file. Formats:
    - CSV with a header that has `label` and `text` columns (IMDb: label 0 negative, 1 positive);
    - a name ending .0 / .1 (optionally compressed): one text per line, label from the name (Yelp sentences);
    - otherwise `<label> <text>` per line, label an integer (yelp_1k.txt).
    Raises DataError on a malformed file."""
    import csv
    import io
    text, name = read_text(path), os.path.basename(path)
    stem = name[:-len(os.path.splitext(name)[1])] if name.endswith(('.xz', '.gz', '.bz2')) else name
    if not text.strip():
        raise DataError(f"{path}: empty input file")
    if '.csv' in name:
        csv.field_size_limit(2 ** 31 - 1)
        rows = csv.DictReader(io.StringIO(text, newline=''), strict=True)   # strict: a stray quote is an error
        out, start = [], 1                                   # start: the line the row being read starts on
        try:
            if not {'label', 'text'} <= set(rows.fieldnames or ()):
                raise DataError(f"{path}: a CSV needs 'label' and 'text' columns, has {rows.fieldnames}")
            start = rows.line_num + 1
            for r in rows:
                try:
                    out.append((r['text'], int(r['label'])))
                except (ValueError, TypeError):
                    raise DataError(f"{path}, line {start}: the label {r['label']!r} is not an integer") from None
                start = rows.line_num + 1
        except csv.Error as e:                               # an unterminated or misplaced quote
            raise DataError(f"{path}, line {start}: bad CSV ({e}; is a quote opened on this line not "
                            f"closed?)") from None
        if not out:
            raise DataError(f"{path}: a header but no rows")
        return out
    lines = [(i + 1, line) for i, line in enumerate(text.splitlines()) if line.strip()]
    if stem.endswith(('.0', '.1')):
        return [(line, int(stem[-1])) for _, line in lines]
    out = []
    for number, line in lines:
        label, _, t = line.partition(' ')
        if not label.lstrip('-').isdigit() or not t:
            raise DataError(f"{path}, line {number}: expected '<label> <text>' (or name the file *.0 / *.1, or a "
                            f"CSV with label,text columns)")
        out.append((t, int(label)))
    return out


def files_sha256(paths):
    """SHA-256 (hex) of the named files' bytes, in order, each preceded by its length: the inputs' identity in
    meta.json's recipe."""
    import hashlib
    h = hashlib.sha256()
    for path in paths:
        h.update(f'{os.path.getsize(path)}\n'.encode())
        with open(path, 'rb') as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def read_meta(meta_path):
    """A prepared dataset's meta.json as a dict. Raises DataError naming the file when it is not valid JSON."""
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except (ValueError, OSError) as e:
        raise DataError(f"{meta_path}: not a readable meta.json ({type(e).__name__}); prepare the data again") from None
    if not isinstance(meta, dict) or not isinstance(meta.get('splits', {}), dict):
        raise DataError(f"{meta_path}: not a meta.json of python tasks.py prepare; prepare the data again")
    return meta


def hf_rows(path, config, split, lo, hi):
    """Rows [lo, hi) of a Hugging Face dataset split, streamed (fineweb-edu's sample-10BT is ~27 GB; only the rows
    used are downloaded). Raises DataError when the hub cannot be reached."""
    import itertools
    try:
        import datasets
        ds = datasets.load_dataset(path, config, split=split, streaming=True)
        first = iter(ds)
        head = next(first)                                 # touch the network here, to fail with a clear message
    except Exception as e:
        raise DataError(f"could not load {path} ({config or 'default'}) from the Hugging Face hub "
                        f"({type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}); offline, prepare "
                        f"local files with --input=<files>") from None
    return itertools.islice(itertools.chain([head], first), lo, hi)


def stream_rows(streams, path, config, split, lo, hi):
    """Rows [lo, hi) of a Hugging Face split (hi None: to its end), continuing the stream that streams (a dict,
    {split: [rows iterator, its position]}) holds for the split when it stands at or before lo, so that splits
    cut from one stream one after the other (fineweb-edu's train and test rows) read it once. Yields rows."""
    stream = streams.get(split)
    if stream is None or stream[1] > lo:
        stream = streams[split] = [hf_rows(path, config, split, 0, None), 0]
    if hi is not None and stream[1] >= hi:
        return
    for row in stream[0]:
        stream[1] += 1
        if stream[1] > lo:
            yield row
        if hi is not None and stream[1] >= hi:
            return


def prepare(name, inputs=(), test_inputs=(), task=None, tokenizer=None, out_dir=None, num_proc=None,
            test_fraction=0.0, force=False, enc=None):
    """Prepare dataset `name` into out_dir (default DATA_DIR/name): from Hugging Face when name is one of
    HF_DATASETS and no inputs are given, downloaded to out_dir/input.txt for CHAR_DATASETS, else from local
    files. task: 'lm' | 'sentiment' (default: the Hugging Face dataset's, else 'lm'). Local files go to the test
    split when listed in test_inputs, or (without test_inputs) when their name contains 'test'; test_fraction > 0
    instead holds out the end of the lm text (or a seeded random fraction of the labelled texts; CHAR_DATASETS
    default to their fraction). tokenizer: a gpt2.tiktoken file, or 'char' (CharEncoding of the inputs'
    characters; CHAR_DATASETS' default); a .tiktoken file is copied into out_dir, so that the data carries its
    tokenizer (encoding_of). enc: a tokenizer to use instead. Returns the metadata dict. Raises DataError."""
    inputs, test_inputs = list(inputs), list(test_inputs)
    out_dir = out_dir or os.path.join(DATA_DIR, name)
    if name in CHAR_DATASETS:                                  # one text file, characters as tokens
        url, fraction = CHAR_DATASETS[name]
        tokenizer = tokenizer or CharEncoding.name
        if not inputs:
            inputs = [os.path.join(out_dir, 'input.txt')]
            if not os.path.isfile(inputs[0]):
                print(f"downloading {url}")
                download(url, inputs[0])
        if not test_inputs and not test_fraction:
            test_fraction = fraction
    if not inputs and name not in HF_DATASETS:
        raise DataError(f"unknown dataset {name!r}: choose {', '.join([*HF_DATASETS, *CHAR_DATASETS])}, or give "
                        f"local files with --input=<files>")
    if inputs:                                                 # a missing path fails before the tokenizer loads
        check_inputs(name, list_files(inputs + test_inputs), force)
    task = task or (HF_DATASETS[name][0] if name in HF_DATASETS else 'lm')
    if task not in ('lm', 'sentiment'):
        raise DataError(f"task must be 'lm' or 'sentiment', got {task!r}")
    num_proc = num_proc or os.cpu_count() or 1
    if enc is None and tokenizer == CharEncoding.name:
        if not inputs:
            raise DataError("a character vocabulary is made from local files: give them with --input=<files>")
        enc = CharEncoding.of_texts(read_text(f) for f in list_files(inputs + test_inputs))
    enc = enc or gpt2_encoding(tokenizer)
    try:                                                       # one prepare at a time into a folder
        lock_folder(out_dir, holder='another prepare', owner="the data's")
    except ValueError as e:
        raise DataError(str(e)) from None
    try:
        return prepare_locked(name, inputs, test_inputs, task, enc, tokenizer, out_dir, num_proc, test_fraction,
                              force)
    finally:
        unlock_folder(out_dir)


def prepare_locked(name, inputs, test_inputs, task, enc, tokenizer, out_dir, num_proc, test_fraction, force):
    """prepare's writing, with out_dir locked (its arguments resolved by prepare)."""
    local = tokenizer or os.environ.get(TOKENIZER_ENV)
    if local and local != CharEncoding.name and os.path.isfile(local):    # the data carries its tokenizer
        kept = os.path.join(out_dir, f'{enc.name}.tiktoken')
        if not os.path.exists(kept) or not os.path.samefile(local, kept):
            shutil.copyfile(local, kept)
    meta_path = os.path.join(out_dir, 'meta.json')
    meta = {}
    if os.path.isfile(meta_path) and not force:
        try:
            meta = read_meta(meta_path)
        except DataError as e:
            print(f"{e}: preparing every split again")
    source = (HF_DATASETS[name][1:3] if not inputs else
              {'train': [os.path.abspath(p) for p in inputs], 'test': [os.path.abspath(p) for p in test_inputs]})
    source = json.loads(json.dumps(source))                  # as it reads back from meta.json
    if meta and (meta.get('task'), meta.get('source')) != (task, source):
        raise DataError(f"{out_dir} holds {meta.get('task')} data prepared from {meta.get('source')}; "
                        f"pass --force to replace it, or choose --out_dir=<another folder>")
    # what the data is made from: a finished split is kept only when this is what made it
    recipe = dict(tokenizer=enc.name, vocab_size=enc.n_vocab, eot=enc.eot_token, test_fraction=test_fraction,
                  inputs_sha256=files_sha256(list_files(inputs) + list_files(test_inputs)) if inputs else None,
                  hf_splits=None if inputs else HF_DATASETS[name][3])
    recipe = json.loads(json.dumps(recipe))
    if meta and meta.get('recipe') != recipe:
        changed = [k for k in recipe if (meta.get('recipe') or {}).get(k) != recipe[k]]
        print(f"{out_dir}: made from other inputs or options ({', '.join(changed)} differ): preparing every "
              f"split again")
        meta['splits'] = {}
    meta.update(task=task, source=source, tokenizer=enc.name, vocab_size=enc.n_vocab, eot=enc.eot_token,
                dtype='uint16', recipe=recipe, splits=meta.get('splits', {}))
    if isinstance(enc, CharEncoding):
        meta['chars'] = enc.chars

    if inputs:                                               # local files: read them all first (they are small)
        files = {'train': list_files(inputs), 'test': list_files(test_inputs)}
        if not test_inputs:
            files = {s: [f for f in files['train'] if split_of(f) == s] for s in ('train', 'test')}
        if not files['train'] or (not files['test'] and test_fraction <= 0):
            raise DataError(f"need training and test files: got train {files['train']}, test {files['test']} "
                            f"(a file named *test* is test text; or pass --test_input=... or --test_fraction=0.1)")
        if task == 'lm':
            texts = {s: [read_text(f) for f in fs] for s, fs in files.items()}
            for f, t in zip(files['train'] + files['test'], texts['train'] + texts['test']):
                if not t.strip():
                    raise DataError(f"{f}: empty input file")
            if test_fraction > 0 and not files['test']:        # hold out the end of the last training file
                last = texts['train'][-1]
                cut = exact_cut(last, int(len(last) * (1 - test_fraction))) or int(len(last) * (1 - test_fraction))
                texts['train'][-1], texts['test'] = last[:cut], [last[cut:]]
            sources = {s: ([t] for t in ts) for s, ts in texts.items()}
            totals = {s: sum(map(len, ts)) for s, ts in texts.items()}
        else:
            examples = {s: [ex for f in fs for ex in read_labelled(f)] for s, fs in files.items()}
            if test_fraction > 0 and not files['test']:
                perm = np.random.default_rng(0).permutation(len(examples['train']))
                k = int(len(perm) * test_fraction)
                examples = {'test': [examples['train'][i] for i in perm[:k]],
                            'train': [examples['train'][i] for i in perm[k:]]}
            for s, exs in examples.items():
                labels = sorted({y for _, y in exs})
                if not exs or not labels or labels[0] < 0:
                    raise DataError(f"{s} split: no labelled texts, or a negative label ({labels[:3]})")
            sources, totals = examples, {s: sum(len(t) for t, _ in exs) for s, exs in examples.items()}
    else:
        _, hf_path, config, splits = HF_DATASETS[name]
        sources, totals = {}, {}
        streams = {}
        for s, (hf_split, lo, hi) in splits.items():
            rows = lambda hf_split=hf_split, lo=lo, hi=hi: stream_rows(streams, hf_path, config, hf_split, lo, hi)
            if task == 'sentiment':
                sources[s] = lambda rows=rows: ((r['text'], int(r['label'])) for r in rows())
            elif name == 'wikitext103':                        # a split is one text, its rows are lines
                sources[s] = lambda rows=rows: [(r['text'] for r in rows())]
            else:                                              # fineweb-edu: a row is a document
                sources[s] = lambda rows=rows: ([r['text']] for r in rows())
            totals[s] = None

    for s in ('train', 'test'):
        path = os.path.join(out_dir, f'{s}.bin')
        done = (os.path.isfile(path) and s in meta['splits'] and not force
                and os.path.getsize(path) == 2 * meta['splits'][s]['tokens'])
        if task == 'sentiment':
            done = done and os.path.isfile(os.path.join(out_dir, f'{s}.docs.npy'))
        if done:
            print(f"{path}: done already from the same inputs and options ({meta['splits'][s]['tokens']:,} tokens), "
                  f"skipped")
            continue
        src = sources[s]() if callable(sources[s]) else sources[s]
        writer = write_lm_split if task == 'lm' else write_sentiment_split
        n_tokens, n_docs = writer(path, src, enc, num_proc, totals[s])
        meta['splits'][s] = dict(tokens=n_tokens, documents=n_docs)
        replace_atomically(meta_path, lambda f: json.dump(meta, f, indent=1), mode='w')
        print(f"{path}: {n_tokens:,} tokens, {n_docs:,} {'documents' if task == 'lm' else 'texts'}")
    return meta


# ---- reading prepared data back

def data_path(data_dir):
    """A prepared dataset's folder: data_dir where it exists from the working directory (or is absolute), else
    the same relative path inside the repository, where `python tasks.py prepare` writes data/<name>."""
    if os.path.isabs(data_dir) or os.path.exists(data_dir):
        return data_dir
    inside = os.path.join(os.path.dirname(DATA_DIR), data_dir)
    return inside if os.path.exists(inside) else data_dir


def load_prepared(data_dir, task):
    """meta.json of a prepared dataset, checked to be of `task` and to describe its token files (sizes, dtype,
    ids within the vocabulary). Raises DataError with the command to run."""
    meta_path = os.path.join(data_dir, 'meta.json')
    name = os.path.basename(os.path.normpath(data_dir))
    if os.path.abspath(data_dir) != os.path.join(DATA_DIR, name) and os.path.normpath(data_dir) != os.path.join(
            'data', name):                                     # not where prepare writes by default
        name += f' --out_dir={data_dir}'
    if not os.path.isfile(meta_path):
        raise DataError(f"no prepared data in {data_dir}; run: python tasks.py prepare {name} (offline: --input=...)")
    meta = read_meta(meta_path)
    if meta.get('task') != task:
        raise DataError(f"{data_dir} holds {meta.get('task')} data, not {task}")
    splits = meta.get('splits', {})
    missing = [s for s in ('train', 'test') if s not in splits or
               not os.path.isfile(os.path.join(data_dir, f'{s}.bin'))]
    if missing:
        raise DataError(f"{data_dir}: split {missing[0]} is not prepared; re-run python tasks.py prepare {name}")
    if meta.get('dtype', 'uint16') != 'uint16' or not isinstance(meta.get('vocab_size'), int):
        raise DataError(f"{meta_path}: dtype {meta.get('dtype')!r}, vocab_size {meta.get('vocab_size')!r}: not the "
                        f"uint16 token files of python tasks.py prepare; prepare the data again")
    count = lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0
    for key, value in [('eot', meta.get('eot'))] + [(f'splits.{s}.{k}', (splits[s] if isinstance(splits[s], dict)
                                                                        else {}).get(k))
                                                   for s in ('train', 'test') for k in ('tokens', 'documents')]:
        if not count(value):
            raise DataError(f"{meta_path}: {key} is {value!r}, not a whole number >= 0 (a hand-edited meta.json?); "
                            f"prepare the data again")
    for s in ('train', 'test'):                    # the files are the ones meta.json describes
        path = os.path.join(data_dir, f'{s}.bin')
        if os.path.getsize(path) != 2 * splits[s]['tokens']:
            raise DataError(f"{path}: {os.path.getsize(path):,} bytes, but meta.json records {splits[s]['tokens']:,} "
                            f"uint16 tokens ({2 * splits[s]['tokens']:,} bytes); prepare the data again")
        tokens = np.memmap(path, dtype=np.uint16, mode='r') if splits[s]['tokens'] else np.zeros(1, np.uint16)
        top = max(int(tokens[i:i + (1 << 24)].max()) for i in range(0, len(tokens), 1 << 24))
        if top >= meta['vocab_size']:
            raise DataError(f"{path}: token id {top} is outside meta.json's vocabulary of {meta['vocab_size']:,}; "
                            f"prepare the data again")
        docs = os.path.join(data_dir, f'{s}.docs.npy')
        if task == 'sentiment':
            try:
                n = np.load(docs, mmap_mode='r').shape[0]
            except (OSError, ValueError) as e:
                raise DataError(f"{docs}: not readable ({type(e).__name__}); prepare the data again") from None
            if n != splits[s]['documents']:
                raise DataError(f"{docs}: {n:,} texts, but meta.json records {splits[s]['documents']:,}; prepare "
                                f"the data again")
    return meta


def compact_ids(arrays, extra=()):
    """The sorted token ids that occur in `arrays` (uint16 token files) plus `extra`: a compact vocabulary."""
    seen = np.zeros(2 ** 16, dtype=bool)
    for a in arrays:
        for i in range(0, len(a), 1 << 24):
            seen[np.asarray(a[i:i + (1 << 24)])] = True
    seen[list(extra)] = True
    return np.flatnonzero(seen)


def lm_token_ids(data_dir, compact_vocab):
    """(meta, ids) of a prepared lm dataset: ids[k] is the tokenizer id of model token k when compact_vocab,
    else None (model tokens are tokenizer ids). For decoding a model's samples (sample.py)."""
    data_dir = data_path(data_dir)
    meta = load_prepared(data_dir, 'lm')
    if not compact_vocab:
        return meta, None
    files = [np.memmap(os.path.join(data_dir, f'{s}.bin'), dtype=np.uint16, mode='r') for s in ('train', 'test')]
    return meta, compact_ids(files, [meta['eot']])


# ---- the command line: python tasks.py prepare <dataset> [--key=value ...]

def prepare_command(dataset: str,
                    input='',            # comma-separated local files or folders (text for lm; labelled texts for
                                         # sentiment: IMDb-style CSV, Yelp-sentences *.0/*.1, "<label> <text>" lines)
                    test_input='',       # test files (default: the --input files named *test*)
                    test_fraction=0.0,   # hold out this fraction of the input when there is no test file
                    task='',             # lm | sentiment; '' -> the dataset's, else lm
                    tokenizer='',        # local gpt2.tiktoken ('' -> $TIKTOKEN_GPT2_FILE, else tiktoken's download),
                                         # or 'char': one token per character (shakespeare_char's default)
                    out_dir='',          # '' -> data/<dataset>
                    num_proc=0,          # tokenizer threads; 0: all cores
                    force=False):        # redo finished splits
    """Tokenize a dataset (Hugging Face or a download by name, or local files) into data/<dataset>/ for the
    lm and sentiment tasks. GPT-2 BPE (tiktoken), or characters (--tokenizer=char; shakespeare_char), in uint16
    token files."""
    from configurator import fail                          # the command-line layer, only when run as a command
    split = lambda v: [x for x in v.split(',') if x]
    if task not in ('', 'lm', 'sentiment'):
        fail(f"task must be lm or sentiment, got {task!r}")
    if not 0 <= test_fraction < 1:
        fail(f"test_fraction must be in [0, 1), got {test_fraction}")
    target = out_dir or os.path.join(DATA_DIR, dataset)
    if os.path.exists(target) and not os.path.isdir(target):
        fail(f"--out_dir={target} is a file, not a folder")
    try:
        meta = prepare(dataset, split(input), split(test_input), task or None, tokenizer or None, out_dir or None,
                       num_proc or None, test_fraction, force)
    except DataError as e:
        fail(e)
    except OSError as e:                                   # a full disk, a folder that cannot be written
        partial = [f for f in os.listdir(target) if f.endswith('.tmp')] if os.path.isdir(target) else []
        for f in partial:
            os.remove(os.path.join(target, f))
        fail(f"cannot write {e.filename or target}: {cause(e)}; finished splits are kept" +
             (f", the partial {', '.join(sorted(partial))} removed" if partial else ''))
    except KeyboardInterrupt:
        print("interrupted: finished splits are kept, re-run to do the rest", file=sys.stderr)
        sys.exit(130)
    print(f"{out_dir or os.path.join(DATA_DIR, dataset)} ({meta['task']}, {meta['tokenizer']}, vocabulary "
          f"{meta['vocab_size']:,}):")
    for s, v in meta['splits'].items():
        unit = 'documents' if meta['task'] == 'lm' else 'texts'
        print(f"  {s:5s} {v['tokens']:>14,} tokens {v['documents']:>10,} {unit}")


def main(argv=None):
    """python tasks.py prepare ... (or python text_data.py prepare ...): run the command line argv (default
    sys.argv[1:]). Ends with one line `error: ...` and exit status 2 on bad input (configurator.fail)."""
    from configurator import run_command                   # the command-line layer, only when run as a command
    run_command(dict(prepare=prepare_command), argv, doc=f"Known datasets: {', '.join(HF_DATASETS)} (Hugging Face), "
                f"{', '.join(CHAR_DATASETS)} (downloaded, character-level), or any name with --input=FILES.")


if __name__ == '__main__':
    main()
