/*
 * pdp_buckets: the bucket pass of an unbounded SUM (provsql_dp.privacy.engine_buckets) as one
 * DuckDB aggregate function, written against DuckDB's stable C extension API (v1).
 *
 * It returns, as a list of BLOBs of packed little-endian doubles (9 per row, at most CHUNK_ROWS
 * rows a BLOB), exactly the rows the SQL bucket pass returns for one group:
 *
 *     p, k, m, e, count(*), sum(1/c), sum(c), min(c), max(c)  GROUP BY p, k, m, e
 *
 * where k, m are the bucket estimates of provsql_dp.mechanisms.recursive.buckets.bucket_sql
 * (NaN here when SQL's are NULL: c not positive finite), and e the near key of near_sql /
 * near_key_sql. Every formula below is the SQL's, operation for operation, in the same order,
 * with glibc's log/exp/ceil (which DuckDB's ln/exp/ceil call): the keys are the SQL's numbers
 * (k and m are kept as int64: where SQL's ceil gives -0.0 this gives 0; e bit for bit).
 * Build with -O2 -ffp-contract=off (no FMA contraction, no fast-math).
 *
 * Two forms (an aggregate function set):
 *   pdp_buckets(x DOUBLE, spec BLOB)            spec mode 0 or 1: the direct path, x is the raw
 *                                               weight of one row; it is clamped to [lo, hi] by
 *                                               provenance.clamp.clamp_sql's rule, zero/NULL rows
 *                                               dropped (w <> 0), and, mode 1 (signed), split
 *                                               into part (w < 0) and |w|.
 *                                               spec mode 2: x is the owner total c0 of part 0.
 *   pdp_buckets(c0 DOUBLE, c1 DOUBLE, spec BLOB) spec mode 2: the owner totals of parts 0 and 1;
 *                                               each is skipped when NULL or zero (c <> 0).
 * spec: 8 little-endian doubles: mode, lo, hi, theta, beta, mu, eps2, 0 (reserved).
 *
 * The state is a small open-addressing hash table per thread (DuckDB combines them), with a
 * direct-mapped cache in front of it, and on the direct path a table of cells that keys most
 * totals >= 1 without their logarithm (struct cell); nothing is allocated per row (the hash
 * table doubles when half full, a cell is filled at its first use). Comparisons that may meet a NaN follow
 * DuckDB's order (NaN above every number, NaN = NaN), as the SQL's do.
 */

#define DUCKDB_EXTENSION_NAME pdp_buckets
#include "duckdb_extension.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

DUCKDB_EXTENSION_EXTERN

#include "pdp_params.h"
#include "pdp_table.h"

/* ---- the aggregate's callbacks ------------------------------------------------------------- */
static idx_t state_size(duckdb_function_info info) {
	(void)info;
	return sizeof(state);
}

static void state_init(duckdb_function_info info, duckdb_aggregate_state st) {
	(void)info;
	memset(st, 0, sizeof(state));
}

static void state_destroy(duckdb_aggregate_state *states, idx_t count) {
	for (idx_t i = 0; i < count; i++) {
		state *S = (state *)states[i];
		free(S->slots);
		free(S->front);
		free(S->cells);
		S->slots = NULL;
		S->front = NULL;
		S->cells = NULL;
		S->cap = S->size = 0;
	}
}

/* the spec BLOB of row 0 (every row has the same: a constant) */
static int read_spec(duckdb_vector v, idx_t row, double out[8]) {
	duckdb_string_t *s = (duckdb_string_t *)duckdb_vector_get_data(v) + row;
	uint64_t *valid = duckdb_vector_get_validity(v);
	if ((valid && !duckdb_validity_row_is_valid(valid, row)) || duckdb_string_t_length(*s) != 64) {
		return 0;
	}
	memcpy(out, duckdb_string_t_data(s), 64);
	return 1;
}

static int is_valid(uint64_t *mask, idx_t row) {
	return !mask || duckdb_validity_row_is_valid(mask, row);
}

/* ---- the per-row code, compiled twice ----------------------------------------------------
 * This file includes itself (the part under #else of PDP_LOOP) once per variant: on x86-64
 * with SSE4.1 (chosen at load by the CPU), ceil is one exact instruction (roundsd, rounding
 * toward +inf) instead of glibc's inline bit sequence: the same values (ceil is exact either
 * way), ~2.5 ns less per row. No FMA in either (-ffp-contract=off, no fma target). */
#define PDP_GLUE2(a, b) a##b
#define PDP_GLUE(a, b) PDP_GLUE2(a, b)
#define PDP_NAME(f) PDP_GLUE(f, PDP_SUFFIX)
#define PDP_LOOP 1

#define PDP_SUFFIX _base
#define PDP_CEIL ceil
#include "pdp_rows.h"
#undef PDP_SUFFIX
#undef PDP_CEIL

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PDP_HAVE_SSE41 1
#pragma GCC push_options
#pragma GCC target("sse4.1")
#include <smmintrin.h>
static inline double ceil_sse41(double x) {
	__m128d v = _mm_set_sd(x);
	return _mm_cvtsd_f64(_mm_round_sd(v, v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC));
}
#define PDP_SUFFIX _sse41
#define PDP_CEIL ceil_sse41
#include "pdp_rows.h"
#undef PDP_SUFFIX
#undef PDP_CEIL
#pragma GCC pop_options
#endif

static void combine(duckdb_function_info info, duckdb_aggregate_state *source, duckdb_aggregate_state *target,
                    idx_t count) {
	for (idx_t i = 0; i < count; i++) {
		state *from = (state *)source[i], *to = (state *)target[i];
		if (!from->P.set) {
			continue;
		}
		if (!to->P.set) {
			to->P = from->P;
		}
		for (uint64_t s = 0; s < from->cap; s++) {
			bucket *a = &from->slots[s];
			if (a->m == EMPTY) {
				continue;
			}
			bucket *b = find_slot(to, a->kp, a->m, a->e);
			if (!b) {
				duckdb_aggregate_function_set_error(info, "pdp_buckets: out of memory");
				return;
			}
			if (b->n == 0.0) {
				b->lo = a->lo;
				b->hi = a->hi;
			} else { /* DuckDB's order (NaN largest): only a NULL-key bucket can hold one */
				b->lo = d_lt(a->lo, b->lo) ? a->lo : b->lo;
				b->hi = d_gt(a->hi, b->hi) ? a->hi : b->hi;
			}
			b->n += a->n;
			b->inv += a->inv;
			b->tot += a->tot;
		}
	}
}

/* The rows of each state as a list of BLOBs of at most CHUNK_ROWS rows (64 KiB): never one
 * allocation as large as all the rows, which DuckDB made as one block under memory_limit, so a
 * pass with many buckets failed where the SQL pass succeeded (red-team finding h64native-2) */
#define CHUNK_ROWS 910
static void finalize(duckdb_function_info info, duckdb_aggregate_state *source, duckdb_vector result, idx_t count,
                     idx_t offset) {
	double *rows = (double *)malloc(CHUNK_ROWS * ROW_DOUBLES * sizeof(double));
	if (!rows) {
		duckdb_aggregate_function_set_error(info, "pdp_buckets: out of memory");
		return;
	}
	for (idx_t i = 0; i < count; i++) {
		state *S = (state *)source[i];
		idx_t base = duckdb_list_vector_get_size(result);
		idx_t chunks = (idx_t)((S->size + CHUNK_ROWS - 1) / CHUNK_ROWS);
		if (duckdb_list_vector_reserve(result, base + chunks) != DuckDBSuccess) {
			duckdb_aggregate_function_set_error(info, "pdp_buckets: out of memory");
			break;
		}
		duckdb_vector child = duckdb_list_vector_get_child(result);
		duckdb_list_entry *entry = (duckdb_list_entry *)duckdb_vector_get_data(result) + offset + i;
		entry->offset = base;
		entry->length = chunks;
		size_t r = 0;
		idx_t c = base;
		for (uint64_t s = 0; s < S->cap; s++) {
			const bucket *b = &S->slots[s];
			if (b->m == EMPTY) {
				continue;
			}
			int null = b->m == NULLKEY;
			double p = null ? (double)b->kp : (double)(b->kp & 1);
			double k = null ? NAN : (double)(b->kp >> 1), m = null ? NAN : (double)b->m;
			double row[ROW_DOUBLES] = {p, k, m, b->e, b->n, b->inv, b->tot, b->lo, b->hi};
			memcpy(rows + r * ROW_DOUBLES, row, sizeof row);
			if (++r == CHUNK_ROWS) {
				duckdb_vector_assign_string_element_len(child, c++, (const char *)rows, sizeof row * r);
				r = 0;
			}
		}
		if (r) {
			duckdb_vector_assign_string_element_len(child, c++, (const char *)rows,
			                                        r * ROW_DOUBLES * sizeof(double));
		}
		duckdb_list_vector_set_size(result, base + chunks);
	}
	free(rows);
}

/* ---- registration -------------------------------------------------------------------------- */
static duckdb_aggregate_function make(int ntotals) {
	duckdb_aggregate_function f = duckdb_create_aggregate_function();
	duckdb_aggregate_function_set_name(f, "pdp_buckets");
	duckdb_logical_type dbl = duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE);
	duckdb_logical_type blob = duckdb_create_logical_type(DUCKDB_TYPE_BLOB);
	for (int j = 0; j < ntotals; j++) {
		duckdb_aggregate_function_add_parameter(f, dbl);
	}
	duckdb_aggregate_function_add_parameter(f, blob);
	duckdb_logical_type blobs = duckdb_create_list_type(blob);
	duckdb_aggregate_function_set_return_type(f, blobs);
	duckdb_destroy_logical_type(&blobs);
	duckdb_destroy_logical_type(&dbl);
	duckdb_destroy_logical_type(&blob);
	duckdb_aggregate_update_t update = update_base;
#ifdef PDP_HAVE_SSE41
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.1")) {
		update = update_sse41;
	}
#endif
	duckdb_aggregate_function_set_functions(f, state_size, state_init, update, combine, finalize);
	duckdb_aggregate_function_set_destructor(f, state_destroy);
	/* NULL rows reach update (a NULL weight adds nothing, as the SQL's w <> 0 drops it) */
	duckdb_aggregate_function_set_special_handling(f);
	return f;
}

DUCKDB_EXTENSION_ENTRYPOINT(duckdb_connection connection, duckdb_extension_info info,
                            struct duckdb_extension_access *access) {
	duckdb_aggregate_function_set set = duckdb_create_aggregate_function_set("pdp_buckets");
	duckdb_aggregate_function one = make(1), two = make(2);
	int ok = duckdb_add_aggregate_function_to_set(set, one) == DuckDBSuccess &&
	         duckdb_add_aggregate_function_to_set(set, two) == DuckDBSuccess &&
	         duckdb_register_aggregate_function_set(connection, set) == DuckDBSuccess;
	duckdb_destroy_aggregate_function(&one);
	duckdb_destroy_aggregate_function(&two);
	duckdb_destroy_aggregate_function_set(&set);
	if (!ok) {
		access->set_error(info, "pdp_buckets: the aggregate could not be registered");
	}
	return ok;
}
