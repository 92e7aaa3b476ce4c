// Umbrella header: everything a C++ caller needs.
#pragma once

#include "flashattn/attention.h"
#include "flashattn/info.h"
#include "flashattn/status.h"
#include "flashattn/tensor.h"
