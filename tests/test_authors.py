"""model.py against the authors' own paper-1 model (princeton-pli/MixiT, modeling_llama.py): with the same weights
and the same mixing matrices, the same outputs to float32 rounding, for the runners this repository follows:
their sentiment classifier (trainer_classifier.py) for MixiT and the standard model, their depth script's causal
MixiT language model (depth.py), and their Slurm language-model runner's depth-scaled MixiT (scripts/train.sh).
Their code is not part of this repository: the tests skip unless experiments/paper1/authors/fetch.sh has fetched it
(MIXIT_AUTHORS_DIR, default out/authors/MixiT) and it imports (transformers 4.50-4.52)."""

import importlib
import os
import sys

import numpy as np
import pytest
import torch

from head_loss import HeadLoss
from model import GPT, GPTConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AUTHORS = os.environ.get('MIXIT_AUTHORS_DIR', os.path.join(ROOT, 'out', 'authors', 'MixiT'))


@pytest.fixture(scope='module')
def ml():
    if not os.path.isfile(os.path.join(AUTHORS, 'modeling_llama.py')):
        pytest.skip(f"the authors' code is not at {AUTHORS}: bash experiments/paper1/authors/fetch.sh")
    sys.path.insert(0, AUTHORS)
    try:
        return importlib.import_module('modeling_llama')
    except ImportError as e:   # their imports need transformers 4.50-4.52
        pytest.skip(f"the authors' modeling_llama.py does not import here ({e}); use the fetch script's venv")
    finally:
        sys.path.remove(AUTHORS)


def their_model(ml, shaped_attention, classifier, H=4, n=32, L=2, m=16, V=20, pad=19, base=1.0, **extra):
    """Their model as their runner configures it: trainer_classifier.get_model_config (is_causal=False,
    base_hidden_size left at 1, 2 labels, pad = the pad id) or depth.py's (causal, base_hidden_size=512); extra:
    more of their config's fields (their language-model runner's)."""
    torch.manual_seed(0)
    kwargs = dict(hidden_size=n, num_hidden_layers=L, intermediate_size=4 * n, num_attention_heads=H,
                  shaped_attention=shaped_attention, max_position_embeddings=m, use_cache=False,
                  skip_scaling=np.sqrt(0.5), activation_cminus=-1, max_seq_len=m, vocab_size=V, do_rope=True,
                  base_attn_mix=1., initializer_range=0.02,
                  attn_implementation='eager' if shaped_attention == 'mixing' else 'sdpa')
    if classifier:
        kwargs.update(is_causal=False, num_labels=2, pad_token_id=pad)
    else:
        kwargs.update(base_hidden_size=base)
    config = ml.MixingLlamaConfig(**{**kwargs, **extra})
    config.attention_bias = config.mlp_bias = True
    model = ml.LlamaForSequenceClassification(config) if classifier else ml.LlamaForCausalLM(config)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():                      # every weight and bias random, so that each one is checked
        for p in model.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=g))
        if classifier:
            model.model.embed_tokens.weight[pad].zero_()
    return model.eval()


def load_theirs(ours, theirs, head):
    """Copy their weights (and MixiT's mixing matrices, drawn from their RNG) into ours."""
    sd = {k: v for k, v in theirs.state_dict().items() if 'rotary' not in k}
    mine = {'transformer.wte.weight': sd.pop('model.embed_tokens.weight'),
            'transformer.ln_f.weight': sd.pop('model.norm.weight'), 'lm_head.weight': sd.pop(f'{head}.linear.weight')}
    if 'model.wpe.weight' in sd:
        mine['transformer.wpe.weight'] = sd.pop('model.wpe.weight')
    names = {'self_attn.q_proj': 'attn.c_q', 'self_attn.k_proj': 'attn.c_k', 'self_attn.v_proj': 'attn.c_v',
             'self_attn.o_proj': 'attn.c_proj', 'mlp.gate_proj': 'mlp.c_gate', 'mlp.up_proj': 'mlp.c_up',
             'mlp.down_proj': 'mlp.c_proj', 'input_layernorm': 'ln_1', 'post_attention_layernorm': 'ln_2'}
    for key in list(sd):
        _, _, layer, *module, kind = key.split('.')        # model.layers.<l>.<module...>.[linear.]<weight|bias>
        module = '.'.join(m for m in module if m != 'linear')
        mine[f'transformer.h.{layer}.{names[module]}.{kind}'] = sd.pop(key)
    ours.load_state_dict(mine, strict=True)
    if ours.config.attn == 'mixit':
        for block, layer in zip(ours.transformer.h, theirs.model.layers):
            block.attn.A.copy_(layer.self_attn.attn_weights)


def classify_both(theirs, ours, x, pad=19):
    """(their pooled logits, ours at the same positions) for token ids x (B, T): their pooling reads the rightmost
    non-pad token, ours the position whose target is set (any class: HeadLoss's scored_only returns logits there)."""
    last = (torch.arange(x.shape[1]) * (x != pad)).argmax(-1)
    y = torch.full_like(x, -1)
    y[torch.arange(len(x)), last] = 0
    with torch.no_grad():
        return theirs(input_ids=x).logits, HeadLoss(ours).eval()(x, y, scored_only=True)[0]


def test_mixit_classifier_is_theirs(ml):
    theirs = their_model(ml, 'mixing', classifier=True)
    A = theirs.model.layers[0].self_attn.attn_weights
    assert (A[1:] != 0).all()                                    # their classifier's matrix is dense
    ours = GPT(GPTConfig.from_keys(variant='mixit', causal=False, n_class=2, pad_id=19, bias=True, base_width=1,
                                   block_size=16, n_layer=2, n_head=4, n_embd=32, vocab_size=20)).eval()
    assert ours.transformer.h[0].attn.A[1:].ne(0).all()          # and so is ours
    load_theirs(ours, theirs, 'score')
    x = torch.randint(0, 19, (3, 16))
    x[0, 10:], x[1, 5:] = 19, 19                                 # right-padded, as their tokenizer
    pooled, logits = classify_both(theirs, ours, x)
    torch.testing.assert_close(logits, pooled, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize('causal', [True, False])
def test_standard_classifier_is_theirs_and_causal(ml, causal):
    """Their softmax classifier asks for is_causal=False but, without an attention mask, the transformers of its
    time run SDPA causally: it equals ours with causal=True, and differs from causal=False."""
    theirs = their_model(ml, 'vanilla', classifier=True)
    ours = GPT(GPTConfig(variant='standard', causal=causal, n_class=2, pad_id=19, bias=True, block_size=16,
                         n_layer=2, n_head=4, n_embd=32, vocab_size=20)).eval()
    load_theirs(ours, theirs, 'score')
    x = torch.randint(0, 19, (3, 16))
    x[0, 10:] = 19
    pooled, logits = classify_both(theirs, ours, x)
    if causal:
        torch.testing.assert_close(logits, pooled, atol=1e-6, rtol=1e-5)
    else:
        assert not torch.allclose(logits, pooled, atol=1e-4)


def assert_same_language_model(theirs, ours):
    """Their causal language model's logits and ours, from their weights and mixing matrices, agree on random
    token ids (3, 16)."""
    load_theirs(ours, theirs, 'lm_head')
    x = torch.randint(0, 20, (3, 16))
    with torch.no_grad():
        expected = theirs(input_ids=x).logits
        logits, _ = ours(x, torch.zeros_like(x))
    torch.testing.assert_close(logits, expected, atol=1e-5, rtol=1e-5)


def test_causal_mixit_is_theirs(ml):
    """depth.py's MixiT (causal mixing, base_hidden_size=512) against variant='mixit' with its defaults."""
    theirs = their_model(ml, 'mixing', classifier=False, base=512)
    A = theirs.model.layers[1].self_attn.attn_weights
    assert (A.triu(1) == 0).all()
    torch.testing.assert_close(A[1:].sum(-1), torch.ones(3, 16), atol=1e-5, rtol=0)   # causal rows sum to 1
    ours = GPT(GPTConfig(variant='mixit', bias=True, block_size=16, n_layer=2, n_head=4, n_embd=32,
                         vocab_size=20)).eval()
    assert_same_language_model(theirs, ours)


def test_depth_scaled_mixit_is_their_language_model_runners(ml):
    """scripts/train.sh's MixiT (trainer.py: depth_alpha 1, base_n_layer 4, activation_cminus 1, base width 512)
    against variant='mixit' with depth_alpha=1, activation_cminus=1: residual branches times 4 / L with the skip
    unscaled, and mixing rows without the identity (each random causal row sums to 0; the sink head's to 1)."""
    L = 3
    theirs = their_model(ml, 'mixing', classifier=False, L=L, base=512, depth_alpha=1.0, base_num_hidden_layers=4,
                         activation_cminus=1, skip_scaling=0.5)
    A = theirs.model.layers[1].self_attn.attn_weights
    torch.testing.assert_close(A[1:].sum(-1), torch.zeros(3, 16), atol=1e-5, rtol=0)
    ours = GPT(GPTConfig.from_keys(variant='mixit', bias=True, block_size=16, n_layer=L, n_head=4, n_embd=32,
                                   vocab_size=20, depth_alpha=1.0, base_n_layer=4, activation_cminus=1.0)).eval()
    torch.testing.assert_close(ours.transformer.h[1].attn.A[1:].sum(-1), torch.zeros(3, 16), atol=1e-5, rtol=0)
    assert_same_language_model(theirs, ours)
