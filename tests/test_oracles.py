"""Shape algebra oracles."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from analyzer.solve.oracles import reshape_axis_map


def test_split_heads():
    assert reshape_axis_map([1, 8, 64], [1, 8, 4, 16], 2) == {1: 1, 2: 2}


def test_merge_heads():
    assert reshape_axis_map([1, 8, 4, 16], [1, 8, 64], 2) == {1: 1, 2: 2}


def test_shard_on_inner_factor_does_not_map():
    # [B, S, H] -> [B*S, H]: S is no longer an axis of its own
    assert 1 not in reshape_axis_map([2, 8, 64], [16, 64], 2)


@given(
    outer=st.integers(1, 4),
    a=st.sampled_from([2, 4, 6, 8]),
    inner=st.sampled_from([1, 2, 3, 4]),
    split=st.sampled_from([1, 2]),
)
def test_map_agrees_with_numpy(outer, a, inner, split):
    """Chunk r of the input reshaped equals chunk r of the reshaped input along the mapped axis."""
    n = 2
    in_shape = [outer, a, inner * split]
    out_shape = [outer, a, inner, split]
    amap = reshape_axis_map(in_shape, out_shape, n)
    x = np.arange(np.prod(in_shape)).reshape(in_shape)
    for ax, bx in amap.items():
        local_shape = list(out_shape)
        local_shape[bx] //= n
        for r in range(n):
            local = np.split(x, n, axis=ax)[r].reshape(local_shape)
            assert np.array_equal(local, np.split(x.reshape(out_shape), n, axis=bx)[r])


def test_divisors_are_every_divisor_in_order():
    from analyzer.solve.oracles import _divisors

    for n in [*range(0, 300), 1024, 4096, 14336, 53248, 128256, 2**20 + 1]:
        assert _divisors(n) == [d for d in range(1, n + 1) if n % d == 0], n


def test_reshape_axis_map_with_a_data_dependent_size():
    """u0 (the routed token count of a MoE layer) is a factor of its own and never split."""
    assert reshape_axis_map(["u0", 6144], ["u0", 1, 6144], 2) == {1: 2}
    assert reshape_axis_map(["u0", 1, 6144], ["u0", 6144], 2) == {2: 1}
    assert reshape_axis_map(["u0", 8], ["u1", 8], 2) == {}  # other element counts
    assert reshape_axis_map(["u0", 4, 6], ["u0", 24], 2) == {1: 1}
