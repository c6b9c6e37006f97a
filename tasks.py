"""
The tasks of the three papers as token sequences (paper 1, §3 and App. B; paper 2, §5; formats in
docs/deviations.md where the papers leave them open).

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

import inspect
import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

# the text tasks' prepared data; DataError (make_task raises it), encoding_of, data_path and lm_token_ids stay
# importable from tasks for the scripts that use them (sample.py)
from text_data import (DATA_DIR, DataError, compact_ids, data_path, encoding_of,  # noqa: F401
                       lm_token_ids, load_prepared)


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
    stored_bits: float = 0.0             # memorization: the information in its training set, in bits
    params: int = 0                      # memorization: the scored model's trainable parameters (train.py sets it)
    train_on_test: bool = False          # fresh samples are not checked against the test set (the authors'
                                         # streams; lm, whose test set is another split)
    n_class: int = 0                     # > 0: targets are class indices for an n_class-way head (sentiment)
    pad_id: int = -1                     # >= 0: the padding token, whose embedding stays zero
    sample_rows: Callable | None = None  # (rng, n, rows) -> rows `rows` (a slice) of sample(rng, n), reading only
                                         # those, from the same draws; for tasks whose every target is scored (lm)
    causal_only: bool = False            # inputs hold each answer after its scored position: a model that sees
                                         # later positions would read it (modular addition's 'pair' format)
    train_split: tuple | None = None     # (N, rows): a fixed training split of N examples batched on demand,
                                         # rows(idx) -> (x, y), that sample draws from (sentiment's texts)

    def __post_init__(self):
        self._test_rows = set(map(bytes, self.test[0]))

    def get_batch(self, n, rng, rows=None):
        """n training examples (x, y), int64 (n, T): rows of the fixed set, or fresh samples that are not
        in the test set (any fresh samples with train_on_test). rng: np.random.Generator, the only source of
        randomness (so resuming is exact). rows: a slice, to return only those rows of the n (a process's share
        of a global batch), the same rows whatever slice is asked for."""
        if rows is not None:
            if self.sample_rows is not None and self.train is None and self.train_on_test:
                return self.sample_rows(rng, n, rows)
            x, y = self.get_batch(n, rng)
            return x[rows], y[rows]
        if self.train is not None:
            idx = rng.integers(0, len(self.train[0]), n)
            return self.train[0][idx], self.train[1][idx]
        if self.train_on_test:
            return self.sample(rng, n)
        xs, ys, have = [], [], 0
        for _ in range(100):
            x, y = self.sample(rng, n - have)
            keep = np.array([bytes(row) not in self._test_rows for row in x])
            xs.append(x[keep]), ys.append(y[keep])
            have += int(keep.sum())
            if have == n:
                return np.concatenate(xs), np.concatenate(ys)
        a, b = (self.sample(np.random.default_rng(s), 8)[0] for s in (1, 2))
        if np.array_equal(a, b):
            raise ValueError(f"{self.name}: sample(rng, n) gives the same examples for different rngs, so every fresh "
                             f"sample is a test example: draw from the rng it is given, not from a generator of "
                             f"its own (docs/fork.md#add-a-task)")
        raise ValueError(f"{self.name}: the test set covers nearly every possible example, so fresh samples are "
                         f"almost all test examples; use a larger task, fixed_train=True or train_on_test=True")

    def fixed_rows(self):
        """(N, rows) of the fixed training set or split, rows(idx) -> (x, y) for an int array idx; None for a task
        that samples fresh examples."""
        if self.train is not None:
            return len(self.train[0]), lambda idx: (self.train[0][idx], self.train[1][idx])
        return self.train_split

    def epoch_batch(self, n, start, seed):
        """Examples start .. start + n - 1 (x, y), int64 (n, T), of the fixed training set's shuffled epochs:
        epoch e (examples e*N .. (e+1)*N - 1 of the stream, N training examples) is the permutation
        np.random.default_rng([seed, e]).permutation(N), so every example is seen once an epoch, as a
        shuffling data loader (the authors' Trainer) goes through it. A batch may straddle two epochs. The stream
        is a function of (seed, start) alone, so resuming at the same start continues it exactly. Raises
        ValueError for a task that streams fresh samples (no fixed training set)."""
        fixed = self.fixed_rows()
        if fixed is None:
            raise ValueError(f"{self.name} samples fresh examples: it has no fixed training set to go through in "
                             f"epochs")
        N, rows = fixed
        first, last = start // N, (start + n - 1) // N
        order = np.concatenate([np.random.default_rng([seed, e]).permutation(N) for e in range(first, last + 1)])
        return rows(order[start - first * N:start - first * N + n])

    def eval_set(self):
        """(x, y) the metric is reported on: the test set (the training set for memorization)."""
        return self.train if self.eval_on == 'train' else self.test

    def score(self, pred, y):
        """Metric counts for predictions pred (N, T) (argmax ids) against targets y (N, T).
        Returns {'acc': (correct, total)} plus {'exact': (rows all correct, rows)} where the task has one, and for
        memorization with params set {'bits_per_param': (stored_bits * correct, total * params)}, the capacity
        of paper 1, Table 4 (stored_bits * acc / params); numerators and denominators add up across batches and
        ranks."""
        pred, y = np.asarray(pred), np.asarray(y)
        mask = y >= 0
        if self.scored_tokens is not None:
            mask &= (y >= self.scored_tokens[0]) & (y < self.scored_tokens[1])
        correct = (pred == y) & mask
        out = {'acc': (int(correct.sum()), int(mask.sum()))}
        if self.exact_match:
            rows = mask.any(axis=1)
            out['exact'] = (int((correct.sum(1) == mask.sum(1))[rows].sum()), int(rows.sum()))
        if self.stored_bits and self.params:
            out['bits_per_param'] = (self.stored_bits * out['acc'][0], out['acc'][1] * self.params)
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


def decimal_addition(seed=0, fixed_train=False, n_train=50_000, n_test=4_000,
                     n_digits=10):             # digits of each summand
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

def retrieval(seed=0, fixed_train=False, n_train=40_000, n_test=4_000,
              vocab_size=256,                # keys from the upper half, values from the lower
              m_max=30):                     # the most key-value pairs in a sequence
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


def retrieval_positions(y):
    """The query's position 2m, (N,), and which positions hold a value before it, (N, T) bool (the odd ones),
    of retrieval targets y (N, T), whose only target is at the query."""
    y = np.asarray(y)
    t = np.arange(y.shape[1])
    query = (y >= 0).argmax(axis=1)
    return query, (t % 2 == 1) & (t < query[:, None])


def retrieval_circuit(attn_1, attn_2, x, y):
    """How far two attention layers form the induction circuit that solves retrieval: layer 1 copies each
    key into the value after it, layer 2 matches the query against those copies and reads the value.

    attn_1, attn_2: (N, H, T, T) attention weights of layers 1 and 2 (model.GPT.attention_probs, as numpy);
    x, y: (N, T) retrieval inputs and targets. Returns (to_key, to_value), (H,) each: layer 1's mean weight
    from every value position to its own key, and layer 2's mean weight from the query to the asked value.
    Uniform causal attention gives about 1/(t+1) at position t."""
    attn_1, attn_2, x, y = (np.asarray(a) for a in (attn_1, attn_2, x, y))
    N, T = x.shape
    rows, t = np.arange(N), np.arange(T)
    query, is_value = retrieval_positions(y)
    prev = np.diagonal(attn_1, offset=-1, axis1=2, axis2=3)                # [n, h, j]: position j+1 -> j
    to_key = (prev * is_value[:, None, 1:]).sum(axis=(0, 2)) / is_value.sum()
    asked = np.argmax((x == x[rows, query][:, None]) & (t < query[:, None]), axis=1)   # the asked key
    to_value = attn_2[rows, :, query, asked + 1].mean(axis=0)
    return to_key, to_value


def retrieval_attention_split(attn_1, attn_2, x, y):
    """Where the two layers' attention goes on retrieval, by kind of position: what retrieval_circuit measures
    beside what the heads attend to instead. Keys sit at even positions, values at odd ones, the query at 2m.

    attn_1, attn_2: (N, H, T, T) causal attention weights of layers 1 and 2; x, y: (N, T) retrieval inputs and
    targets. Returns a dict of (H,) means: layer 1 from every value position onto 'self', 'own_key' (the
    to_key of retrieval_circuit), 'other_keys' and 'other_values'; layer 2 from the query onto 'query_self',
    'query_keys' and 'query_values' (every value, the asked one included). Each layer's parts sum to 1 under
    causal attention."""
    attn_1, attn_2, x, y = (np.asarray(a) for a in (attn_1, attn_2, x, y))
    N, T = x.shape
    rows, t = np.arange(N), np.arange(T)
    query, is_value = retrieval_positions(y)
    mean = lambda a: (a * is_value[:, None]).sum(axis=(0, 2)) / is_value.sum()
    on_keys, on_values = attn_1[..., 0::2].sum(-1), attn_1[..., 1::2].sum(-1)      # (N, H, T) per row
    self_ = np.diagonal(attn_1, axis1=2, axis2=3)
    own_key = np.pad(np.diagonal(attn_1, offset=-1, axis1=2, axis2=3), ((0, 0), (0, 0), (1, 0)))   # j -> j-1
    split = dict(self=mean(self_), own_key=mean(own_key), other_keys=mean(on_keys - own_key),
                 other_values=mean(on_values - self_))
    from_query = attn_2[rows, :, query]                                              # (N, H, T)
    before = t < query[:, None]
    split.update(query_self=from_query[rows, :, query].mean(axis=0),
                 query_keys=(from_query * (before & (t % 2 == 0))[:, None]).sum(-1).mean(axis=0),
                 query_values=(from_query * is_value[:, None]).sum(-1).mean(axis=0))
    return split


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


def khop(seed=0, fixed_train=False, n_train=100_000, n_test=100,
         k=-1,                 # -1: k ~ U{0..max_k} per example (paper 1); 1..4 fixed (paper 2)
         max_k=16,             # the most hops when k = -1
         length=98,            # input characters per sequence (paper 1: 98)
         score_dne=False):     # score the "does not exist" targets too (paper 2's 20% chance level)
    """A string of `length` characters a-d, each different from the previous; input [k] + string (hop
    tokens 0..16), target [blank] + hop_k(string) aligned position by position, "does not exist" = 21.
    k = -1 draws k ~ U{0..max_k} per example (paper 1); k >= 0 fixes it (paper 2). Metric: accuracy over
    positions whose target is a real character, and with score_dne over the "does not exist" ones too (paper 2's
    chance level of 20%, one in five targets; docs/deviations.md#k-hop-metric)."""
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
                          scored_tokens=(KHOP_CHARS, (KHOP_DNE if score_dne else KHOP_CHARS + 3) + 1))


# -----------------------------------------------------------------------------
# Dyck-1 (paper 1 §3.1: length 40; paper 2 §5.1: vocabulary 4, length <= 60)

OPEN, CLOSE, UNBALANCED, BALANCED = 0, 1, 2, 3     # 'last' format: the label is a token of its own
QUERY, PAD = 2, 3                                  # 'query' format: the answer is CLOSE (balanced) or OPEN


def is_balanced(s, lengths):
    """Brute-force check of parenthesis strings s (N, T) over {OPEN, CLOSE}, of the given lengths (N,)."""
    valid = np.arange(s.shape[1]) < lengths[:, None]
    depth = np.cumsum(np.where(valid, np.where(s == OPEN, 1, -1), 0), axis=1)
    return (depth.min(axis=1) >= 0) & (depth[:, -1] == 0)


def geometric(rng):
    """1 + the number of heads before the first tail of a fair coin: 1, 2, 3, ... with probability 1/2, 1/4, ..."""
    n = 1
    while rng.random() < 0.5:
        n += 1
    return n


def balanced_string(rng, pairs):
    """A random balanced string of `pairs` pairs (list of OPEN/CLOSE): one pair, a pair around a shorter
    balanced string, or two balanced strings side by side, each with probability as Zhong & Andreas's
    generator (paper 1's Dyck-1 data)."""
    if pairs == 0:
        return []
    if pairs == 1:
        return [OPEN, CLOSE]
    if rng.random() < 0.5:
        return [OPEN] + balanced_string(rng, pairs - 1) + [CLOSE]
    u = int(rng.integers(1, pairs))
    return balanced_string(rng, u) + balanced_string(rng, pairs - u)


def dyck1_query_string(rng, max_len):
    """One string of the authors' Dyck-1 stream, at most max_len characters (list of OPEN/CLOSE): a third are
    uniformly random strings of length 1..max_len; the rest are random balanced strings of 1..max_len/2 pairs,
    half of which are kept as they are, the others (and every random string) mutated by a random mix of
    swaps of two positions and flips of one (a geometric number of each, flips doubled 2/3 of the time), so
    that most unbalanced strings are near misses."""
    mutate = int(rng.integers(0, 4))
    if rng.integers(0, 3) == 0:
        s = list(rng.integers(0, 2, int(rng.integers(1, max_len + 1))))
    else:
        s = balanced_string(rng, int(rng.integers(1, max_len // 2 + 1)))
        if rng.random() < 0.5:
            mutate = 0
    if mutate & 1:
        for _ in range(geometric(rng)):
            p, q = rng.integers(0, len(s), 2)
            if p < q:
                s[p], s[q] = s[q], s[p]
    if mutate & 2:
        flips = geometric(rng) * (2 if rng.integers(0, 3) else 1)
        for p in rng.integers(0, len(s), flips):
            s[p] = 1 - s[p]
    return s


def balanced_strings_batched(rng, pairs, width):
    """balanced_string for many strings at once: row i of the (N, width) result begins with a random balanced
    string of pairs[i] >= 1 pairs (the rest is OPEN). The same grammar, expanded breadth-first: each pending
    segment (row, p pairs, offset) of every row is one pair (p = 1), a pair around p - 1 pairs, or two segments
    of u and p - u pairs, u ~ U{1..p-1}. A segment's draws are its own, so the order in which segments are
    expanded does not change the distribution."""
    s = np.full((len(pairs), width), OPEN, dtype=np.int64)
    row, p, off = np.arange(len(pairs)), np.asarray(pairs, dtype=np.int64), np.zeros(len(pairs), dtype=np.int64)
    while len(row):
        s[row, off + 2 * p - 1] = CLOSE               # every segment ends in CLOSE; a pair's OPEN is the fill
        wrap = (p > 1) & (rng.random(len(row)) < 0.5)
        split = (p > 1) & ~wrap
        u = rng.integers(1, p[split])
        row = np.concatenate([row[wrap], row[split], row[split]])
        p, off = (np.concatenate([p[wrap] - 1, u, p[split] - u]),
                  np.concatenate([off[wrap] + 1, off[split], off[split] + 2 * u]))
    return s


def dyck1_query_strings(rng, n, max_len):
    """n strings of dyck1_query_string's distribution, drawn in arrays (7-11 times faster at the full-size
    configs' batches; another stream of draws for a given rng): (s, lengths), s (n, max_len) of OPEN/CLOSE, OPEN
    past each length. Each string's swaps, then its flips, are applied in their order, as dyck1_query_string
    does."""
    mutate = rng.integers(0, 4, n)
    uniform = rng.integers(0, 3, n) == 0                  # a uniformly random string, else a balanced one
    lengths = np.where(uniform, rng.integers(1, max_len + 1, n), 2 * rng.integers(1, max_len // 2 + 1, n))
    s = rng.integers(0, 2, (n, max_len))
    s[~uniform] = balanced_strings_batched(rng, lengths[~uniform] // 2, max_len)
    s[np.arange(max_len) >= lengths[:, None]] = OPEN
    mutate[~uniform & (rng.random(n) < 0.5)] = 0          # half the balanced strings stay as they are
    swaps = np.where(mutate & 1, rng.geometric(0.5, n), 0)
    for k in range(swaps.max(initial=0)):                 # the k-th swap of every string that makes one
        r = np.nonzero(swaps > k)[0]
        i, j = rng.integers(0, lengths[r]), rng.integers(0, lengths[r])
        r, i, j = r[i < j], i[i < j], j[i < j]
        s[r, i], s[r, j] = s[r, j], s[r, i]
    flips = np.where(mutate & 2, rng.geometric(0.5, n) * np.where(rng.integers(0, 3, n) > 0, 2, 1), 0)
    r = np.repeat(np.arange(n), flips)
    hits = np.zeros_like(s)
    np.add.at(hits, (r, rng.integers(0, lengths[r])), 1)
    return s ^ (hits & 1), lengths                        # a position flipped twice is back as it was


def dyck1_counting_baseline(x, y, labels):
    """Accuracy of "balanced iff the string has as many OPEN as CLOSE", the rule that ignores order, on a
    Dyck-1 set (x, y) (N, T): the string is what precedes each scored position, inclusive. labels:
    (unbalanced token, balanced token) of the set's format (a dyck1 task's .labels). A model that does not
    beat it has not learned the prefix condition."""
    x, y = np.asarray(x), np.asarray(y)
    rows, cols = np.nonzero(y >= 0)
    upto = np.arange(x.shape[1]) <= cols[:, None]
    opens = ((x[rows] == OPEN) & upto).sum(1)
    closes = ((x[rows] == CLOSE) & upto).sum(1)
    guess = np.where(opens == closes, labels[1], labels[0])
    return float((guess == y[rows, cols]).mean()) if len(rows) else float('nan')


def dyck1(seed=0, fixed_train=False, n_train=100_000, n_test=4_000,
          min_len=40,           # the shortest string ('last' format)
          max_len=40,           # the longest string (characters)
          format='query',       # 'query': the string, then ? and the answer (authors'); 'last': label at the last
          batched=False):       # query format: draw a batch's strings together (same distribution, faster)
    """Classify a parenthesis string as balanced or not. Metric: accuracy of the answer.

    format='query' (default; the authors' stream, Zhong & Andreas's task_dyckstream): a string of at most
    max_len characters from dyck1_query_string, then QUERY; the target at QUERY is CLOSE when the string is
    balanced, else OPEN; the rest is PAD. Vocabulary 4 (OPEN, CLOSE, QUERY, PAD), T = max_len + 1.
    min_len is unused. batched=True draws a batch's strings together (dyck1_query_strings: the same
    distribution, several times faster, other strings for a given seed, test set included); False draws
    them one by one, in the generator's own order of draws.

    format='last': a string of even length in [min_len, max_len]. Half the examples are balanced (a random walk
    that never dips below 0 and closes at the end); the other half are unbalanced: random strings, and near
    misses (a balanced string with 1-3 random flips or swaps). Input: the string, right-padded to max_len; the
    label (BALANCED / UNBALANCED) is the target at its last character. T = max_len.

    The task's .labels is (unbalanced token, balanced token), for dyck1_counting_baseline."""
    if format == 'query':
        return dyck1_query(seed, fixed_train, n_train, n_test, max_len, batched)
    if format != 'last':
        raise ValueError(f"dyck1 format must be 'query' or 'last', got {format!r}")
    if batched:
        raise ValueError("dyck1_batched is for the 'query' format ('last' always draws its strings together)")
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

    task = make_streaming('dyck1', 4, sample, seed, fixed_train, n_train, n_test)
    task.labels = (UNBALANCED, BALANCED)
    return task


def dyck1_query(seed, fixed_train, n_train, n_test, max_len, batched=False):
    """dyck1 in the 'query' format (see dyck1)."""
    if max_len < 2:
        raise ValueError(f"dyck1 needs max_len >= 2, got {max_len}")

    def sample(rng, n):
        x = np.full((n, max_len + 1), PAD, dtype=np.int64)
        y = np.full((n, max_len + 1), -1, dtype=np.int64)
        if batched:
            s, lengths = dyck1_query_strings(rng, n, max_len)
            x[:, :max_len] = np.where(np.arange(max_len) < lengths[:, None], s, PAD)
        else:
            lengths = np.empty(n, dtype=np.int64)
            for i in range(n):
                s = dyck1_query_string(rng, max_len)
                x[i, :len(s)], lengths[i] = s, len(s)
        x[np.arange(n), lengths] = QUERY
        y[np.arange(n), lengths] = np.where(is_balanced(x, lengths), CLOSE, OPEN)
        return x, y

    task = make_streaming('dyck1', 4, sample, seed, fixed_train, n_train, n_test)
    task.labels = (OPEN, CLOSE)
    return task


# -----------------------------------------------------------------------------
# modular addition (paper 1, §3.1): a b = -> (a + b) mod p

def modular_addition(seed=0, fixed_train=True, n_train=40_000, n_test=4_000,
                     p=599,               # the modulus
                     all_pairs=False,     # every pair in [0, p)^2 split 95/5 (the authors' code)
                     format='equals'):    # 'pair': `a b c`, the sum predicted at b's position (authors' layout)
    """Paper: n_train + n_test distinct pairs (a, b) in [1, p]^2, split. all_pairs=True is the authors'
    code: every pair in [0, p)^2 split 95/5 (they use p = 199). Tokens: numbers 0..p, '=' = p + 1.

    format='equals': the sequence `a b =`, the sum predicted at '='. format='pair' is the authors' layout
    (modadd_exp.py): the sequence `a b c` with c = (a + b) mod p, the sum predicted at b's position, no '='
    token; c only fills the third position (never scored, and unseen by causal models at b's position).
    Metric: accuracy of the answer. Always trains on its fixed split. Raises ValueError for an unknown format
    or more pairs than p^2."""
    if format not in ('equals', 'pair'):
        raise ValueError(f"modular_addition format must be 'equals' or 'pair', got {format!r}")
    rng = np.random.default_rng(seed)
    if all_pairs:
        a, b = np.divmod(rng.permutation(p * p), p)
        n_test = p * p // 20
    else:
        if n_train + n_test > p * p:
            raise ValueError(f"p={p} has only {p * p} pairs, asked for {n_train + n_test}")
        a, b = np.divmod(rng.choice(p * p, n_train + n_test, replace=False), p)
        a, b = a + 1, b + 1
    c = (a + b) % p
    x = np.stack([a, b, np.full_like(a, p + 1) if format == 'equals' else c], axis=1)
    y = np.full_like(x, -1)
    y[:, 2 if format == 'equals' else 1] = c
    test, train = (x[:n_test], y[:n_test]), (x[n_test:], y[n_test:])
    return Task('modular_addition', p + 2, 3, test, train, causal_only=format == 'pair')


# -----------------------------------------------------------------------------
# memorization (paper 1, §3.1, Table 4): random key -> value pairs, scored on the training set

def memorization(seed=0, fixed_train=True, n_train=None, n_test=None,
                 n_keys=512):           # n_keys^2 key pairs, each with a random value
    """n_keys^2 keys (k1, k2) with k1 in [0, n_keys), k2 in [n_keys, 2 n_keys), each with a value uniform in
    [0, n_keys) independent of the key; input [k1, k2], target the value at the k2 position. Metric:
    training accuracy; bits per parameter = log2(n_keys) * n_keys^2 * acc / trainable params. The training
    set is every key, so fixed_train, n_train and n_test are accepted for a uniform interface and unused."""
    rng = np.random.default_rng(seed)
    k1, k2 = np.divmod(np.arange(n_keys * n_keys), n_keys)
    x = np.stack([k1, k2 + n_keys], axis=1)
    y = np.stack([np.full_like(k1, -1), rng.integers(0, n_keys, n_keys * n_keys)], axis=1)
    return Task('memorization', 2 * n_keys, 2, test=(x, y), train=(x, y), eval_on='train',
                stored_bits=float(np.log2(n_keys) * n_keys ** 2))


# -----------------------------------------------------------------------------
# Text (paper 1, Table 2 language modeling, Table 3 Yelp sentiment) on the uint16 token files that text_data.py
# prepares: `python tasks.py prepare <dataset>` writes DATA_DIR/<dataset>/ (train.bin, test.bin, meta.json).

def lm(seed=0, fixed_train=False, n_train=None, n_test=0,
       data_dir='data/wikitext103',   # made by: python tasks.py prepare wikitext103 (or prepare <name> --input=files)
       block_size=256,                # training windows and non-overlapping test windows
       compact_vocab=False):          # relabel the ids that occur to 0..K-1: a K-way output layer (CPU runs)
    """Next-token prediction on a prepared token file (paper 1, Tables 2 and 9). Training: windows of block_size
    + 1 tokens at uniformly random offsets of train.bin (nanoGPT's get_batch), x the first T, y the last T.
    Test: one deterministic pass over the whole of test.bin in non-overlapping windows of T inputs, so every
    test token but the first is predicted exactly once (within its window's context) and val_loss is the test
    log-perplexity in nats per token; the last window is right-padded with y = -1. n_test > 0 keeps only the
    first n_test windows (quick looks only). compact_vocab: relabel the ids that occur in train or test to
    0..K-1, so the output layer has K rather than 50,257 classes (CPU runs; the loss is then over K classes).
    seed, fixed_train and n_train are accepted for a uniform interface and unused (the corpus is fixed).
    A relative data_dir is read from the working directory, else from the repository (data_path). Raises
    DataError when the data is not prepared."""
    data_dir = data_path(data_dir)
    meta, ids = lm_token_ids(data_dir, compact_vocab)
    train = np.memmap(os.path.join(data_dir, 'train.bin'), dtype=np.uint16, mode='r')
    test = np.memmap(os.path.join(data_dir, 'test.bin'), dtype=np.uint16, mode='r')
    T = block_size
    if len(train) <= T + 1 or len(test) < 2:
        raise DataError(f"{data_dir}: {len(train):,} training / {len(test):,} test tokens, too few for "
                        f"block_size={T}")
    table = np.zeros(2 ** 16, dtype=np.int64)
    table[ids if ids is not None else np.arange(meta['vocab_size'])] = np.arange(
        len(ids) if ids is not None else meta['vocab_size'])

    n_win = -(-(len(test) - 1) // T)
    if n_test:
        n_win = min(n_win, n_test)
    n = min(n_win * T, len(test) - 1)
    x = np.zeros(n_win * T, dtype=np.int64)
    y = np.full(n_win * T, -1, dtype=np.int64)
    x[:n], y[:n] = table[test[:n]], table[test[1:n + 1]]

    def sample_rows(rng, n, rows):
        start = rng.integers(0, len(train) - T - 1, n)[rows]
        w = table[train[start[:, None] + np.arange(T + 1)]]
        return w[:, :-1], w[:, 1:]

    task = Task('lm', len(ids) if ids is not None else meta['vocab_size'], T, test=(x.reshape(n_win, T),
                y.reshape(n_win, T)), sample=lambda rng, n: sample_rows(rng, n, slice(None)),
                sample_rows=sample_rows, train_on_test=True)   # the test windows are another split's
    task.token_ids = ids                                   # token_ids[k]: the GPT-2 id of compact id k (or None)
    return task


def crop_unscored(x, y, multiple=1):
    """Drop the trailing positions that no row scores: a causal model's outputs at scored positions do not
    depend on them (right-padded batches: short texts padded to 256, retrieval, Dyck-1 of mixed lengths). The
    length kept is rounded up to a multiple of `multiple` (at most T), so that a compiled model sees a few
    lengths, not one per text length. x, y: (N, T) -> (N, T') arrays."""
    scored = np.flatnonzero((np.asarray(y) >= 0).any(axis=0))
    if len(scored) == 0:
        return x, y
    keep = min(-(-(scored[-1] + 1) // multiple) * multiple, np.shape(y)[1])
    return x[:, :keep], y[:, :keep]


def sentiment(seed=0, fixed_train=False, n_train=None, n_test=0,
              data_dir='data/yelp',   # made by: python tasks.py prepare yelp (or imdb, or <name> --input=files)
              block_size=256,         # texts truncated / padded to this; the label is the target at the last token
              compact_vocab=False,    # relabel the ids that occur to 0..K-1
              padding='left',         # 'left': every text ends at the last position; 'right': starts at position 0
              label='token',          # 'class': an n-class head (the authors' classifier); 'token': the label's id
              bos=False):             # <|endoftext|> at position 0, pads a token of their own (the authors' BOS)
    """Text classification (paper 1, Table 3, Yelp polarity): a text's first block_size tokens, padded; the
    target at its last (non-pad) token is the label, every other target -1. label 'class': the label's index
    among the dataset's sorted labels, for an n_class-way head (task.n_class; the authors' classifier, a `score`
    head on the last non-pad token); 'token': the label as a token id (0 negative, 1 positive) scored through
    the vocabulary-wide head. bos: <|endoftext|> at position 0 (as the authors' Llama tokenizer's BOS) and the
    text after it, padded with a token of its own (id vocab_size - 1); without bos the pad is <|endoftext|>.
    task.pad_id is the pad's id (its embedding stays zero, the authors' padding_idx). padding 'right': the
    text from position 0 (the authors' tokenizer); 'left': the text ends at position block_size - 1. Metric:
    accuracy over the test split (n_test > 0: a seeded random subset of that size). The test set is sorted by
    length so right-padded evaluation batches of causal models crop well (crop_unscored). compact_vocab: as
    lm, with the label ids kept for label 'token'. Training draws texts uniformly from the training split (with
    replacement; task.train_split goes through it in epochs). fixed_train and n_train are accepted for a uniform
    interface and unused. Raises DataError, or ValueError for a padding or label it does not know. data_dir: as
    lm's (data_path)."""
    if padding not in ('right', 'left'):
        raise ValueError(f"sentiment_padding must be 'right' or 'left', got {padding!r}")
    if label not in ('class', 'token'):
        raise ValueError(f"sentiment_label must be 'class' or 'token', got {label!r}")
    data_dir = data_path(data_dir)
    meta = load_prepared(data_dir, 'sentiment')
    split = {}
    for s in ('train', 'test'):
        tokens = np.memmap(os.path.join(data_dir, f'{s}.bin'), dtype=np.uint16, mode='r')
        split[s] = (tokens, np.load(os.path.join(data_dir, f'{s}.docs.npy')))
    labels = np.unique(np.concatenate([d[:, 2] for _, d in split.values()]))
    if len(labels) < 2:
        raise DataError(f"{data_dir}: only label(s) {labels.tolist()}; classification needs two or more")
    label_ids = labels if label == 'token' else []
    ids = compact_ids([t for t, _ in split.values()], [meta['eot'], *label_ids]) if compact_vocab else None
    V = len(ids) if ids is not None else max(meta['vocab_size'], int(labels.max()) + 1)
    table = np.zeros(2 ** 16, dtype=np.int64)
    table[ids if ids is not None else np.arange(V)] = np.arange(V)
    target = table[labels] if label == 'token' else np.arange(len(labels))      # of each label, in labels' order
    T, first_text = block_size, int(bos)
    pad, V = (V, V + 1) if bos else (table[meta['eot']], V)

    def batch(tokens, docs):
        x = np.full((len(docs), T), pad, dtype=np.int64)
        y = np.full((len(docs), T), -1, dtype=np.int64)
        for i, (start, end, lab) in enumerate(docs):
            n = min(end - start, T - first_text)
            first = first_text if padding == 'right' else T - n
            x[i, first:first + n] = table[tokens[start:start + n]]
            if bos:
                x[i, first - 1] = table[meta['eot']]
            y[i, first + n - 1] = target[np.searchsorted(labels, lab)]
        return x, y

    test_tokens, test_docs = split['test']
    if n_test:
        test_docs = test_docs[np.sort(np.random.default_rng(seed).permutation(len(test_docs))[:n_test])]
    test_docs = test_docs[np.argsort(test_docs[:, 1] - test_docs[:, 0], kind='stable')]
    train_tokens, train_docs = split['train']

    def rows(idx):
        return batch(train_tokens, train_docs[idx])

    def sample(rng, n):
        return rows(rng.integers(0, len(train_docs), n))

    task = Task('sentiment', V, T, test=batch(test_tokens, test_docs), sample=sample,
                n_class=len(labels) if label == 'class' else 0, pad_id=int(pad), train_split=(len(train_docs), rows))
    task.token_ids = ids
    return task


TASKS = {
    'decimal_addition': decimal_addition,
    'retrieval': retrieval,
    'khop': khop,
    'dyck1': dyck1,
    'modular_addition': modular_addition,
    'memorization': memorization,
    'lm': lm,
    'sentiment': sentiment,
}


SHARED = ('seed', 'fixed_train', 'n_train', 'n_test', 'block_size')   # train.py's own keys for these: task_seed,
                                                                   # fixed_train, n_train, n_test, block_size


def settings():
    """Every task's own settings as train.py's keys: ({'<task>_<setting>': default}, {key: comment}), read from the
    task functions' signatures (the parameters after SHARED) and the comments on their lines, so that a task's
    settings are written once, here (configurator.declare_keys puts them into train.py, --help lists them)."""
    import configurator
    defaults, comments = {}, {}
    for name, fn in TASKS.items():
        notes = configurator.comments_in(inspect.getsource(fn))
        for p in inspect.signature(fn).parameters.values():
            if p.name not in SHARED:
                defaults[f'{name}_{p.name}'] = p.default
                comments[f'{name}_{p.name}'] = notes.get(p.name, '')
    return defaults, comments


LOWEST = {   # task: {setting: its lowest value}; a setting is train.py's key <task>_<setting> (or block_size)
    'decimal_addition': dict(n_digits=1), 'retrieval': dict(vocab_size=2, m_max=1),
    'khop': dict(k=-1, max_k=0, length=2),
    'dyck1': dict(min_len=0, max_len=2), 'modular_addition': dict(p=2), 'memorization': dict(n_keys=1),
    'lm': dict(block_size=1), 'sentiment': dict(block_size=2),
}


def check_settings(name, kwargs):
    """Raise ValueError naming the first of a task's settings that is below its lowest value (LOWEST), or a
    pair of settings out of order (dyck1 'last': min_len <= max_len; khop: k <= max_k), by their train.py keys."""
    for key, low in LOWEST.get(name, {}).items():
        if key in kwargs and isinstance(kwargs[key], int) and kwargs[key] < low:
            raise ValueError(f"block_size must be >= {low} for {name}, got {kwargs[key]}" if key in SHARED else
                             f"{name}_{key} must be >= {low}, got {kwargs[key]}")
    pairs = dict(dyck1=('min_len', 'max_len') if kwargs.get('format') == 'last' else None, khop=('k', 'max_k'))
    lo_key, hi_key = pairs.get(name) or (None, None)
    if lo_key in kwargs and hi_key in kwargs and kwargs[lo_key] > kwargs[hi_key]:
        raise ValueError(f"{name}_{lo_key}={kwargs[lo_key]} must be <= {name}_{hi_key}={kwargs[hi_key]}")


def make_task(name, **kwargs):
    """Build a task by name with its keyword settings (see each task's function). Raises ValueError for an
    unknown task or setting, a setting out of range (check_settings), or sizes whose arrays cannot be allocated
    (numpy's estimate, before anything is allocated)."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose from {', '.join(TASKS)}")
    check_settings(name, kwargs)
    try:
        return TASKS[name](**kwargs)
    except TypeError as e:  # an unknown keyword
        raise ValueError(f"task {name!r}: {e}") from None
    except MemoryError as e:  # numpy refuses the allocation before making it: say which and how large
        need = str(e).replace('Unable to allocate', 'its arrays need')
        raise ValueError(f"task {name!r} with these settings cannot be built here: {need} (lower n_test or its "
                         f"sizes)") from None


if __name__ == '__main__':
    import text_data
    text_data.main()                                       # python tasks.py prepare <dataset>: text_data.py's command
