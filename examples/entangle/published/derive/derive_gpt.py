"""Derive rank-r text of a Megatron GPT fw dump from rank 0 text: only the rank-specific
literals change (header rank, cuda index, vocab range, sequence-parallel slice).
Every substitution asserts its expected count."""
import re, sys
src, dst, r, vocab, seq, nlayer_seq_slices = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), 1
t = open(src).read()
def rep(old, new, count=None):
    global t
    n = t.count(old)
    assert n >= 1, (old, n)
    if count is not None:
        assert n == count, (old, n, count)
    t = t.replace(old, new)
    return n
rep('# Graph[rank=0]', f'# Graph[rank={r}]', 1)
n_idx = rep("device(type='cuda', index=0)", f"device(type='cuda', index={r})")
# vocab range
lo, hi = vocab * r, vocab * (r + 1)
for pat in [r'(aten\.lt\.Scalar\(\w+, )0\)', ]:
    t, k = re.subn(pat, lambda m: f'{m.group(1)}{lo})', t); assert k >= 1
t, k = re.subn(r'(aten\.ge\.Scalar\(\w+, )%d\)' % vocab, lambda m: f'{m.group(1)}{hi})', t); assert k >= 1
t, k2 = re.subn(r'(aten\.sub\.Tensor\(clone(?:_\d+)?, )0\)', lambda m: f'{m.group(1)}{lo})', t); assert k2 >= 1
t, k3 = re.subn(r'(aten\.slice\.Tensor\(clone_1, 0, )0, %d\)' % seq, lambda m: f'{m.group(1)}{seq*r}, {seq*(r+1)})', t); assert k3 == 1
open(dst, 'w').write(t)
print(dst, 'idx', n_idx, 'ge', k, 'sub', k2, 'slice', k3, 'len', len(t))
