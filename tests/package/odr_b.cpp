// SPDX-License-Identifier: Apache-2.0
// Second of the two units of ctest package.odr (see odr.hpp).
#define LOWBIT_ODR_FUNCTION from_b
#include "odr_unit.inc"
