"""
Training batches drawn ahead of the loop by a worker process, the same batches in the same order as the loop
would draw them itself, each with the data state after it, so that a resumed run draws the batch that came next.
"""

import os

import numpy as np
import torch


def leave_process_group(worker_id):
    """A prefetching worker leaves the run's process group, so that a Ctrl-C or a scheduler's SIGTERM to the group
    reaches the loop alone, which stops after its step; the worker is ended with the loop's process."""
    os.setpgid(0, 0)


class BatchStream(torch.utils.data.IterableDataset):
    """draw(rng, start) again and again from the data state `state`, (the data RNG's state, the examples gone
    through), in the loop or in a DataLoader worker: each batch with the state after it. Each draw takes
    batch_size examples."""

    def __init__(self, draw, state, batch_size):
        self.draw, self.state, self.batch_size = draw, state, batch_size

    def __iter__(self):
        rng, start = np.random.default_rng(), self.state[1]
        rng.bit_generator.state = self.state[0]
        while True:
            batch = self.draw(rng, start)
            start += self.batch_size
            yield batch, (rng.bit_generator.state, start)


def batches(draw, state, batch_size, prefetch=0):
    """An iterator of (batch, data state after it) from the data state `state` on (BatchStream): drawn by the
    caller's loop, or with prefetch > 0 by one forked worker process (train.py is a script: a spawned one would
    run it again) that keeps `prefetch` batches ready while the device trains on the last."""
    stream = BatchStream(draw, state, batch_size)
    if not prefetch:
        return iter(stream)
    return iter(torch.utils.data.DataLoader(stream, batch_size=None, num_workers=1, prefetch_factor=prefetch,
                                            collate_fn=lambda b: b, multiprocessing_context='fork',
                                            worker_init_fn=leave_process_group))


MAX_PREFETCH = 64        # batches held ahead in memory: a few hide the draw's time, more only hold memory


def default_prefetch(prefetch, device_type):
    """The batches to draw ahead: prefetch, or where it is None 2 on a GPU (0 elsewhere, or where processes cannot
    be forked). Raises ValueError for prefetch above MAX_PREFETCH, or > 0 where processes cannot be forked."""
    if prefetch is not None and prefetch > MAX_PREFETCH:
        raise ValueError(f"--prefetch={prefetch}: at most {MAX_PREFETCH} batches are drawn ahead (each one held in "
                         f"memory); 2 hides the draw's time")
    forks = 'fork' in torch.multiprocessing.get_all_start_methods()
    if prefetch and not forks:
        raise ValueError(f"--prefetch={prefetch} needs processes started by fork, which this platform lacks; use "
                         f"--prefetch=0")
    return (2 if device_type == 'cuda' and forks else 0) if prefetch is None else prefetch
