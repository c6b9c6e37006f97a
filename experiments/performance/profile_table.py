"""
Where a training step's time goes, from a Chrome trace that `bench.py --profile=PREFIX` wrote: the self time of
every aten op and every call of a compiled graph (its duration less that of the aten ops it called: in a
compiled step, the time of inductor's own fused kernels), summed into a few groups.

    python -m experiments.performance.profile_table out/bench/eager_standard.json [--vocab_size=50304]
    python -m experiments.performance.profile_table results/performance/profile_T1024_eager/trace_standard.json.gz
"""

import argparse
import collections
import gzip
import json

COMPILED_GRAPH = 'CompiledFxGraph'     # in the name of each call of an inductor-compiled graph

GROUPS = (      # (group, test on the op's name, its input sizes and the vocabulary size), first match wins
    ("inductor's fused kernels (compiled)", lambda name, dims, vocab: COMPILED_GRAPH in name),
    ('matmuls', lambda name, dims, vocab: name in ('aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm')),
    ('attention kernel (forward + backward)', lambda name, dims, vocab: 'flash_attention' in name),
    ('vocabulary-sized tensors: log-softmax, its gradient, casts; W and wte gradients',
     lambda name, dims, vocab: vocab in dims),
    ('casts (copy_)', lambda name, dims, vocab: name == 'aten::copy_'),
    ('optimizer and gradient clipping',
     lambda name, dims, vocab: 'adam' in name or 'foreach' in name or name == 'aten::linalg_vector_norm'),
    ('other elementwise (norms, rotary, SiLU, residuals, fills)', lambda name, dims, vocab: True),
)


def self_times(events):
    """{(name, flat input dims): [calls, self seconds]} over the aten ops and compiled-graph calls of a trace's
    complete events."""
    out = collections.defaultdict(lambda: [0, 0.0])
    by_thread = collections.defaultdict(list)
    for e in events:
        name = e.get('name', '')
        if e.get('ph') == 'X' and (name.startswith('aten::') or COMPILED_GRAPH in name):
            by_thread[e['tid']].append(e)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e['ts'], -e['dur']))
        stack = []                                  # open events: [event, time spent in aten children]
        for e in evs + [None]:
            while stack and (e is None or e['ts'] >= stack[-1][0]['ts'] + stack[-1][0]['dur']):
                done, children = stack.pop()
                dims = tuple(d for shape in done.get('args', {}).get('Input Dims', []) if isinstance(shape, list)
                             for d in (shape if shape and isinstance(shape[0], int) else []))
                out[done['name'], dims][0] += 1
                out[done['name'], dims][1] += (done['dur'] - children) / 1e6
                if stack:
                    stack[-1][1] += done['dur']
            if e is not None:
                stack.append([e, 0.0])
    return out


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('trace')
    parser.add_argument('--vocab_size', type=int, default=50304)
    args = parser.parse_args()
    try:
        with (gzip.open if args.trace.endswith('.gz') else open)(args.trace, 'rt') as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        parser.exit(2, f"error: cannot read the trace {args.trace}: {e}\n")
    totals = collections.Counter()
    for (name, dims), (calls, seconds) in self_times(trace['traceEvents']).items():
        totals[next(group for group, test in GROUPS if test(name, dims, args.vocab_size))] += seconds
    step = sum(totals.values())
    print("| group | seconds | share |\n|---|---|---|")
    for group, _ in GROUPS:
        print(f"| {group} | {totals[group]:.2f} | {100 * totals[group] / step:.1f}% |")
    print(f"| all aten ops and compiled graphs | {step:.2f} | 100% |")
