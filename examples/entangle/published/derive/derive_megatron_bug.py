"""Derive TP rank-1 text of a Megatron both.g0 dump (GraphGuard bug cases) from rank 0.
Rank-specific literals only; every substitution asserts its count (-1 = at least one)."""
import re, sys
src, dst = sys.argv[1], sys.argv[2]
vocab, seq = int(sys.argv[3]), int(sys.argv[4])
dp_from, dp_to = sys.argv[5], sys.argv[6]
t = open(src).read()
def rep(old, new, n=-1):
    global t
    c = t.count(old)
    assert (c >= 1) if n == -1 else (c == n), (old, c, n)
    t = t.replace(old, new); return c
def sub(pat, fn, n=-1):
    global t
    t, c = re.subn(pat, fn, t)
    assert (c >= 1) if n == -1 else (c == n), (pat, c, n)
    return c
log = {}
log['hdr'] = rep('# Graph[rank=0]', '# Graph[rank=1]', 1)
log['idx'] = rep("device(type='cuda', index=0)", "device(type='cuda', index=1)")
for a, b in zip(range(457, 462), range(508, 513)):
    log[f'utils{a}'] = rep(f'training/utils.py:{a} in get_batch_on_this_tp_rank', f'training/utils.py:{b} in get_batch_on_this_tp_rank', 1)
log['lt'] = sub(r'(aten\.lt\.Scalar\(\w+, )0\)', lambda m: f'{m.group(1)}{vocab})')
log['ge'] = sub(r'(aten\.ge\.Scalar\(\w+, )%d\)' % vocab, lambda m: f'{m.group(1)}{2*vocab})')
log['sub'] = sub(r'(aten\.sub\.Tensor\(clone_\d+, )0\)', lambda m: f'{m.group(1)}{vocab})')
if seq:
    log['slice'] = sub(r'(aten\.slice\.Tensor\(clone_\d+, 0, )0, %d\)' % seq, lambda m: f'{m.group(1)}{seq}, {2*seq})', 1)
log['dp'] = rep(f"'sum', '{dp_from}')", f"'sum', '{dp_to}')")
open(dst, 'w').write(t)
print(dst, log, 'len', len(t))
