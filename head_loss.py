"""
The output layer's loss without a (B, T, V) logits tensor: what train.py and bench.py train and evaluate with,
model.py's GPT computing the same numbers plainly (F.cross_entropy over full logits).

    model = HeadLoss(GPT(config))        # loss, logits as GPT's, but the head's loss and gradients chunked
    _, loss = model(x, y)                # training mode: logits None, gradients formed in the forward
    logits, loss = model(x, y, scored_only=True)   # evaluation: the head only where y >= 0

A language model's head is its largest matmul and its logits its largest tensor (16 x 2,048 tokens x 50,304 fp32
logits: 6.6 GB). ChunkedHeadLoss takes the logits a chunk of rows at a time and forms the gradients of x and W in
the same pass, so no chunk's logits outlive it and nothing is recomputed; rows without a target (a classifier's
one label per text) skip the head altogether. docs/performance.md measures what each part saves.
"""

import functools

import torch
import torch.nn as nn
import torch.nn.functional as F

LOSS_CHUNK = 2 ** 24     # logits per chunk of ChunkedHeadLoss on a CPU (64 MB in fp32): 333 tokens at 50,304
LOSS_CHUNK_GPU = 2 ** 28  # on a GPU (1 GiB in fp32): 5,336 tokens, a few chunks per micro-batch, not hundreds


def loss_chunk_rows(vocab_size, device_type='cpu'):
    """Rows (tokens) per chunk of ChunkedHeadLoss for a head of vocab_size outputs on device_type: LOSS_CHUNK
    logits on a CPU (cache-sized), LOSS_CHUNK_GPU elsewhere (each chunk costs a few hundred kernel launches),
    at least one row."""
    return max(1, (LOSS_CHUNK if device_type == 'cpu' else LOSS_CHUNK_GPU) // vocab_size)


WIDEN_ROWS = 2048               # rows per block of add_widened: 4 MB of fp32 at n_embd 512


def add_widened(acc, x, buf):
    """acc += x, where x is narrower than acc (a bf16 gradient into an fp32 sum), a block of buf.shape[0] rows at
    a time through buf, a (rows, acc.shape[1]) buffer of acc's dtype. Adding mixed dtypes directly takes a
    slower, casting path on a CPU; widening all of x first needs a copy of acc's size."""
    for i in range(0, x.shape[0], buf.shape[0]):
        block = x[i:i + buf.shape[0]]
        acc[i:i + len(block)] += buf[:len(block)].copy_(block)


def softmax_xent_grad(z, t, scored, inv_denom, n_valid, dtype, out_dtype):
    """One chunk of ChunkedHeadLoss after its logits matmul: z (k, V) logits; t (k,) target ids >= 0; scored
    (k,) bool; inv_denom: 1 / the scored rows of the whole batch (0-dim tensor); the columns from n_valid on are
    -inf. Computed in dtype. Returns (the summed cross-entropy of the scored rows in nats, 0-dim dtype;
    d loss / d z = inv_denom * scored * (softmax(z) - one_hot(t)), (k, V) in out_dtype). Compiled
    (softmax_xent_grad_fused), it is one reduction and one pointwise pass over z instead of ChunkedHeadLoss's
    six eager ones."""
    z = z.to(dtype)
    cols = torch.arange(z.shape[1], device=z.device)
    if n_valid < z.shape[1]:
        z = z.masked_fill(cols >= n_valid, float('-inf'))
    lse = torch.logsumexp(z, dim=-1, keepdim=True)
    loss = ((lse.squeeze(1) - z.gather(1, t[:, None]).squeeze(1)) * scored).sum()
    g = (torch.exp(z - lse) - (cols == t[:, None]).to(dtype)) * (scored * inv_denom)[:, None]
    return loss, g.to(out_dtype)


@functools.cache
def softmax_xent_grad_fused():
    """softmax_xent_grad under torch.compile (compiled at its first call), built when first asked for: importing
    torch's compiler takes a second or two, which a script's --help need not wait for."""
    return torch.compile(softmax_xent_grad, dynamic=False)


# torch.compiler.disable in the lazy form torch uses inside itself (private; the public one where it is missing):
# torch's compiler is imported at fn's first call, not with this module, so that --help is as quick as `import torch`
eager = getattr(torch, '_disable_dynamo', torch.compiler.disable)


class ChunkedHeadLoss(torch.autograd.Function):
    """Mean cross-entropy of the logits scale * x W^T against targets, a chunk of rows at a time, with the
    gradients of x and W formed in the same pass: no (N, vocab_size) logits tensor outlives its chunk, and
    nothing is recomputed. x: (N, C); W: (V, C); targets: (N,) ids, -1 where not scored; chunk: rows per
    chunk; n_valid: the logits from column n_valid on are -inf (W's rows padded for alignment), so that they
    take no probability and get no gradient. On a CPU, when the rows span more than one chunk, rows without a
    target are dropped before the head: a classification batch with one label per text then costs one row per
    text, not one per token (on a GPU finding them would sync host and device every micro-batch, and its chunks
    are large enough that only a language model's head, where every row is scored, spans several).
    Under autocast the matmuls run in its dtype with W cast once (float16: the gradient matmuls in fp32, so
    that gradients below float16's range survive until a GradScaler scales them), the log-softmax, the loss
    and W's gradient in fp32; the chunks share their buffers, so that their pages are faulted in once per step.
    fused: each chunk's softmax and gradient by softmax_xent_grad_fused (compiled: two passes over the logits,
    for a GPU, where the eager passes cost more than the matmuls), else eagerly in place through the buffers.
    Returns the loss in nats per scored row (0 when none is scored). The gradients are handed to the first
    backward, scaled in place; a second backward through the same loss raises RuntimeError."""

    @staticmethod
    def forward(ctx, x, weight, targets, scale, chunk, n_valid, fused=False):
        scored_all = targets >= 0
        rows = None
        if x.shape[0] > chunk and x.device.type == 'cpu':
            rows = scored_all.nonzero().squeeze(1)
            rows = None if len(rows) == x.shape[0] else rows
        xs, ts = (x, targets) if rows is None else (x[rows], targets[rows])
        device = x.device.type      # autocast is turned off inside: it would cast W again for every chunk
        mm = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else x.dtype
        dtype = torch.promote_types(mm, torch.float32)                  # log-softmax, loss, W's gradient
        denom = scored_all.sum().clamp(min=1).to(dtype)
        loss = torch.zeros((), dtype=dtype, device=x.device)
        grad_x = torch.empty_like(xs) if ctx.needs_input_grad[0] else None
        grad_w = torch.zeros_like(weight, dtype=dtype) if ctx.needs_input_grad[1] else None
        with torch.autocast(device, enabled=False):
            scaled = weight if scale == 1.0 else scale * weight
            w, xs_mm = scaled.to(mm), xs.to(mm)                             # logits = x w^T
            # the gradient matmuls run in mm too, except in float16: d loss / d logits is of order
            # 1 / (vocab_size * scored rows), below float16's range, and formed here, before a GradScaler's scale
            back = dtype if mm == torch.float16 else mm
            w_back, xs_back = (w, xs_mm) if back == mm else (scaled.to(back), xs.to(back))
            rows_per, V = min(chunk, xs.shape[0]), weight.shape[0]
            z_buf = x.new_empty(rows_per, V, dtype=mm)
            widen = mm != dtype         # logits below the softmax's dtype: widen them
            narrow = back != dtype      # gradient matmuls below it too: narrow g, widen W's gradient
            # (through these buffers: log_softmax(dtype=) and a mixed-dtype out= make a temporary per chunk)
            g_buf = None if fused else x.new_empty(rows_per, V, dtype=dtype)
            f_buf = torch.empty_like(g_buf) if widen and not fused else None    # the logits widened to dtype
            gw_mm = torch.empty_like(w) if narrow and grad_w is not None else None    # a chunk's W gradient
            widen_gw = gw_mm is not None and device == 'cpu'     # a GPU adds mixed dtypes in one kernel
            gw = grad_w.new_empty(WIDEN_ROWS, grad_w.shape[1]) if widen_gw else None   # widens gw_mm's rows
            for i in range(0, xs.shape[0], chunk):
                xc, t = xs_mm[i:i + chunk], ts[i:i + chunk]
                k, scored, t = len(xc), t >= 0, t.clamp(min=0)
                z = torch.mm(xc, w.t(), out=z_buf[:k])
                if fused:
                    part, g = softmax_xent_grad_fused()(z, t, scored, 1 / denom, n_valid, dtype, back)
                    loss += part
                else:
                    z = f_buf[:k].copy_(z) if widen else z
                    if n_valid < V:
                        z[:, n_valid:] = float('-inf')
                    g = torch.log_softmax(z, dim=-1, out=g_buf[:k])
                    loss -= (g.gather(1, t[:, None]).squeeze(1) * scored).sum()
                    g.exp_().scatter_add_(1, t[:, None], -torch.ones_like(g[:, :1]))   # softmax - one-hot
                    g *= (scored / denom)[:, None]                                       # d loss / d logits
                    g = z_buf[:k].copy_(g) if narrow else g                              # back in mm
                if grad_x is not None:
                    grad_x[i:i + chunk] = g @ w_back
                if widen_gw:
                    add_widened(grad_w, torch.mm(g.t(), xc, out=gw_mm), gw)
                elif gw_mm is not None:
                    grad_w += torch.mm(g.t(), xc, out=gw_mm)
                elif grad_w is not None:
                    torch.addmm(grad_w, g.t(), xs_back[i:i + chunk], out=grad_w)
        if grad_w is not None and scale != 1.0:
            grad_w *= scale
        if grad_x is not None and rows is not None:
            grad_x = torch.zeros_like(x).index_copy_(0, rows, grad_x)
        ctx.grads = grad_x, grad_w      # made here, not inputs or outputs: kept on ctx, handed over once
        ctx.weight_dtype = weight.dtype
        return loss / denom

    @staticmethod
    def backward(ctx, grad_loss):
        if ctx.grads is None:
            raise RuntimeError("ChunkedHeadLoss: a second backward through the same loss (its gradients are "
                               "formed in the forward and scaled in place by the first)")
        (grad_x, grad_w), ctx.grads = ctx.grads, None     # no copy: the optimizer's .grad can take grad_w itself
        return (None if grad_x is None else grad_x.mul_(grad_loss),
                None if grad_w is None else grad_w.mul_(grad_loss).to(ctx.weight_dtype), None, None, None, None, None)


@eager      # eager inside a compiled model too: inductor's version of the chunk loop runs slower
def chunked_head_loss(x, weight, targets, scale, chunk, n_valid=None, fused=False):
    """ChunkedHeadLoss.apply (same arguments; n_valid None: every row of weight), never compiled as a whole."""
    return ChunkedHeadLoss.apply(x, weight, targets, scale, chunk, weight.shape[0] if n_valid is None else n_valid,
                                 fused)


def cross_entropy(logits, targets):
    """Mean cross-entropy (nats) of logits (..., V) against targets (...), -1 ignored (nan when none is); in fp32
    (fp64 for fp64 logits), loss_chunk_rows rows at a time, so that the widened copy is a chunk's, not the
    logits' (a language model's evaluation batch of 16 x 2,048 tokens: 1 GB, not 6.6 GB)."""
    logits, targets = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
    dtype = torch.float64 if logits.dtype == torch.float64 else torch.float32
    rows = loss_chunk_rows(logits.shape[-1], logits.device.type)
    total = sum(F.cross_entropy(logits[i:i + rows].to(dtype), targets[i:i + rows], ignore_index=-1,
                                reduction='sum') for i in range(0, len(logits), rows))
    return total / (targets >= 0).sum()


# the number of scored rows depends on the data: eager, so that a compiled model's graph keeps static shapes and
# is not recompiled for each count
@eager
def scored_head(gpt, x, targets):
    """(logits, loss) of gpt's head on the final hidden states x (B, T, n_embd) only where targets (B, T) >= 0:
    logits (n_scored, V) in row-major order, and their mean cross-entropy."""
    scored = targets >= 0
    logits = gpt.head(x[scored])
    return logits, cross_entropy(logits, targets[scored])


class HeadLoss(nn.Module):
    """A GPT whose loss comes from the output layer in chunks. forward(idx, targets, scored_only=False) ->
    (logits, loss), as GPT.forward's with targets, except: in training mode with gradients enabled, logits is
    None and the loss is ChunkedHeadLoss's (its softmax step compiled when fused: a GPU's, under torch.compile);
    with scored_only, logits are (n_scored, V) at the positions where targets >= 0 (scored_head), so a task that
    scores one position per text evaluates the head once per text. Outside training the loss is cross_entropy's.
    chunked=False: GPT.forward's own loss in training (the plain path, for comparison). Its parameters are gpt's:
    save gpt.state_dict()."""

    def __init__(self, gpt, chunked=True, fused=False):
        super().__init__()
        self.gpt, self.chunked, self.fused = gpt, chunked, fused

    def forward(self, idx, targets, scored_only=False):
        gpt = self.gpt
        if self.training and torch.is_grad_enabled():
            if not self.chunked:
                return gpt(idx, targets)
            x, head = gpt.hidden(idx), gpt.lm_head
            loss = chunked_head_loss(x.flatten(0, 1), head.weight, targets.reshape(-1), gpt.head_scale,
                                     loss_chunk_rows(head.out_features, x.device.type), gpt.n_out, self.fused)
            return None, loss
        x = gpt.hidden(idx)
        if scored_only:
            return scored_head(gpt, x, targets)
        logits = gpt.head(x)
        return logits, cross_entropy(logits, targets)
