"""tools/kernels/resource_usage.py's ptxas log reader on a fixed excerpt of `nvcc -Xptxas=-v` output (nvcc 13.0, two
sm90 kernels, one of which ptxas serialised): the serialisation note lands on the kernel it names, not on the
kernel whose lines come next, and ptxas_check.py's verdict follows. No GPU and no CUDA toolkit needed."""
import importlib.util
import sys
from pathlib import Path

_tools = Path(__file__).resolve().parents[2] / "tools" / "kernels"
sys.path.insert(0, str(_tools))
_spec = importlib.util.spec_from_file_location("resource_usage", _tools / "resource_usage.py")
resource_usage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(resource_usage)

LOG = """\
ptxas info    : (C7519) warpgroup.arrive is injected in around line 80003 by compiler to allow use of registers in GMMA in function '_Z7serialv'
ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the wgmma pipeline in the function '_Z7serialv'
ptxas info    : Compiling entry function '_Z9pipelinedv' for 'sm_90a'
ptxas info    : Function properties for _Z9pipelinedv
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 168 registers, used 16 barriers
ptxas info    : Compiling entry function '_Z7serialv' for 'sm_90a'
ptxas info    : Function properties for _Z7serialv
    8 bytes stack frame, 16 bytes spill stores, 36 bytes spill loads
ptxas info    : Used 168 registers, used 16 barriers, 8 bytes cumulative stack size
"""


def test_the_note_lands_on_the_kernel_it_names(tmp_path):
    log = tmp_path / "ptxas.txt"
    log.write_text(LOG)
    rows = resource_usage.from_ptxas(log)
    assert set(rows) == {("_Z9pipelinedv", "sm_90a"), ("_Z7serialv", "sm_90a")}
    assert "wgmma_serialised" not in rows[("_Z9pipelinedv", "sm_90a")]
    notes = rows[("_Z7serialv", "sm_90a")]["wgmma_serialised"]
    assert len(notes) == 1 and notes[0].startswith("C7511: wgmma.mma_async instructions are serialized")
    assert rows[("_Z7serialv", "sm_90a")]["spill_loads"] == 36
    assert rows[("_Z9pipelinedv", "sm_90a")]["registers"] == 168


def test_an_injected_arrive_alone_is_not_a_serialisation(tmp_path):
    log = tmp_path / "ptxas.txt"
    log.write_text("\n".join(line for line in LOG.splitlines() if "C7511" not in line) + "\n")
    rows = resource_usage.from_ptxas(log)
    assert not any("wgmma_serialised" in r for r in rows.values())


def test_a_note_after_the_kernels_lines_still_counts(tmp_path):
    lines = LOG.splitlines()
    note = next(line for line in lines if "C7511" in line)
    log = tmp_path / "ptxas.txt"
    log.write_text("\n".join([line for line in lines if line != note] + [note]) + "\n")
    rows = resource_usage.from_ptxas(log)
    assert "wgmma_serialised" in rows[("_Z7serialv", "sm_90a")]
    assert "wgmma_serialised" not in rows[("_Z9pipelinedv", "sm_90a")]
