# The profiled window of the ncu targets (bench/ncu_grid_target.py, ncu_decode_target.py, sm90L_ncu_target.py):
# two warm-up calls of each function, then one call of each between cudaProfilerStart / Stop, so that
# `ncu --profile-from-start off` sees exactly those launches, in order.
import torch


def profile(calls):
    for fn in calls:
        fn()
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for fn in calls:
        fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
