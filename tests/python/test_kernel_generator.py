"""src/cuda/generate_kernels.py against the structs it instantiates: the generated kernel list passes each
cuda_sm80 TileShape as positional X-macro arguments, so the generator's field order must be the declaration order
of TileShape's fields in src/cuda/sm80/forward_config.h (a mismatch of two bool fields would still compile and
silently swap two options), and every table entry must name known fields only. No GPU or CUDA toolkit needed."""
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("generate_kernels", ROOT / "src" / "cuda" / "generate_kernels.py")
generate_kernels = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generate_kernels)


def tile_shape_fields():
    text = (ROOT / "src" / "cuda" / "sm80" / "forward_config.h").read_text()
    body = re.search(r"struct TileShape \{(.*?)\n\};", text, re.S).group(1)
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^\s*(int|bool) (\w+) = [^;]+;", body, re.M)]


def test_generator_fields_follow_tile_shape_declaration_order():
    fields = tile_shape_fields()
    assert [name for _, name in fields] == list(generate_kernels.SHAPE_FIELDS)
    assert {name for kind, name in fields if kind == "bool"} == set(generate_kernels.BOOL_FIELDS)


def test_table_entries_name_known_fields_and_normalize_fully():
    table = json.loads((ROOT / "src" / "cuda" / "sm80" / "forward_tuning.json").read_text())
    shapes = [e["shape"] for e in table["entries"]] + [d["shape"] for d in table["defaults"]]
    for shape in shapes:
        assert set(shape) <= set(generate_kernels.SHAPE_FIELDS), shape
        args = generate_kernels.shape_args(shape).split(", ")
        assert len(args) == len(generate_kernels.SHAPE_FIELDS)


def test_conditional_rescale_reaches_the_instantiated_shape():
    on = generate_kernels.shape_args({"m_tiles_per_warp": 1, "warps": 4, "block_n": 64, "stages": 2,
                                      "q_in_registers": False, "min_blocks_per_sm": 2,
                                      "conditional_rescale": True}).split(", ")
    position = generate_kernels.SHAPE_FIELDS.index("conditional_rescale")
    assert on[position] == "true"
    assert on.count("true") == 1
