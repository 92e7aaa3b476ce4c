// Turns runtime flags into compile-time constants for the kernel templates:
//   FLASHATTN_BOOL_SWITCH(p.softcap > 0, kSoftcap, [&] { launch<kSoftcap>(); });
// Each switch doubles the kernels compiled, so only features whose cost in the
// inner loop matters get one; the rest are runtime branches.
#pragma once

#define FLASHATTN_BOOL_SWITCH(condition, kName, ...) \
  [&] {                                              \
    if (condition) {                                 \
      constexpr static bool kName = true;            \
      return __VA_ARGS__();                          \
    } else {                                         \
      constexpr static bool kName = false;           \
      return __VA_ARGS__();                          \
    }                                                \
  }()
