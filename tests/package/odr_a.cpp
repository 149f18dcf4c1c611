// SPDX-License-Identifier: Apache-2.0
// First of the two units of ctest package.odr (see odr.hpp).
#define LOWBIT_ODR_FUNCTION from_a
#include "odr_unit.inc"
