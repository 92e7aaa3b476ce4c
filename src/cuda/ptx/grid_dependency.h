// Programmatic dependent launch (sm_90): a kernel launched with programmatic stream
// serialization may start while the kernel ahead of it in the stream still runs.
#pragma once

namespace flashattn::ptx {

// Blocks the calling thread until every prerequisite grid has completed and its memory
// operations are visible to this grid; returns at once in a kernel launched without a
// programmatic dependency. Every thread that reads what the prerequisite wrote must wait.
__device__ __forceinline__ void griddepcontrol_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

// Lets the dependent grid's launch begin once every CTA of this grid has issued this or
// exited (the dependent's griddepcontrol_wait still waits for this grid's completion).
__device__ __forceinline__ void griddepcontrol_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

}  // namespace flashattn::ptx
