/*
 * gx_isa_unit.h -- what every ISA unit (src/isa/<name>.c) includes first:
 * the types, tables and formulas its kernels are made of.  The unit then
 * includes its primitives header (src/simd/<name>.h) and gx_isa_kernels.h.
 *
 * One compile unit per ISA, each with that ISA's flags (setup.py,
 * isa_flags): the compiler may use the ISA anywhere in the unit, its own
 * vectorisation of the elementwise loops included.  Everything a unit
 * defines is static (the shared headers' functions are static inline:
 * GX_INLINE, gx_math.h) or carries the ISA's name (GX_FN: gx_k_<name>_<isa>),
 * so the linker can never hand a caller in another unit (the baseline's, or
 * gx_dispatch.c's) this unit's copy of a function: the only name a unit
 * exports is its data table gx_k_unit_<isa> (gx_unit_table.h, GX_ISA_UNIT_DECL),
 * and tests/test_isa_units.py checks the object code for that.
 */
#ifndef GX_ISA
#error "src/kernels/gx_isa_unit.h: define GX_ISA (the unit's row name in gx_isas.h) before including it"
#endif
#include "gx_base.h"
#include "gx_ops.h"
#include "gx_isas.h"
#include "math/gx_math.h"
#include "math/gx_lut.h"
#include "math/gx_lut64.h"
#include "math/gx_lut8.h"
#include "runtime/gx_atomic.h"
#include "gx_split_rows.h"
#include "gx_unit_table.h"

#include <stdlib.h>
