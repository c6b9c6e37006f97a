"""tasks.py: every example agrees with a brute-force solver written from the task's definition, test sets
are fixed and disjoint from training, and the metrics count what they claim."""

import inspect
from collections import Counter

import numpy as np
import pytest

import runconfig
import tasks


def examples(task, n=300, seed=1):
    return task.get_batch(n, np.random.default_rng(seed))


def test_decimal_addition_against_integer_arithmetic():
    task = tasks.make_task('decimal_addition', n_test=50)
    x, y = examples(task)
    for xi, yi in zip(x, y):
        toks = list(xi) + [tasks.EOS]
        plus, eq = toks.index(tasks.PLUS), toks.index(tasks.EQUALS)
        a = int(''.join(map(str, toks[:plus]))[::-1])
        b = int(''.join(map(str, toks[plus + 1:eq]))[::-1])
        assert 10 ** 9 <= a < 10 ** 10 and 10 ** 9 <= b < 10 ** 10
        scored = [int(t) for t in yi if t >= 0]
        assert int(''.join(map(str, scored))[::-1]) == a + b and len(scored) == 11
        assert all(yi[t] == toks[t + 1] for t in range(len(yi)) if yi[t] >= 0)   # next-token targets


def test_retrieval_against_dictionary_lookup():
    task = tasks.make_task('retrieval', n_test=50, vocab_size=64, m_max=8)
    x, y = examples(task)
    for xi, yi in zip(x, y):
        (q,) = np.nonzero(yi >= 0)[0]
        keys, values = list(xi[:q:2]), list(xi[1:q:2])
        assert 1 <= len(keys) <= 8 and len(set(keys)) == len(keys)
        assert all(32 <= k < 64 for k in keys) and all(1 <= v < 32 for v in values)
        assert yi[q] == dict(zip(keys, values))[xi[q]]
        assert np.all(xi[q + 1:] == 0)


def brute_force_hop(s, k):
    """hop_k for every position, straight from the definition (Sanford et al. 2024)."""
    out = []
    for i in range(len(s)):
        src, ok = i, True
        for _ in range(k):
            earlier = [j for j in range(src) if s[j] == s[src]]
            if not earlier:
                ok = False
                break
            src = earlier[-1] + 1
        out.append(s[src] if ok else None)
    return out


@pytest.mark.parametrize('k', [-1, 0, 1, 3])
def test_khop_against_brute_force(k):
    task = tasks.make_task('khop', n_test=10, k=k)
    x, y = examples(task, n=20)
    assert x.shape == y.shape == (20, 99)
    for xi, yi in zip(x, y):
        kk, s = xi[0], list(xi[1:] - tasks.KHOP_CHARS)
        assert (kk == k) if k >= 0 else 0 <= kk <= 16
        assert all(0 <= c < 4 for c in s) and all(a != b for a, b in zip(s, s[1:]))
        expect = [tasks.KHOP_DNE if h is None else h + tasks.KHOP_CHARS for h in brute_force_hop(s, kk)]
        assert yi[0] == tasks.KHOP_BLANK and list(yi[1:]) == expect


def test_khop_metric_ignores_blank_and_missing():
    task = tasks.make_task('khop', n_test=10, k=2)
    x, y = examples(task, n=5)
    counts = task.score(y, y)['acc']
    real = ((y >= tasks.KHOP_CHARS) & (y < tasks.KHOP_CHARS + 4)).sum()
    assert counts == (real, real) and real < (y >= 0).sum()


def stack_balanced(s):
    depth, ok = 0, True
    for c in s:
        depth += 1 if c == tasks.OPEN else -1
        ok &= depth >= 0
    return ok and depth == 0


@pytest.mark.parametrize('batched', [False, True])
@pytest.mark.parametrize('max_len', [40, 12])
def test_dyck1_query_format_against_stack_checker(max_len, batched):
    """The authors' format: a string of <= max_len parentheses, QUERY, PAD; the answer (CLOSE if balanced, else
    OPEN) is the target at QUERY only; a third random strings, the rest balanced strings half of them mutated."""
    task = tasks.make_task('dyck1', n_test=50, max_len=max_len, batched=batched)
    assert (task.vocab_size, task.block_size, task.labels) == (4, max_len + 1, (tasks.OPEN, tasks.CLOSE))
    x, y = examples(task, n=1000)
    labels, lengths = [], []
    for xi, yi in zip(x, y):
        (q,) = np.nonzero(yi >= 0)[0]
        assert xi[q] == tasks.QUERY and 1 <= q <= max_len and set(xi[q + 1:]) <= {tasks.PAD}
        assert set(xi[:q]) <= {tasks.OPEN, tasks.CLOSE}
        balanced = stack_balanced(xi[:q])
        assert yi[q] == (tasks.CLOSE if balanced else tasks.OPEN)
        labels.append(balanced)
        lengths.append(q)
    assert 0.3 < np.mean(labels) < 0.65 and len(set(lengths)) > max_len // 2     # lengths vary
    odd = np.array(lengths) % 2 == 1                                                # only random strings are odd
    assert 0.1 < odd.mean() < 0.25


def two_sample_chi2(a, b):
    """Pearson's statistic and degrees of freedom for "samples a and b (lists of hashable outcomes, equal sizes)
    come from one distribution"; under it the statistic is about df ± sqrt(2 df)."""
    ca, cb = Counter(a), Counter(b)
    keys = ca.keys() | cb.keys()
    return sum((ca[k] - cb[k]) ** 2 / (ca[k] + cb[k]) for k in keys), len(keys) - 1


def test_dyck1_batched_strings_have_the_string_by_string_distribution():
    """dyck1_query_strings against dyck1_query_string, whole strings as outcomes: max_len 6 (126 strings, every
    mutation path) and 60000 draws each; and balanced_strings_batched against balanced_string on the 42 strings
    of 5 pairs. The statistics stay within df + 5 sqrt(2 df). Each of these takes the first over its bound: a
    swap made for p > q too, 40% of the balanced strings kept unmutated, the doubled flip count drawn a third of
    the time; and the second: a segment wrapped with probability 0.45."""
    n = 60_000
    rng = np.random.default_rng(0)
    loop = [tuple(tasks.dyck1_query_string(rng, 6)) for _ in range(n)]
    s, lengths = tasks.dyck1_query_strings(np.random.default_rng(1), n, 6)
    batched = [tuple(row[:k]) for row, k in zip(s.tolist(), lengths)]
    stat, df = two_sample_chi2(loop, batched)
    assert df > 100 and stat < df + 5 * np.sqrt(2 * df)
    rng = np.random.default_rng(2)
    loop = [tuple(tasks.balanced_string(rng, 5)) for _ in range(20_000)]
    batched = list(map(tuple, tasks.balanced_strings_batched(np.random.default_rng(3), [5] * 20_000, 10).tolist()))
    stat, df = two_sample_chi2(loop, batched)
    assert df == 41 and stat < df + 5 * np.sqrt(2 * df)
    assert all(stack_balanced(np.array(w)) for w in set(batched))


def test_dyck1_counting_baseline():
    """Counting ignores order: on '()', '((' and '(' it is right, on ')(' (equal counts, unbalanced) wrong."""
    O, C, Q, P = tasks.OPEN, tasks.CLOSE, tasks.QUERY, tasks.PAD
    x = np.array([[O, C, Q, P], [C, O, Q, P], [O, O, Q, P], [O, Q, P, P]])
    y = np.full_like(x, -1)
    y[:, 2] = [C, O, O, -1]
    y[3, 1] = O
    assert tasks.dyck1_counting_baseline(x, y, (O, C)) == 0.75                    # wrong on ')(' only
    task = tasks.make_task('dyck1', n_test=2000)
    acc = tasks.dyck1_counting_baseline(*task.test, task.labels)
    assert 0.85 < acc < 0.97                  # the authors' stream: most negatives have unequal counts


@pytest.mark.parametrize('lo, hi', [(40, 40), (2, 60)])
def test_dyck1_last_format_against_stack_checker(lo, hi):
    task = tasks.make_task('dyck1', n_test=50, min_len=lo, max_len=hi, format='last')
    x, y = examples(task, n=400)
    labels = []
    for xi, yi in zip(x, y):
        (last,) = np.nonzero(yi >= 0)[0]
        assert lo <= last + 1 <= hi and (last + 1) % 2 == 0
        balanced = stack_balanced(xi[:last + 1])
        assert yi[last] == (tasks.BALANCED if balanced else tasks.UNBALANCED)
        labels.append(balanced)
    assert 0.4 < np.mean(labels) < 0.6
    # negatives include near misses: unbalanced strings whose counts of '(' and ')' are equal
    near = [(xi[:np.nonzero(yi >= 0)[0][0] + 1] == tasks.OPEN).mean() == 0.5 for xi, yi in zip(x, y)]
    assert sum(n and not b for n, b in zip(near, labels)) > 20


def test_modular_addition():
    task = tasks.make_task('modular_addition', p=599)
    (xt, yt), (xr, yr) = task.test, task.train
    assert len(xt) == 4000 and len(xr) == 40000
    pairs = lambda x: set(map(tuple, x[:, :2]))
    assert not pairs(xt) & pairs(xr) and len(pairs(xr)) == 40000
    assert np.all(yr[:, 2] == (xr[:, 0] + xr[:, 1]) % 599) and np.all(xr.min() >= 1) and np.all(xr[:, :2] <= 599)
    assert np.all(yt[:, 2] == (xt[:, 0] + xt[:, 1]) % 599)
    code = tasks.make_task('modular_addition', p=11, all_pairs=True)
    assert len(code.train[0]) + len(code.test[0]) == 121 and not code.causal_only


def test_modular_addition_pair_format_is_the_authors_layout():
    """format='pair' (modadd_exp.py): `a b c`, the sum scored at b's position only, the same pairs and split as
    '=' format; a non-causal model would read the answer, so model_args refuses one."""
    equals = tasks.make_task('modular_addition', p=11, all_pairs=True)
    pair = tasks.make_task('modular_addition', p=11, all_pairs=True, format='pair')
    for (xe, ye), (xp, yp) in ((equals.test, pair.test), (equals.train, pair.train)):
        assert np.array_equal(xe[:, :2], xp[:, :2]) and np.all(xe[:, 2] == 12)
        assert np.array_equal(yp[:, 1], (xp[:, 0] + xp[:, 1]) % 11) and np.array_equal(xp[:, 2], yp[:, 1])
        assert np.all(yp[:, [0, 2]] == -1) and np.array_equal(ye[:, 2], yp[:, 1])
    assert pair.causal_only
    shape = dict(n_layer=1, n_head=1, n_embd=8)
    assert runconfig.model_args(shape, pair)['block_size'] == 3
    with pytest.raises(ValueError, match='causal=False'):
        runconfig.model_args(dict(shape, causal=False), pair)
    with pytest.raises(ValueError, match="'equals' or 'pair'"):
        tasks.make_task('modular_addition', p=11, format='sum')


def test_memorization_scores_training_set():
    task = tasks.make_task('memorization', n_keys=16)
    x, y = task.eval_set()
    assert len(x) == 256 and len(set(map(tuple, x))) == 256
    assert np.all(x[:, 1] >= 16) and np.all((0 <= y[:, 1]) & (y[:, 1] < 16))
    paper = tasks.make_task('memorization', n_keys=512)
    paper.params = 790_400                                       # Table 4, standard: 2.985 bits per parameter
    x, y = paper.eval_set()
    num, den = paper.score(y, y)['bits_per_param']
    assert num / den == pytest.approx(2.985, abs=1e-3)
    half = np.where(np.arange(len(y))[:, None] % 2 == 0, y, (y + 1) % 512)      # every other value wrong
    num, den = paper.score(half, y)['bits_per_param']
    assert num / den == pytest.approx(2.985 / 2, abs=1e-3)
    dyck = tasks.make_task('dyck1', n_test=4)
    dyck.params = 100
    _, y = dyck.eval_set()
    assert 'bits_per_param' not in dyck.score(y, y)                # a task that stores no bits: no capacity


@pytest.mark.parametrize('name, kw', [('retrieval', dict(vocab_size=32, m_max=4)),
                                      ('dyck1', dict(min_len=4, max_len=20)),
                                      ('decimal_addition', dict(n_digits=3)), ('khop', dict(k=1, length=10))])
def test_test_set_fixed_and_never_trained_on(name, kw):
    a, b = tasks.make_task(name, seed=3, **kw), tasks.make_task(name, seed=3, **kw)
    assert np.array_equal(a.test[0], b.test[0])
    test_rows = set(map(bytes, a.test[0]))
    x, _ = a.get_batch(2000, np.random.default_rng(0))
    assert not any(bytes(r) in test_rows for r in x)
    fixed = tasks.make_task(name, seed=3, fixed_train=True, n_train=300, n_test=100, **kw)
    assert len(fixed.train[0]) == 300 and not set(map(bytes, fixed.train[0])) & set(map(bytes, fixed.test[0]))


def test_train_on_test_streams_the_authors_samples():
    """train_on_test: the batch is the sampler's stream as it comes, test examples included (Dyck-1's test set
    holds every string of <= 4 characters, which the default never trains on)."""
    task = tasks.make_task('dyck1', seed=3, n_test=4000)
    test_rows = set(map(bytes, task.test[0]))
    task.train_on_test = True
    x, y = task.get_batch(2000, np.random.default_rng(0))
    x0, y0 = task.sample(np.random.default_rng(0), 2000)
    assert np.array_equal(x, x0) and np.array_equal(y, y0)
    assert sum(bytes(r) in test_rows for r in x) > 200


def test_epochs_go_through_every_training_example_once():
    """Task.epoch_batch: each epoch of the stream is a permutation of the fixed training set, a new one each
    epoch and each seed; a batch straddling two epochs is the end of one and the start of the next; the stream
    is a function of (seed, start). A task without a fixed training set raises."""
    task = tasks.make_task('modular_addition', p=7, all_pairs=True)       # 47 training pairs
    x, y = task.train
    N, rows = len(x), {bytes(r): i for i, r in enumerate(x)}
    assert len(rows) == N                                                # the rows name their examples
    stream = [rows[bytes(r)] for start in range(0, 3 * N, 10) for r in task.epoch_batch(10, start, seed=5)[0]]
    epochs = [stream[e * N:(e + 1) * N] for e in range(3)]
    assert all(sorted(order) == list(range(N)) for order in epochs)
    assert epochs[0] != epochs[1] != epochs[2]
    straddling_x, straddling_y = task.epoch_batch(N + 4, N - 3, seed=5)
    assert [rows[bytes(r)] for r in straddling_x] == stream[N - 3:2 * N + 1]
    assert np.array_equal(straddling_y, y[stream[N - 3:2 * N + 1]])
    assert np.array_equal(task.epoch_batch(10, 20, seed=5)[0], task.epoch_batch(10, 20, seed=5)[0])
    assert not np.array_equal(task.epoch_batch(N, 0, seed=5)[0], task.epoch_batch(N, 0, seed=6)[0])
    with pytest.raises(ValueError, match='no fixed training set'):
        tasks.make_task('retrieval', vocab_size=32, m_max=4, n_test=20).epoch_batch(4, 0, seed=0)


def test_exact_match_metric():
    task = tasks.make_task('decimal_addition', n_test=10)
    x, y = examples(task, n=4)
    pred = np.where(y >= 0, y, 0)
    pred[0, np.nonzero(y[0] >= 0)[0][3]] += 1                    # one wrong digit in one sum
    s = task.score(pred, y)
    assert s['exact'] == (3, 4) and s['acc'] == (43, 44)


def test_bad_task_settings_raise():
    with pytest.raises(ValueError, match='unknown task'):
        tasks.make_task('retreival')
    with pytest.raises(ValueError, match='m_max'):
        tasks.make_task('retrieval', vocab_size=16, m_max=9)
    with pytest.raises(ValueError, match='retrieval'):
        tasks.make_task('retrieval', m_maxx=3)


def test_retrieval_circuit_reads_an_ideal_and_a_uniform_attention():
    x, y = tasks.retrieval(seed=3, n_test=50, vocab_size=32, m_max=5).test
    N, T = x.shape
    query = (y >= 0).argmax(axis=1)
    ideal_1, ideal_2 = np.zeros((N, 2, T, T)), np.zeros((N, 2, T, T))
    for n in range(N):
        for t in range(T):
            ideal_1[n, 1, t, max(t - 1, 0)] = 1                              # head 1: previous token
        asked = list(x[n]).index(x[n, query[n]])
        ideal_2[n, 0, query[n], asked + 1] = 1                               # head 0: the asked value
    to_key, to_value = tasks.retrieval_circuit(ideal_1, ideal_2, x, y)
    np.testing.assert_allclose(to_key, [0, 1])
    np.testing.assert_allclose(to_value, [1, 0])
    uniform = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    uniform = np.broadcast_to(uniform, (N, 2, T, T))
    to_key, to_value = tasks.retrieval_circuit(uniform, uniform, x, y)
    value_positions = [t for n in range(N) for t in range(1, query[n], 2)]
    np.testing.assert_allclose(to_key, np.mean([1 / (t + 1) for t in value_positions]))
    np.testing.assert_allclose(to_value, np.mean(1 / (query + 1)))


def test_retrieval_attention_split_parts_sum_to_one_and_match_the_circuit_reading():
    x, y = tasks.retrieval(seed=4, n_test=40, vocab_size=32, m_max=6).test
    N, T = x.shape
    query = (y >= 0).argmax(axis=1)
    scores = np.random.default_rng(0).normal(size=(2, N, 3, T, T)) * 2
    scores[..., np.triu(np.ones((T, T), bool), 1)] = -np.inf
    attn_1, attn_2 = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)     # causal softmax rows
    split = tasks.retrieval_attention_split(attn_1, attn_2, x, y)
    np.testing.assert_allclose(sum(split[k] for k in ('self', 'own_key', 'other_keys', 'other_values')), 1)
    np.testing.assert_allclose(sum(split[k] for k in ('query_self', 'query_keys', 'query_values')), 1)
    to_key, to_value = tasks.retrieval_circuit(attn_1, attn_2, x, y)
    np.testing.assert_allclose(split['own_key'], to_key)
    assert np.all(split['query_values'] >= to_value)                # the asked value is one of the values
    uniform = np.broadcast_to(np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None], (N, 1, T, T))
    split = tasks.retrieval_attention_split(uniform, uniform, x, y)
    value_rows = [t for n in range(N) for t in range(1, query[n], 2)]
    np.testing.assert_allclose(split['other_values'], np.mean([((t + 1) // 2 - 1) / (t + 1) for t in value_rows]))
    np.testing.assert_allclose(split['query_keys'], np.mean([(q // 2) / (q + 1) for q in query]))


SMALL = {  # settings that make a task quick to build here; a task not listed is built at its defaults
    'decimal_addition': dict(n_digits=3), 'retrieval': dict(vocab_size=32, m_max=4), 'khop': dict(k=1, length=10),
    'dyck1': dict(min_len=4, max_len=12), 'modular_addition': dict(p=7, all_pairs=True),
    'memorization': dict(n_keys=8),
}


@pytest.mark.parametrize('name', tasks.TASKS)
def test_every_numeric_setting_of_a_task_has_its_lowest_value(name):
    """A task's integer settings each have an entry in tasks.LOWEST, so that a value below it is one error line
    naming the key before any example is drawn (a new task too, without editing a list)."""
    defaults, _ = tasks.settings()
    for key, default in defaults.items():
        setting = key[len(name) + 1:]
        if key.startswith(name + '_') and setting in inspect.signature(tasks.TASKS[name]).parameters and \
                isinstance(default, int) and not isinstance(default, bool):
            assert setting in tasks.LOWEST.get(name, {}), (f"task {name!r}: add the lowest value of its setting "
                                                            f"{setting!r} to tasks.LOWEST (docs/fork.md#add-a-task)")


@pytest.mark.parametrize('name', tasks.TASKS)
def test_every_task_gives_batches_train_py_can_use(name):
    """Every entry of tasks.TASKS (a new one too, without editing a list): a test set and training batches of
    int64 (n, T) tokens within the vocabulary, targets a token, a class or -1 (unscored), at least one scored
    target per example, and batches that depend on the rng alone. The data-backed tasks (lm, sentiment) are
    tested on prepared files in tests/test_text.py."""
    try:
        task = tasks.make_task(name, n_test=16, **SMALL.get(name, {}))
    except tasks.DataError:
        pytest.skip(f"{name} reads prepared data (tests/test_text.py)")
    x, y = task.get_batch(8, np.random.default_rng(0))
    x2, y2 = task.get_batch(8, np.random.default_rng(0))
    for a, b in ((x, y), task.eval_set()):
        assert a.dtype == b.dtype == np.int64 and a.shape == b.shape and a.shape[1] == task.block_size
        assert a.min() >= 0 and a.max() < task.vocab_size
        top = task.n_class or task.vocab_size
        assert ((b == -1) | ((b >= 0) & (b < top))).all() and ((b >= 0).sum(axis=1) > 0).all()
    assert np.array_equal(x, x2) and np.array_equal(y, y2)


def test_a_sampler_that_ignores_its_rng_is_named():
    """A task whose sample() draws from a generator of its own (seeded like the test set) yields only test
    examples: the error says so, not that the task is too small; a task that is too small says that."""
    import numpy as np_
    fixed = lambda rng, n: (np_.random.default_rng(0).integers(0, 10, (n, 4)),) * 2
    task = tasks.Task('mine', 10, 4, test=fixed(None, 64), sample=fixed)
    with pytest.raises(ValueError, match='gives the same examples for different rngs'):
        task.get_batch(8, np_.random.default_rng(5))
    tiny = lambda rng, n: (rng.integers(0, 2, (n, 1)),) * 2
    task = tasks.Task('tiny', 2, 1, test=(np_.array([[0], [1]]),) * 2, sample=tiny)
    with pytest.raises(ValueError, match='covers nearly every possible example'):
        task.get_batch(8, np_.random.default_rng(5))
