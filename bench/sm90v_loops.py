# Local SASS reading (helper sm90v): for each forward kernel of an nvdisasm -c listing, the backward
# branches whose span holds HGMMA (the consumer's key-block loop): span length in instructions, HGMMA count.
#   python3 bench/sm90v_loops.py FILE.sass
import re
import sys

kernel, lines = None, {}
for line in open(sys.argv[1]):
    if line.startswith(".text."):
        kernel = line.strip()[6:-1] if "forward_kernel" in line else None
        lines[kernel] = []
        continue
    if kernel:
        lines[kernel].append(line)
for kernel, body in lines.items():
    if not kernel:
        continue
    labels, instrs = {}, []
    for line in body:
        m = re.match(r"\s*(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(instrs)
            continue
        if re.search(r"/\*[0-9a-f]{4,}\*/", line):
            instrs.append(line)
    out = []
    for i, ins in enumerate(instrs):
        m = re.search(r"BRA\s+`\((\.L_x_\d+)\)", ins)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            span = instrs[labels[m.group(1)]:i + 1]
            h = sum("HGMMA" in s for s in span)
            if h:
                out.append(f"span {len(span)} HGMMA {h} BAR {sum(' BAR.' in s for s in span)}")
    name = re.sub(r".*ForwardConfigILi(\d+)ELi(\d+)E\w+?Li(\d)ELi(\d+)ELi(\d)EEELb(\d).*", r"d\1 dv\2 c\3 n\4 cl\5 paged\6", kernel)
    print(name, "|", "; ".join(out))
