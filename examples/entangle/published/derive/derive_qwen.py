"""Derive rank-r text of the vLLM Qwen2 fw dump from rank 0: header rank, cuda index, vocab range.
Every substitution asserts its count."""
import sys
src, dst, r, vocab = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
t = open(src).read()
def rep(old, new, n):
    global t
    assert t.count(old) == n, (old, t.count(old))
    t = t.replace(old, new)
rep('# Graph[rank=0]', f'# Graph[rank={r}]', 1)
rep("device(type='cuda', index=0)", f"device(type='cuda', index={r})", 1)
rep('aten.ge.Scalar(arg0_1, 0)', f'aten.ge.Scalar(arg0_1, {vocab*r})', 1)
rep(f'aten.lt.Scalar(arg0_1, {vocab})', f'aten.lt.Scalar(arg0_1, {vocab*(r+1)})', 1)
rep('aten.mul.Tensor(bitwise_and, 0)', f'aten.mul.Tensor(bitwise_and, {vocab*r})', 1)
open(dst, 'w').write(t); print(dst, len(t))
