"""src/cuda/ptx/wgmma_instructions.h is what src/cuda/ptx/generate_wgmma.py writes (the header says "do not
edit"; a hand edit, or a generator change without the header regenerated, fails here), and every wrapper's PTX
operand list matches its form: the register-A forms take four A registers and one transpose flag, the
shared-memory forms a descriptor and two (A's set only in the _ta form of the narrow decode tile's N = 8). No GPU or CUDA toolkit needed."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PTX = ROOT / "src" / "cuda" / "ptx"


def test_header_is_the_generators_output():
    generated = subprocess.run([sys.executable, str(PTX / "generate_wgmma.py")], check=True, capture_output=True,
                               text=True).stdout
    assert generated == (PTX / "wgmma_instructions.h").read_text()


def test_operands_follow_each_form():
    text = (PTX / "wgmma_instructions.h").read_text()
    wrappers = re.findall(r"void (wgmma_m64k16_\w+)<(\d+), \w+>\(.*?\"wgmma\.mma_async[^\"]*\"\s*\"([^\"]*)\"", text,
                          re.S)
    # forms x element types x shapes, the narrow shape's two forms (ss, ss_ta), the backward's dQ form (ss_tatb),
    # the d = 256 backward's score form (ss at N = 32)
    assert len(wrappers) == 4 * 2 * 10 + 2 * 2 * 1 + 1 * 2 * 1 + 1 * 2 * 1
    for name, n, operands in wrappers:
        acc = int(n) // 2
        fields = [f.strip() for f in re.sub(r"\{[^}]*\}", "{}", operands.split(";")[0]).split(",")]
        # D, A, B, scale-d, imm-scale-a, imm-scale-b, [imm-trans-a,] imm-trans-b
        register_a = "_rs" in name
        assert fields[0] == "{}" and fields[1] == ("{}" if register_a else f"%{acc}")
        assert fields[2] == (f"%{acc + 4}" if register_a else f"%{acc + 1}")
        assert fields[3:6] == ["p", "1", "1"]
        assert fields[6:] == (["1" if name.endswith("_tb") else "0"] if register_a
                              else ["1" if name.endswith(("_ta", "_tatb")) else "0",
                                    "1" if name.endswith(("_tb", "_tatb")) else "0"])
        assert not name.endswith("_ta") or n == "8"
        assert not name.endswith("_tatb") or n == "64"
