"""
Sample text from a trained language model (task 'lm', any variant), nanoGPT style.

    python sample.py --out_dir=out/cpu/shakespeare_char --start="ROMEO:" --max_new_tokens=300
    python sample.py --out_dir=out/cpu/wikitext_standard --start="The game" --num_samples=3 --max_new_tokens=60
    python sample.py --out_dir=out/wikitext_mixit --start=FILE:prompt.txt --temperature=0.7 --top_k=50
    python sample.py --out_dir=out/cpu/wikitext_standard --ckpt=ckpt_best.pt      # the lowest-val_loss weights

Reads out_dir/ckpt.pt (keys 'model', 'model_args', 'config' as train.py writes them), encodes the prompt with
the data's tokenizer (characters for character-level data such as shakespeare_char; else GPT-2 BPE: --tokenizer
or $TIKTOKEN_GPT2_FILE, else the .tiktoken file the data was prepared from, which `tasks.py prepare` keeps
beside it, else tiktoken's download), and prints num_samples continuations, one after the other, each token as it comes. Models with rotary
embeddings slide over their last block_size tokens (a note says so when the text outgrows it); MixiT and
learned-position models cannot see past block_size, so prompt + max_new_tokens must fit: otherwise a one-line
error.
"""

import codecs
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

import tasks
from checkpoint import gpt_config, load_checkpoint, load_weights
from configurator import at_least, configure, fail
from hardware import resolve_device
from memory import memory_shortfall
from model import GPT

out_dir = 'out'                 # the run whose checkpoint to sample from (ckpt.pt, else ckpt_best.pt)
ckpt = 'ckpt.pt'                # the checkpoint in out_dir: ckpt.pt (the last) or ckpt_best.pt (lowest val_loss)
start = '\n'                    # the prompt, or FILE:path to read it from a file
num_samples = 3                 # samples to draw
max_new_tokens = 100            # tokens generated per sample
temperature = 0.8               # 1.0: the model's distribution; lower: more conservative
top_k = 200                     # sample among the top_k tokens only (0: all)
seed = 1337                     # torch's generator: the same seed, the same samples
device = 'cpu'                  # cpu | cuda | mps | auto
tokenizer = ''                  # local .tiktoken file; '' -> $TIKTOKEN_GPT2_FILE, the data's own copy, or
                                # tiktoken's download
data_dir = ''                   # '' -> the checkpoint's lm_data_dir (needed only for compact-vocabulary models)
configure(globals())

# ----------------------------------------------------------------------------- flags and files, before any work
if not temperature > 0:
    fail(f"--temperature must be > 0, got {temperature}")
at_least(0, top_k=top_k, max_new_tokens=max_new_tokens)
at_least(1, num_samples=num_samples)
at_least(0, seed=seed)
if seed >= 2 ** 64:
    fail(f"--seed must be < 2**64 (torch's generator takes 64 bits), got {seed}")
if start.startswith('FILE:'):
    prompt_path = start[5:]
    if not os.path.isfile(prompt_path):
        fail(f"--start=FILE:{prompt_path}: {'a folder' if os.path.isdir(prompt_path) else 'no such file'}")
    try:
        with open(prompt_path, encoding='utf-8') as f:
            start = f.read()
    except (OSError, UnicodeDecodeError) as e:
        fail(f"--start=FILE:{prompt_path}: not readable UTF-8 text ({type(e).__name__})")
try:
    device, device_type = resolve_device(device)
except ValueError as e:
    fail(e)

ckpt_path = os.path.join(out_dir, ckpt)
if not os.path.isfile(ckpt_path):
    fail(f"no checkpoint at {ckpt_path}; train one first (python train.py config/cpu/wikitext_standard.py)")
try:
    checkpoint = load_checkpoint(ckpt_path, mmap=True)      # mapped: only the weights are read, not the optimizer's
except ValueError as e:
    fail(e)
config = checkpoint.get('config') if isinstance(checkpoint.get('config'), dict) else {}
if config.get('task') != 'lm':
    fail(f"{ckpt_path} is a {config.get('task')!r} model; sampling needs a language model (task 'lm')")
args = checkpoint['model_args'] if isinstance(checkpoint['model_args'], dict) else {}
tensors = checkpoint['model'].values() if isinstance(checkpoint['model'], dict) else []
weights = sum(t.numel() for t in tensors if isinstance(t, torch.Tensor)) * 4                       # fp32
T, width, heads = (int(args.get(k) or 1) for k in ('block_size', 'n_embd', 'n_head'))
short = memory_shortfall(weights + 4 * T * (16 * width + heads * T), device, device_type)   # + one forward's
if short:
    fail(f"{ckpt_path}: the model and one sample's forward pass need more memory than there is: {short}")
try:
    model = GPT(gpt_config(checkpoint['model_args'], ckpt_path))
    load_weights(model, checkpoint['model'], ckpt_path)
except ValueError as e:                              # model_args of another model.py, or out of range
    fail(e)
except ValueError as e:
    fail(e)
not_finite = [name for name, p in model.named_parameters() if not torch.isfinite(p).all()]
if not_finite:
    fail(f"{ckpt_path}: its weights are not finite ({not_finite[0]} holds nan or inf: a run that diverged?)")
model.to(device).eval()
torch.manual_seed(seed)

try:
    data_dir = tasks.data_path(data_dir or config['lm_data_dir'])
    meta, ids = tasks.lm_token_ids(data_dir, config.get('lm_compact_vocab', False))
    enc = tasks.encoding_of(meta, tokenizer or None, data_dir)
except ValueError as e:
    fail(e)
model_vocab = len(ids) if ids is not None else meta['vocab_size']
if model_vocab != model.config.vocab_size:
    fail(f"{data_dir} has a vocabulary of {model_vocab} tokens but the model {model.config.vocab_size}: not the data it "
         f"was trained on ({config.get('lm_data_dir')}); pass --data_dir=<that folder>")
if enc.n_vocab != meta['vocab_size']:
    fail(f"the tokenizer has {enc.n_vocab} tokens but the data was prepared with {meta['tokenizer']} "
         f"({meta['vocab_size']}); pass --tokenizer=<its .tiktoken file>")
to_model = np.full(enc.n_vocab, -1)
to_model[ids if ids is not None else np.arange(enc.n_vocab)] = np.arange(model.config.vocab_size)

try:
    prompt = enc.encode(start, allowed_special={'<|endoftext|>'}) or [enc.eot_token]
except ValueError as e:                              # a character outside a character-level vocabulary
    fail(f"--start: {e}")
unseen = [enc.decode([i]) for i in prompt if to_model[i] < 0]
if unseen:
    fail(f"prompt token(s) {unseen[:5]} never occur in this compact-vocabulary model's data")
block_size = model.config.block_size
if model.config.pos_emb and len(prompt) + max_new_tokens > block_size:
    fail(f"--max_new_tokens={max_new_tokens}: the prompt ({len(prompt)} tokens) and the new ones exceed this model's "
         f"context of {block_size} tokens (learned positions / MixiT's mixing): at most "
         f"{max(block_size - len(prompt), 0)} new ones")
if len(prompt) + max_new_tokens > block_size:
    print(f"note: past {block_size} tokens the model sees only the last {block_size} (rotary embeddings: the window "
          f"slides)", file=sys.stderr)


@torch.no_grad()
def next_token(idx):
    """A token drawn after idx (1, t) from the model's distribution over its last block_size tokens, at temperature
    (shifted by the largest logit first, so that a tiny temperature is the argmax, not an overflow), among the
    top_k. Fails in one line when the model's output is not finite (nan or inf weights)."""
    logits = model(idx[:, -block_size:])[0][:, -1, :].double()
    if not torch.isfinite(logits).all():
        fail(f"{ckpt_path}: the model's output is not finite (nan or inf in its weights: a run that diverged?)")
    logits = (logits - logits.max(-1, keepdim=True).values) / temperature
    if top_k:
        v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        logits[logits < v[:, [-1]]] = -float('inf')
    return torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)


def text_of(token):
    """The text of one tokenizer id, as bytes decoded so far (a BPE token may end inside a UTF-8 character)."""
    if hasattr(enc, 'decode_single_token_bytes'):
        return utf8.decode(enc.decode_single_token_bytes(token))
    return enc.decode([token])


x = torch.tensor(to_model[prompt][None], dtype=torch.long, device=device)
for _ in range(num_samples):                 # one sample at a time, printed as it grows: no wait, no batch to hold
    utf8 = codecs.getincrementaldecoder('utf-8')(errors='replace')
    idx = x
    print(''.join(text_of(i) for i in prompt), end='', flush=True)
    for _ in range(max_new_tokens):
        idx = torch.cat((idx, next_token(idx)), dim=1)
        t = int(idx[0, -1])
        print(text_of(int(ids[t]) if ids is not None else t), end='', flush=True)
    print(utf8.decode(b'', final=True))
    print('---------------')
print(f"{num_samples} samples of {max_new_tokens} tokens from {ckpt_path} ({model.config.variant}, "
      f"temperature {temperature}, top_k {top_k or 'all'})")
