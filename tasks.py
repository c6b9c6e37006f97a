"""
The tasks of the three papers as token sequences (SPEC §2).

Every task gives input ids x and targets y, both int64 arrays of shape (N, T). Targets are aligned with the
inputs (y[t] is what the model should output at position t) and are -1 at positions that are not trained
or scored: that is the loss mask. Each task has a fixed, seeded test set that training never sees, and
either streams fresh training samples every step (the default, as the authors' code does) or trains on a
fixed set of the paper's size (`fixed_train=True`). Tasks whose examples form a small finite set
(modular addition, memorization) always train on their fixed split.

    task = make_task('retrieval', seed=0)
    x, y = task.get_batch(256, np.random.default_rng(0))
    metrics = task.score(pred, y)          # {'acc': (correct, total), ...}, summable across batches and ranks
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class Task:
    name: str
    vocab_size: int
    block_size: int                      # length T of every input sequence
    test: tuple                          # (x, y), fixed
    train: tuple | None = None           # (x, y) fixed training set, or None to stream samples
    sample: Callable | None = None       # (rng, n) -> (x, y): fresh examples
    eval_on: str = 'test'                # memorization is scored on its training set
    exact_match: bool = False            # also report whole-sequence exact match
    scored_tokens: tuple | None = None   # (lo, hi): only targets in [lo, hi) count for accuracy (k-hop)

    def __post_init__(self):
        self._test_rows = set(map(bytes, self.test[0]))

    def get_batch(self, n, rng):
        """n training examples (x, y), int64 (n, T): rows of the fixed set, or fresh samples that are not
        in the test set. rng: np.random.Generator, the only source of randomness (so resuming is exact)."""
        if self.train is not None:
            idx = rng.integers(0, len(self.train[0]), n)
            return self.train[0][idx], self.train[1][idx]
        xs, ys, have = [], [], 0
        for _ in range(100):
            x, y = self.sample(rng, n - have)
            keep = np.array([bytes(row) not in self._test_rows for row in x])
            xs.append(x[keep]), ys.append(y[keep])
            have += int(keep.sum())
            if have == n:
                return np.concatenate(xs), np.concatenate(ys)
        raise ValueError(f"{self.name}: the test set covers nearly every possible example, so fresh samples are "
                         f"almost all test examples; use a larger task or fixed_train=True")

    def eval_set(self):
        """(x, y) the metric is reported on: the test set (the training set for memorization)."""
        return self.train if self.eval_on == 'train' else self.test

    def score(self, pred, y):
        """Metric counts for predictions pred (N, T) (argmax ids) against targets y (N, T).
        Returns {'acc': (correct, total)} plus {'exact': (rows all correct, rows)} where the task has one;
        numerators and denominators add up across batches and ranks."""
        pred, y = np.asarray(pred), np.asarray(y)
        mask = y >= 0
        if self.scored_tokens is not None:
            mask &= (y >= self.scored_tokens[0]) & (y < self.scored_tokens[1])
        correct = (pred == y) & mask
        out = {'acc': (int(correct.sum()), int(mask.sum()))}
        if self.exact_match:
            rows = mask.any(axis=1)
            out['exact'] = (int((correct.sum(1) == mask.sum(1))[rows].sum()), int(rows.sum()))
        return out


def split_fixed(rng, sample, n_train, n_test):
    """Draw n_train + n_test distinct examples and split them: a fixed training set and a disjoint test set."""
    n = n_train + n_test
    for factor in (1.2, 2, 4, 8):              # small example spaces repeat themselves: draw more
        x, y = sample(rng, int(factor * n) + 16)
        _, first = np.unique(x, axis=0, return_index=True)
        if len(first) >= n:
            break
    else:
        raise ValueError(f"could only draw {len(first)} distinct examples, need {n_train} + {n_test}")
    idx = rng.permutation(np.sort(first))[:n]
    return (x[idx[n_train:]], y[idx[n_train:]]), (x[idx[:n_train]], y[idx[:n_train]])


def make_streaming(name, vocab_size, sample, seed, fixed_train, n_train, n_test, **kw):
    rng = np.random.default_rng(seed)
    if fixed_train:
        test, train = split_fixed(rng, sample, n_train, n_test)
    else:
        test, train = sample(rng, n_test), None
    return Task(name, vocab_size, test[0].shape[1], test, train, sample, **kw)


# -----------------------------------------------------------------------------
# decimal addition (paper 1, §3.1): rev(a) + rev(b) = rev(a+b) <eos>, digits least-significant first

PLUS, EQUALS, EOS = 10, 11, 12


def digits(v, k):
    """The k decimal digits of v (N,), least significant first: (N, k)."""
    return (v[:, None] // 10 ** np.arange(k)) % 10


def decimal_addition(seed=0, fixed_train=False, n_train=50_000, n_test=4_000, n_digits=10):
    """Two n_digits-digit numbers (leading digit != 0) and their (n_digits+1)-digit sum, every digit its own
    token; the sum's digits are scored. Vocabulary 13: digits, '+', '=', <eos>. Metrics: per-digit accuracy
    and exact match of the whole sum."""
    if not 1 <= n_digits <= 17:
        raise ValueError(f"n_digits must be in 1..17 (int64 sums), got {n_digits}")
    d = n_digits

    def sample(rng, n):
        a = rng.integers(10 ** (d - 1), 10 ** d, n)
        b = rng.integers(10 ** (d - 1), 10 ** d, n)
        col = lambda t: np.full((n, 1), t)
        seq = np.concatenate([digits(a, d), col(PLUS), digits(b, d), col(EQUALS), digits(a + b, d + 1),
                              col(EOS)], axis=1)
        x, y = seq[:, :-1], np.full((n, seq.shape[1] - 1), -1)
        answer = slice(2 * d + 1, 3 * d + 2)              # positions that output the sum's digits
        y[:, answer] = seq[:, 2 * d + 2: 3 * d + 3]
        return x, y

    return make_streaming('decimal_addition', 13, sample, seed, fixed_train, n_train, n_test, exact_match=True)


# -----------------------------------------------------------------------------
# retrieval, needle in a haystack (paper 1, §3.1, Fig. 2): k1 v1 ... km vm kq -> value of kq

def retrieval(seed=0, fixed_train=False, n_train=40_000, n_test=4_000, vocab_size=256, m_max=30):
    """m ~ U{1..m_max} key-value pairs, keys distinct from {V/2..V-1}, values from {1..V/2-1}, then a query
    key; the target at the query position is its value. Sequences are right-padded with 0 to length
    2 m_max + 1. Metric: accuracy at the query."""
    V = vocab_size
    if not 1 <= m_max <= V // 2:
        raise ValueError(f"retrieval needs 1 <= m_max <= vocab_size/2 distinct keys, got m_max={m_max}, V={V}")

    def sample(rng, n):
        m = rng.integers(1, m_max + 1, n)
        keys = np.argsort(rng.random((n, V // 2)), axis=1)[:, :m_max] + V // 2      # distinct per row
        values = rng.integers(1, V // 2, (n, m_max))
        pairs = np.stack([keys, values], axis=2).reshape(n, 2 * m_max)
        x = np.zeros((n, 2 * m_max + 1), dtype=np.int64)
        x[:, :-1] = np.where(np.arange(2 * m_max) < 2 * m[:, None], pairs, 0)
        q = (rng.random(n) * m).astype(np.int64)                                     # which pair is asked
        rows = np.arange(n)
        x[rows, 2 * m] = keys[rows, q]
        y = np.full_like(x, -1)
        y[rows, 2 * m] = values[rows, q]
        return x, y

    return make_streaming('retrieval', V, sample, seed, fixed_train, n_train, n_test)


# -----------------------------------------------------------------------------
# k-hop induction heads (Sanford, Hsu, Telgarsky 2024; paper 1 §3.1, paper 2 §5.1)

KHOP_CHARS, KHOP_DNE, KHOP_BLANK, KHOP_VOCAB = 17, 21, 22, 30   # a-d = 17..20


def khop_targets(s, k):
    """hop_k(i) for every position of character strings s (N, n) over {0..3} with s[i] != s[i-1], and
    k (N,) hops per row. hop_0(i) = s_i; one hop goes to the character right after the last earlier
    occurrence of the current character. Returns (N, n) characters, or -1 where the chain does not exist."""
    N, n = s.shape
    rows = np.arange(N)
    last = np.full((N, 4), -1)
    nxt = np.empty((N, n), dtype=np.int64)      # position right after the last earlier occurrence of s_i
    for i in range(n):
        prev = last[rows, s[:, i]]
        nxt[:, i] = np.where(prev >= 0, prev + 1, -1)
        last[rows, s[:, i]] = i
    src = np.broadcast_to(np.arange(n), (N, n)).copy()
    for j in range(int(k.max(initial=0))):
        hop = (j < k)[:, None] & (src >= 0)
        src[hop] = nxt[np.nonzero(hop)[0], src[hop]]
    return np.where(src >= 0, s[rows[:, None], np.maximum(src, 0)], -1)


def khop(seed=0, fixed_train=False, n_train=100_000, n_test=100, k=-1, max_k=16, length=98):
    """A string of `length` characters a-d, each different from the previous; input [k] + string (hop
    tokens 0..16), target [blank] + hop_k(string) aligned position by position, "does not exist" = 21.
    k = -1 draws k ~ U{0..max_k} per example (paper 1); k >= 0 fixes it (paper 2). Metric: accuracy over
    positions whose target is a real character."""
    if k > 16 or max_k > 16:
        raise ValueError(f"k-hop has hop tokens 0..16, got k={k}, max_k={max_k}")

    def sample(rng, n):
        s = (np.cumsum(rng.integers(1, 4, (n, length)), axis=1) + rng.integers(0, 4, (n, 1))) % 4
        kk = rng.integers(0, max_k + 1, n) if k < 0 else np.full(n, k)
        hop = khop_targets(s, kk)
        x = np.concatenate([kk[:, None], s + KHOP_CHARS], axis=1)
        y = np.concatenate([np.full((n, 1), KHOP_BLANK), np.where(hop >= 0, hop + KHOP_CHARS, KHOP_DNE)], axis=1)
        return x, y

    return make_streaming('khop', KHOP_VOCAB, sample, seed, fixed_train, n_train, n_test,
                          scored_tokens=(KHOP_CHARS, KHOP_CHARS + 4))


# -----------------------------------------------------------------------------
# Dyck-1 (paper 1 §3.1: length 40; paper 2 §5.1: vocabulary 4, length <= 60)

OPEN, CLOSE, UNBALANCED, BALANCED = 0, 1, 2, 3


def is_balanced(s, lengths):
    """Brute-force check of parenthesis strings s (N, T) over {OPEN, CLOSE}, of the given lengths (N,)."""
    valid = np.arange(s.shape[1]) < lengths[:, None]
    depth = np.cumsum(np.where(valid, np.where(s == OPEN, 1, -1), 0), axis=1)
    return (depth.min(axis=1) >= 0) & (depth[:, -1] == 0)


def dyck1(seed=0, fixed_train=False, n_train=100_000, n_test=4_000, min_len=40, max_len=40):
    """Classify a parenthesis string of even length in [min_len, max_len] as balanced or not. Half the
    examples are balanced (a random walk that never dips below 0 and closes at the end); the other half
    are unbalanced: random strings, and near misses (a balanced string with 1-3 random flips or swaps).
    Input: the string, right-padded to max_len; the label (BALANCED / UNBALANCED) is the target at its
    last character. Metric: accuracy of the label."""
    lo, hi = max(2, min_len + min_len % 2), max_len - max_len % 2
    if lo > hi:
        raise ValueError(f"dyck1 needs an even length in [min_len, max_len], got [{min_len}, {max_len}]")

    def balanced_strings(rng, lengths):
        n = len(lengths)
        s, h = np.zeros((n, max_len), dtype=np.int64), np.zeros(n, dtype=np.int64)
        for t in range(max_len):
            left = lengths - t
            up = np.where(h == 0, True, np.where(h >= left, False, rng.random(n) < 0.5))
            s[:, t] = np.where(t < lengths, np.where(up, OPEN, CLOSE), OPEN)
            h += np.where(t < lengths, np.where(up, 1, -1), 0)
        return s

    def corrupt(rng, s, lengths):
        s = s.copy()
        n = len(s)
        near = rng.random(n) < 0.5
        noise = rng.integers(0, 2, s.shape)
        s[~near] = noise[~near]                              # random strings
        for _ in range(3):                                   # near misses: up to 3 flips or swaps
            act = near & (rng.random(n) < 0.7)
            i, j = (rng.random((2, n)) * lengths).astype(np.int64)
            r = np.nonzero(act)[0]
            flip = rng.random(len(r)) < 0.5
            s[r[flip], i[r[flip]]] ^= 1
            sw = r[~flip]
            s[sw, i[sw]], s[sw, j[sw]] = s[sw, j[sw]], s[sw, i[sw]]
        return s

    def sample(rng, n):
        lengths = 2 * rng.integers(lo // 2, hi // 2 + 1, n)
        s = balanced_strings(rng, lengths)
        neg = np.arange(n) >= n // 2
        while True:                                           # re-corrupt until every negative is unbalanced
            redo = neg & is_balanced(s, lengths)
            if not redo.any():
                break
            s[redo] = corrupt(rng, s[redo], lengths[redo])
        s = np.where(np.arange(max_len) < lengths[:, None], s, OPEN)
        y = np.full_like(s, -1)
        y[np.arange(n), lengths - 1] = np.where(is_balanced(s, lengths), BALANCED, UNBALANCED)
        perm = rng.permutation(n)
        return s[perm], y[perm]

    return make_streaming('dyck1', 4, sample, seed, fixed_train, n_train, n_test)


# -----------------------------------------------------------------------------
# modular addition (paper 1, §3.1): a b = -> (a + b) mod p

def modular_addition(seed=0, fixed_train=True, n_train=40_000, n_test=4_000, p=599, all_pairs=False):
    """Paper: n_train + n_test distinct pairs (a, b) in [1, p]^2, split. all_pairs=True is the authors'
    code: every pair in [0, p)^2 split 95/5 (they use p = 199). Tokens: numbers 0..p, '=' = p + 1.
    Metric: accuracy of the answer. Always trains on its fixed split."""
    rng = np.random.default_rng(seed)
    if all_pairs:
        a, b = np.divmod(rng.permutation(p * p), p)
        n_test = p * p // 20
    else:
        if n_train + n_test > p * p:
            raise ValueError(f"p={p} has only {p * p} pairs, asked for {n_train + n_test}")
        a, b = np.divmod(rng.choice(p * p, n_train + n_test, replace=False), p)
        a, b = a + 1, b + 1
    x = np.stack([a, b, np.full_like(a, p + 1)], axis=1)
    y = np.full_like(x, -1)
    y[:, 2] = (a + b) % p
    test, train = (x[:n_test], y[:n_test]), (x[n_test:], y[n_test:])
    return Task('modular_addition', p + 2, 3, test, train)


# -----------------------------------------------------------------------------
# memorization (paper 1, §3.1, Table 4): random key -> value pairs, scored on the training set

def memorization(seed=0, fixed_train=True, n_train=None, n_test=None, n_keys=512):
    """n_keys^2 keys (k1, k2) with k1 in [0, n_keys), k2 in [n_keys, 2 n_keys), each with a value uniform in
    [0, n_keys) independent of the key; input [k1, k2], target the value at the k2 position. Metric:
    training accuracy; bits per parameter = log2(n_keys) * n_keys^2 * acc / trainable params. The training
    set is every key, so fixed_train, n_train and n_test are accepted for a uniform interface and unused."""
    rng = np.random.default_rng(seed)
    k1, k2 = np.divmod(np.arange(n_keys * n_keys), n_keys)
    x = np.stack([k1, k2 + n_keys], axis=1)
    y = np.stack([np.full_like(k1, -1), rng.integers(0, n_keys, n_keys * n_keys)], axis=1)
    return Task('memorization', 2 * n_keys, 2, test=(x, y), train=(x, y), eval_on='train')


def bits_per_parameter(acc, n_keys, trainable_params):
    """Memorization capacity (paper 1, Table 4): log2(n_keys) * n_keys^2 * acc / trainable parameters."""
    return np.log2(n_keys) * n_keys ** 2 * acc / trainable_params


# -----------------------------------------------------------------------------
# The text tasks ('lm', 'sentiment': data preparation from Hugging Face or local files, GPT-2 BPE through
# tiktoken, uint16 memmaps) register here as well; see SPEC §2.

TASKS = {
    'decimal_addition': decimal_addition,
    'retrieval': retrieval,
    'khop': khop,
    'dyck1': dyck1,
    'modular_addition': modular_addition,
    'memorization': memorization,
}


def make_task(name, **kwargs):
    """Build a task by name with its keyword settings (see each task's function). Raises ValueError for an
    unknown task or setting."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose from {', '.join(TASKS)}")
    try:
        return TASKS[name](**kwargs)
    except TypeError as e:  # an unknown keyword
        raise ValueError(f"task {name!r}: {e}") from None
