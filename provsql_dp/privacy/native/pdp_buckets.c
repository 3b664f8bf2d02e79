/*
 * pdp_buckets: the bucket pass of an unbounded SUM (provsql_dp.privacy.engine_buckets) as one
 * DuckDB aggregate function, written against DuckDB's stable C extension API (v1).
 *
 * It returns, as a list of BLOBs of packed little-endian doubles (9 per row, at most CHUNK_ROWS
 * rows a BLOB), the rows the SQL bucket pass returns for one group:
 *
 *     p, k, m, e, count(*), sum(1/c), sum(c), min(c), max(c)  GROUP BY p, k, m, e
 *
 * the same keys and counts, the sums up to the order of addition, the same min and max but a
 * far bucket's (e = 0) where the block code's accumulators added to it (pdp_fine.h): bounds of
 * them that classify against every threshold, lattice point and cap as they do, each part's
 * largest total exact; so the same release.
 *
 * where k, m are the bucket estimates of provsql_dp.mechanisms.recursive.buckets.bucket_sql
 * (NaN here when SQL's are NULL: c not positive finite), and e the near key of near_sql /
 * near_key_sql. Every formula below is the SQL's, operation for operation, in the same order,
 * with glibc's log/exp/ceil (which DuckDB's ln/exp/ceil call): the keys are the SQL's numbers
 * (k and m are kept as int64: where SQL's ceil gives -0.0 this gives 0; e bit for bit).
 * Build with -O2 -ffp-contract=off (no FMA contraction, no fast-math).
 *
 * One form, its argument a STRUCT whose first field's name is the spec:
 *   pdp_buckets(struct_pack("<spec>" := x))          spec mode 0 or 1: the direct path, x (DOUBLE)
 *                                               the raw weight of one row; it is clamped to
 *                                               [lo, hi] by provenance.clamp.clamp_sql's rule,
 *                                               zero/NULL rows dropped (w <> 0), and, mode 1
 *                                               (signed), split into part (w < 0) and |w|.
 *                                               spec mode 2: x is the owner total c0 of part 0.
 *   pdp_buckets(struct_pack("<spec>" := c0, "c1" := c1)) spec mode 2: the owner totals (DOUBLE)
 *                                               of parts 0 and 1; each is skipped when NULL or
 *                                               zero (c <> 0).
 * spec: 128 hexadecimal digits, the 64 bytes of 8 little-endian doubles: mode, lo, hi, theta,
 * beta, mu, eps2, 0 (reserved). In the type, not a constant argument: the C API flattens a
 * constant argument into every row of every chunk (~0.6 ns a row of a 2-ns budget), and has no
 * bind callback for aggregates; the type is fixed when the statement is bound.
 *
 * The state is a small open-addressing hash table per thread (DuckDB combines them), with a
 * direct-mapped cache in front of it, and on the direct path a table of cells that keys most
 * totals >= 1 without their logarithm (struct cell, pdp_table.h) and, in front of all that, the
 * block code's fine cells and accumulators (pdp_fine.h); nothing is allocated per row (the hash
 * table doubles when half full, a cell is filled at its first use). Comparisons that may meet a NaN follow
 * DuckDB's order (NaN above every number, NaN = NaN), as the SQL's do.
 */

#define DUCKDB_EXTENSION_NAME pdp_buckets
#include "duckdb_extension.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h> /* the AVX2 and AVX-512 variants' intrinsics (pdp_rows.h) */
#endif

DUCKDB_EXTENSION_EXTERN

#include "pdp_params.h"
#include "pdp_table.h"
#include "pdp_fine.h"

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
		fine_free(S);
		S->slots = NULL;
		S->front = NULL;
		S->cells = NULL;
		S->cap = S->size = 0;
	}
}

/* the spec of a field name: 128 hexadecimal digits (1: read) */
static int spec_of_name(const char *name, double out[8]) {
	unsigned char raw[64];
	if (strlen(name) != 128) {
		return 0;
	}
	for (int i = 0; i < 128; i++) {
		char c = name[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0) {
			return 0;
		}
		raw[i / 2] = (unsigned char)(i % 2 ? (raw[i / 2] << 4) | d : d);
	}
	memcpy(out, raw, 64); /* little-endian doubles (x86-64, aarch64) */
	return 1;
}

/* The chunk's columns (the struct's fields: 1 or 2 DOUBLE) and its spec: the number of
 * columns, 0 after an error (set). The type (fixed when the statement was bound: every chunk of
 * an aggregate has the same) is read unless the first row's state already holds its spec. */
static int read_input(duckdb_function_info info, duckdb_data_chunk input, duckdb_aggregate_state *states,
                      params *P, const double *col[2], uint64_t *valid[2]) {
	duckdb_vector v = duckdb_data_chunk_get_vector(input, 0);
	idx_t n = duckdb_data_chunk_get_size(input);
	const char *err = NULL;
	const state *S0 = (const state *)states[0];
	if (S0->P.set) {
		*P = S0->P;
	} else {
		duckdb_logical_type t = duckdb_vector_get_column_type(v);
		int nparts = 0;
		if (duckdb_data_chunk_get_column_count(input) != 1 || duckdb_get_type_id(t) != DUCKDB_TYPE_STRUCT ||
		    (nparts = (int)duckdb_struct_type_child_count(t)) < 1 || nparts > 2) {
			err = "pdp_buckets: the argument must be struct_pack(\"<spec>\" := x) or (\"<spec>\" := c0, \"c1\" := c1)";
		}
		for (int j = 0; j < nparts && !err; j++) {
			duckdb_logical_type ct = duckdb_struct_type_child_type(t, j);
			if (duckdb_get_type_id(ct) != DUCKDB_TYPE_DOUBLE) {
				err = "pdp_buckets: the struct's fields must be DOUBLE";
			}
			duckdb_destroy_logical_type(&ct);
		}
		if (!err) {
			double spec[8];
			char *name = duckdb_struct_type_child_name(t, 0);
			int ok = name && spec_of_name(name, spec);
			duckdb_free(name);
			if (!ok) {
				err = "pdp_buckets: the struct's first field must be named by the 128-digit spec";
			} else {
				params_from(P, spec);
				P->nparts = nparts;
			}
		}
		if (!err && nparts == 2 && P->mode != 2) {
			err = "pdp_buckets: two totals need spec mode 2";
		}
		duckdb_destroy_logical_type(&t);
	}
	uint64_t *sv = duckdb_vector_get_validity(v);
	for (idx_t i = 0; sv && i < n && !err; i++) {
		if (!row_valid(sv, i)) {
			err = "pdp_buckets: a NULL struct (struct_pack makes none)";
		}
	}
	if (err) {
		duckdb_aggregate_function_set_error(info, err);
		return 0;
	}
	for (int j = 0; j < P->nparts; j++) {
		duckdb_vector c = duckdb_struct_vector_get_child(v, j);
		col[j] = (const double *)duckdb_vector_get_data(c);
		valid[j] = duckdb_vector_get_validity(c);
	}
	return P->nparts;
}

static int is_valid(uint64_t *mask, idx_t row) {
	return !mask || row_valid(mask, row);
}

/* every row's state is the first's (an ungrouped aggregate): no branch a row */
static int same_state(duckdb_aggregate_state *states, idx_t n) {
	uintptr_t s0 = (uintptr_t)states[0], d[4] = {0, 0, 0, 0};
	idx_t i = 0;
	for (; i + 4 <= n; i += 4) {
		for (int j = 0; j < 4; j++) {
			d[j] |= (uintptr_t)states[i + j] ^ s0;
		}
	}
	for (; i < n; i++) {
		d[0] |= (uintptr_t)states[i] ^ s0;
	}
	return (d[0] | d[1] | d[2] | d[3]) == 0;
}

/* ---- the per-row and block code, compiled once per variant -------------------------------
 * pdp_rows.h is included once per variant, the best the CPU has chosen at load: on x86-64 with
 * SSE4.1, ceil is one exact instruction (roundsd, rounding toward +inf) instead of glibc's
 * inline bit sequence: the same values (ceil is exact either way), ~2.5 ns less per row; with
 * AVX2 too, the block code's first stage takes 4 rows at a time (PDP_VEC: exact operations
 * only, 1/c correctly rounded in every lane as in a scalar division); with AVX-512 F, DQ and VL
 * (PDP_VEC 2), 8 rows at a time with its masks in mask registers, and each accumulator is
 * updated by one load, one add and one store, without a branch (pdp_rows.h, PDP_ADD): the same
 * operations on the same values in the same order as the AVX2 variant, so the same bits. No FMA
 * in any (-ffp-contract=off, no fma target). Valgrind (3.19) has no AVX-512: its CPUID hides it,
 * so under valgrind the AVX2 variant is chosen; the memcheck harness runs natively too. */
#define PDP_GLUE2(a, b) a##b
#define PDP_GLUE(a, b) PDP_GLUE2(a, b)
#define PDP_NAME(f) PDP_GLUE(f, PDP_SUFFIX)

#define PDP_SUFFIX _base
#define PDP_CEIL ceil
#include "pdp_rows.h"
#undef PDP_SUFFIX
#undef PDP_CEIL

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PDP_HAVE_X86 1
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
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2")
#define PDP_SUFFIX _avx2
#define PDP_VEC 1
#include "pdp_rows.h"
#undef PDP_VEC
#undef PDP_SUFFIX
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,avx512f,avx512dq,avx512vl")
#include <immintrin.h>
#define PDP_HAVE_AVX512 1
#define PDP_SUFFIX _avx512
#define PDP_VEC 2
#include "pdp_rows.h"
#undef PDP_VEC
#undef PDP_SUFFIX
#undef PDP_CEIL
#pragma GCC pop_options

/* the AVX-512 variant's instructions (F, DQ, VL), their state saved by the OS (libgcc checks) */
static int avx512_usable(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
	       __builtin_cpu_supports("avx512vl");
}
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
		if (!fine_fold(from)) {
			duckdb_aggregate_function_set_error(info, "pdp_buckets: out of memory");
			return;
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
		if (!fine_fold(S)) {
			duckdb_aggregate_function_set_error(info, "pdp_buckets: out of memory");
			break;
		}
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
static duckdb_aggregate_function make(void) {
	duckdb_aggregate_function f = duckdb_create_aggregate_function();
	duckdb_aggregate_function_set_name(f, "pdp_buckets");
	duckdb_logical_type any = duckdb_create_logical_type(DUCKDB_TYPE_ANY); /* the struct */
	duckdb_aggregate_function_add_parameter(f, any);
	duckdb_logical_type blob = duckdb_create_logical_type(DUCKDB_TYPE_BLOB);
	duckdb_logical_type blobs = duckdb_create_list_type(blob);
	duckdb_aggregate_function_set_return_type(f, blobs);
	duckdb_destroy_logical_type(&blobs);
	duckdb_destroy_logical_type(&any);
	duckdb_destroy_logical_type(&blob);
	duckdb_aggregate_update_t update = update_base;
#ifdef PDP_HAVE_X86
	__builtin_cpu_init();
	if (avx512_usable()) {
		update = update_avx512;
	} else if (__builtin_cpu_supports("avx2")) {
		update = update_avx2;
	} else if (__builtin_cpu_supports("sse4.1")) {
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
	duckdb_aggregate_function f = make();
	int ok = duckdb_register_aggregate_function(connection, f) == DuckDBSuccess;
	duckdb_destroy_aggregate_function(&f);
	if (!ok) {
		access->set_error(info, "pdp_buckets: the aggregate could not be registered");
	}
	return ok;
}
