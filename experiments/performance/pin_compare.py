"""Compare two outputs of experiments/performance/pin_losses.sh run by run: training losses, evaluation losses and
accuracies, and the final weights' hash, each identical or not.
    python -m experiments.performance.pin_compare BEFORE AFTER"""

import json
import os
import sys


def column(path, key):
    with open(path) as f:
        return [json.loads(line)[key] for line in f]


def main(before, after):
    for run in sorted(d for d in os.listdir(before) if os.path.isfile(os.path.join(before, d, 'weights.sha'))):
        a, b = os.path.join(before, run), os.path.join(after, run)
        same = all(column(f'{a}/{log}', key) == column(f'{b}/{log}', key) for log, key in
                   (('train_log.jsonl', 'loss'), ('log.jsonl', 'val_loss'), ('log.jsonl', 'val_acc')))
        weights = open(f'{a}/weights.sha').read() == open(f'{b}/weights.sha').read()
        print(f"{run:28s} losses {'identical' if same else 'DIFFER':9s} weights {'identical' if weights else 'DIFFER'}")


if __name__ == '__main__':
    main(*sys.argv[1:3])
