"""tools/kernels/sass_stalls.py on a fixed excerpt of nvdisasm -hex output (the d128 sm90 forward kernel's
GEMM issue, nvcc 13.0): the control words decode to the stall cycles ptxas chose, and the issue stretch
from the turn barrier's wait to its arrive is found. No GPU and no CUDA toolkit needed."""
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "sass_stalls", Path(__file__).resolve().parents[2] / "tools" / "kernels" / "sass_stalls.py")
sass_stalls = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sass_stalls)

EXCERPT = """
.text._Z6kernelv:
        /*5210*/                   BAR.SYNC.DEFER_BLOCKING R10, 0x100 ;                 /* 0x0004000a0000751d */
                                                                                        /* 0x0003e20000010000 */
        /*5250*/                   UMOV UR27, 0x40000040 ;                              /* 0x40000040001b7882 */
                                                                                        /* 0x000fe20000000000 */
        /*5630*/                   HGMMA.64x128x16.F32.BF16 R88, gdesc[UR36], R88 ;     /* 0x01e00000245879f0 */
                                                                                        /* 0x000fd80008701858 */
        /*5640*/                   HGMMA.64x128x16.F32.BF16 R88, gdesc[UR40], R88, gsb0 ; /* 0x01e00000285879f0 */
                                                                                        /* 0x000fd80008001858 */
        /*5650*/                   HGMMA.64x128x16.F32.BF16 R24, R152, gdesc[UR20].tnspB, R24 ; /* 0x41e0001498187df0 */
                                                                                        /* 0x000fe20008701818 */
        /*5950*/                   BAR.ARV R3, 0x100 ;                                  /* 0x000400030000751d */
                                                                                        /* 0x0003ec0000002000 */
"""


def test_control_words_decode_to_the_scheduled_stalls():
    kernels = sass_stalls.parse(EXCERPT)
    assert list(kernels) == ["_Z6kernelv"]
    ins = kernels["_Z6kernelv"]
    assert [sass_stalls.opcode(x) for x in ins] == [
        "BAR.SYNC.DEFER_BLOCKING", "UMOV", "HGMMA.64x128x16.F32.BF16", "HGMMA.64x128x16.F32.BF16",
        "HGMMA.64x128x16.F32.BF16", "BAR.ARV"]
    assert [x["offset"] for x in ins] == [0x5210, 0x5250, 0x5630, 0x5640, 0x5650, 0x5950]
    # Shared-memory-operand HGMMAs are scheduled 12 cycles apart; the register-A one and UMOV 1 cycle, yielding.
    assert [x["stall"] for x in ins] == [1, 1, 12, 12, 1, 6]
    assert [x["yield"] for x in ins] == [1, 1, 0, 0, 1, 1]
    # HGMMAs set no scoreboard (7 = none): their completion is waited for by WARPGROUP.DEPBAR.
    assert ins[2]["wbar"] == 7 and ins[2]["rbar"] == 7


def test_issue_stretch_runs_from_the_turn_wait_to_the_arrive():
    ins = sass_stalls.parse(EXCERPT)["_Z6kernelv"]
    assert sass_stalls.issue_stretches(ins, min_hgmma=3) == [(0, 5, 3, 1 + 1 + 12 + 12 + 1)]
    assert sass_stalls.issue_stretches(ins, min_hgmma=4) == []


def test_a_later_wait_restarts_the_stretch():
    lines = EXCERPT.splitlines()
    doubled = "\n".join(lines[:2] + lines[2:4] + lines[2:])  # BAR.SYNC, BAR.SYNC, UMOV, ...
    ins = sass_stalls.parse(doubled)["_Z6kernelv"]
    assert [s[0] for s in sass_stalls.issue_stretches(ins, min_hgmma=3)] == [1]
