"""Write XLA HLO of a small Llama decoder block partitioned by JAX's SPMD partitioner (CPU).

``python scripts/export_jax_hlo.py --out DIR [--tp 2]`` jits the block over a ``Mesh`` of
``--tp`` host devices (``XLA_FLAGS=--xla_force_host_platform_device_count=N``) and keeps the
modules XLA dumps around its SPMD partitioner (``--xla_dump_hlo_pass_re=spmd-partitioning``):

- ``seq.hlo``: the global program before partitioning (the sequential model);
- ``tp.hlo``: the per-device program after partitioning, column-parallel q/k/v/gate/up and
  row-parallel o/down from ``NamedSharding`` s (the partitioner writes the all-reduces);
- ``tp_bug_missing_psum.hlo``: the same block written per device with ``shard_map``, the
  ``psum`` after the down projection left out (one line);
- ``tp_gather.hlo``: per device with ``shard_map``, the attention heads all-gathered on the
  feature axis before a replicated output projection;
- ``tp_bug_gather_axis.hlo``: the same with the all-gather on the sequence axis, then viewed
  as ``[seq, heads * head_dim]`` (one line).

Check them with ``shardlog check DIR/seq.hlo DIR/tp.hlo --world-size N``. JAX is an extra
(``pip install jax``), not a dependency of shardlog.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import click

HIDDEN, HEADS, HEAD_DIM, FFN, SEQ = 64, 4, 16, 128, 8


def _block(params, x, psum_attn, psum_mlp, attn_out=None):
    import jax
    import jax.numpy as jnp

    def rms(v, w):
        return v * jax.lax.rsqrt(jnp.mean(v * v, axis=-1, keepdims=True) + 1e-5) * w

    h = rms(x, params["ln1"])
    q, k, v = h @ params["wq"], h @ params["wk"], h @ params["wv"]
    heads = q.shape[-1] // HEAD_DIM

    def split(t):
        return t.reshape(SEQ, heads, HEAD_DIM).transpose(1, 0, 2)

    scores = split(q) @ split(k).transpose(0, 2, 1) / jnp.sqrt(float(HEAD_DIM))
    mask = jnp.tril(jnp.ones((SEQ, SEQ), bool))
    probs = jax.nn.softmax(jnp.where(mask, scores, -1e9), axis=-1)
    attn = (probs @ split(v)).transpose(1, 0, 2).reshape(SEQ, heads * HEAD_DIM)
    x = x + (psum_attn(attn @ params["wo"]) if attn_out is None else attn_out(attn) @ params["wo"])
    h = rms(x, params["ln2"])
    return x + psum_mlp((jax.nn.silu(h @ params["wg"]) * (h @ params["wu"])) @ params["wd"])


def _params():
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)

    def w(*shape):
        return jnp.asarray(rng.standard_normal(shape, np.float32) * 0.1)

    d = HEADS * HEAD_DIM
    return {
        "ln1": jnp.ones(HIDDEN),
        "wq": w(HIDDEN, d),
        "wk": w(HIDDEN, d),
        "wv": w(HIDDEN, d),
        "wo": w(d, HIDDEN),
        "ln2": jnp.ones(HIDDEN),
        "wg": w(HIDDEN, FFN),
        "wu": w(HIDDEN, FFN),
        "wd": w(FFN, HIDDEN),
    }


COLUMN = ("wq", "wk", "wv", "wg", "wu")
ROW = ("wo", "wd")


def _run(tp: int) -> None:
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    try:
        from jax import shard_map
    except ImportError:  # older JAX
        from jax.experimental.shard_map import shard_map

    mesh = Mesh(np.array(jax.devices()[:tp]), ("tp",))
    params, x = _params(), jax.numpy.ones((SEQ, HIDDEN))
    spec = {k: P(None, "tp") if k in COLUMN else P("tp", None) if k in ROW else P() for k in params}
    shardings = {k: NamedSharding(mesh, s) for k, s in spec.items()}

    def block_tp(params, x):
        return _block(params, x, lambda t: t, lambda t: t)

    jax.jit(block_tp, in_shardings=(shardings, NamedSharding(mesh, P())), out_shardings=NamedSharding(mesh, P()))(
        params, x
    )

    def block_bug_missing_psum(params, x):
        def body(p, xx):
            return _block(p, xx, lambda t: jax.lax.psum(t, "tp"), lambda t: t)  # bug: no psum after down

        return shard_map(body, mesh=mesh, in_specs=(spec, P()), out_specs=P(), check_vma=False)(params, x)

    jax.jit(block_bug_missing_psum)(params, x)

    # the attention heads gathered before a replicated output projection: correct on the feature
    # axis, and the one-line bug of gathering on the sequence axis, then viewing it as [SEQ, heads]
    gathered = {**spec, "wo": P()}
    d = HEADS * HEAD_DIM

    def block_gather(params, x):
        def body(p, xx):
            gather = lambda t: jax.lax.all_gather(t, "tp", axis=1, tiled=True)  # noqa: E731
            return _block(p, xx, None, lambda t: jax.lax.psum(t, "tp"), gather)

        return shard_map(body, mesh=mesh, in_specs=(gathered, P()), out_specs=P(), check_vma=False)(params, x)

    def block_bug_gather_axis(params, x):
        def body(p, xx):
            gather = lambda t: jax.lax.all_gather(t, "tp", axis=0, tiled=True).reshape(SEQ, d)  # noqa: E731  bug: axis
            return _block(p, xx, None, lambda t: jax.lax.psum(t, "tp"), gather)

        return shard_map(body, mesh=mesh, in_specs=(gathered, P()), out_specs=P(), check_vma=False)(params, x)

    jax.jit(block_gather)(params, x)
    jax.jit(block_bug_gather_axis)(params, x)


def _pick(dump: Path, fn: str, stage: str) -> Path:
    found = sorted(dump.glob(f"module_*.jit_{fn}.*{stage}*.txt"))
    if not found:
        raise SystemExit(f"export_jax_hlo: no {stage} dump of {fn} in {dump}")
    return found[0]


@click.command()
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Folder for the .hlo files.")
@click.option("--tp", default=2, show_default=True, help="Tensor-parallel degree (host devices).")
def main(out_dir: str, tp: int) -> None:
    """Dump the block's HLO around JAX's SPMD partitioner into OUT (see the module docstring)."""
    if "jax" in sys.modules:
        raise SystemExit("export_jax_hlo: run it in a fresh process (XLA_FLAGS must be set before jax loads)")
    dump = Path(tempfile.mkdtemp(prefix="jax-hlo-"))
    os.environ["XLA_FLAGS"] = (
        f"--xla_force_host_platform_device_count={tp} --xla_dump_to={dump} --xla_dump_hlo_pass_re=spmd-partitioning"
    )
    _run(tp)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(_pick(dump, "block_tp", "before_spmd-partitioning"), out / "seq.hlo")
    shutil.copy(_pick(dump, "block_tp", "after_spmd-partitioning"), out / "tp.hlo")
    shutil.copy(_pick(dump, "block_bug_missing_psum", "after_spmd-partitioning"), out / "tp_bug_missing_psum.hlo")
    shutil.copy(_pick(dump, "block_gather", "after_spmd-partitioning"), out / "tp_gather.hlo")
    shutil.copy(_pick(dump, "block_bug_gather_axis", "after_spmd-partitioning"), out / "tp_bug_gather_axis.hlo")
    shutil.rmtree(dump, ignore_errors=True)
    click.echo(f"wrote {out}/seq.hlo, tp.hlo, tp_bug_missing_psum.hlo, tp_gather.hlo, tp_bug_gather_axis.hlo (TP {tp})")


if __name__ == "__main__":
    main()
