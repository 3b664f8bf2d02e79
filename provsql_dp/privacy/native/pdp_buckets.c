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
#ifndef PDP_LOOP /* the whole file but the per-row code, which it includes twice (below) */
#define DUCKDB_EXTENSION_NAME pdp_buckets
#include "duckdb_extension.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

DUCKDB_EXTENSION_EXTERN

/* the public constants of the SQL (provsql_dp.mechanisms.recursive._framework._CMP_TOL,
 * release._MAX_EXPONENT, buckets._WINDOW) */
#define CMP_TOL 1e-9
#define MAX_EXPONENT 700.0
#define WINDOW 0x1p-46
#define ROW_DOUBLES 9

/* ---- DuckDB's order on doubles: NaN is the largest value and equals itself ---------------- */
static int d_gt(double a, double b) {
	if (isnan(a)) {
		return !isnan(b);
	}
	if (isnan(b)) {
		return 0;
	}
	return a > b;
}
static int d_lt(double a, double b) {
	return d_gt(b, a);
}
static double d_greatest(double a, double b) {
	return d_gt(b, a) ? b : a;
}

/* ---- the release's parameters and the constants the SQL derives from them (in Python, with
 * the same libm calls: math.log / math.exp are glibc's log / exp) ----------------------------- */
typedef struct {
	int set;               /* 0 until the first row (the spec comes with the rows) */
	int mode;              /* 0: direct unsigned, 1: direct signed, 2: owner totals */
	double lo, hi;         /* the clamp's bounds (modes 0, 1) */
	double theta, beta, mu, eps2;
	double ln2t;           /* math.log(2.0 / theta) */
	double ltm;            /* math.log(theta) + mu */
	double ib;             /* 1.0 / beta */
	double coef;           /* 2.0 * (1 + 1e-6) * _CMP_TOL */
	double one_tol;        /* 1 + _CMP_TOL */
	double cap_exp, cap_eps; /* math.exp(_MAX_EXPONENT), math.ldexp(eps2, 63) */
	double caps[6];        /* near_sql's lattice indices of the caps, d = -1, 0, 1 */
	double fast;           /* add_total's fast margin 1e-7/beta (2: no fast test) */
	double cap_min;        /* the smallest of caps */
	int cell_bits;         /* the cell table's mantissa bits (0: no table; see cell_of) */
} params;

static void params_from(params *P, const double *s) {
	P->mode = (int)s[0];
	P->lo = s[1];
	P->hi = s[2];
	P->theta = s[3];
	P->beta = s[4];
	P->mu = s[5];
	P->eps2 = s[6];
	P->ln2t = log(2.0 / P->theta);
	P->ltm = log(P->theta) + P->mu;
	P->ib = 1.0 / P->beta;
	P->coef = 2.0 * (1 + 1e-6) * CMP_TOL;
	P->one_tol = 1 + CMP_TOL;
	P->cap_exp = exp(MAX_EXPONENT);
	P->cap_eps = ldexp(P->eps2, 63);
	/* Python: math.ceil((math.log(cap) - (math.log(theta) + mu)) / beta) + d */
	double capv[2] = {P->cap_exp, P->cap_eps};
	for (int i = 0; i < 2; i++) {
		double base = ceil((log(capv[i]) - (log(P->theta) + P->mu)) / P->beta);
		for (int d = -1; d <= 1; d++) {
			P->caps[3 * i + d + 1] = base + d;
		}
	}
	P->fast = 1e-7 / P->beta < 0.25 ? 1e-7 / P->beta : 2.0;
	/* the cell table (direct path only: one state per thread): cells of relative width
	 * 2^-cell_bits at most half the spacing e^beta - 1 of the breakpoints, so a cell holds at
	 * most one breakpoint of k and one of m besides its start; none below beta ~ 0.002 */
	P->cell_bits = 0;
	if (P->mode != 2) {
		for (int nb = 1; nb <= 10 && !P->cell_bits; nb++) {
			P->cell_bits = ldexp(1.0, -nb) < expm1(P->beta) / 2 - 1e-5 ? nb : 0;
		}
	}
	P->cap_min = P->caps[0];
	for (int i = 1; i < 6; i++) {
		P->cap_min = P->caps[i] < P->cap_min ? P->caps[i] : P->cap_min;
	}
	P->set = 1;
}

/* ---- the hash table of buckets ---------------------------------------------------------- */
/* A slot is one 64-byte cache line. Its key: kp = 2k + p (the part p in the low bit; |k| < 2^62
 * is checked before), m, and e (0.0 for every total that is not near a boundary: never NaN,
 * never -0). m = EMPTY: a free slot; m = NULLKEY: the bucket of the totals whose k, m are SQL's
 * NULL (kp = p). */
#define EMPTY INT64_MIN
#define NULLKEY INT64_MAX
typedef struct {
	int64_t kp, m;
	double e;
	double n, inv, tot, lo, hi;
} bucket;

#define FRONT 2048
typedef struct {
	params P;
	bucket *slots;   /* NULL until the first row */
	uint64_t cap;    /* a power of two */
	uint64_t size;
	/* a direct-mapped cache in front of the table for the far totals (e = 0): the index + 1
	 * of the slot last found for (kp, m parity), 0: none (reset when the table grows) */
	uint32_t *front;  /* FRONT entries, allocated when the table reaches FRONT_CAP slots */
	struct cell *cells; /* 1024 << cell_bits cells (totals >= 1), allocated at the first */
} state;


static uint64_t bits_of(double x) {
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static uint64_t mix(uint64_t h) { /* splitmix64's finaliser */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

/* cheap on the common key (e = 0): two multiplies (k and m differ by an almost constant
 * offset, so they are combined before the second multiply, whose high bits are folded down);
 * e mixed in only for a near total */
static uint64_t hash_key(int64_t kp, int64_t m, double e) {
	uint64_t h = ((uint64_t)kp * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)m;
	if (e != 0.0) {
		h ^= mix(bits_of(e));
	}
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

/* The slot of key (kp, m, e), inserted empty when absent (n = 0, lo = +inf, hi = -inf);
 * NULL when out of memory. */
static bucket *find_slot(state *S, int64_t kp, int64_t m, double e);

/* A state starts with 8 slots (512 bytes) and the front cache comes at 256: the grouped path
 * has one state per group and thread, and 24 KiB each (256 slots and the cache at once), outside
 * DuckDB's memory_limit, took 9 GB for 200 000 groups (red-team finding h64native-3). */
#define FIRST_CAP 8
#define FRONT_CAP 256
static int grow(state *S) {
	uint64_t cap = S->cap ? 2 * S->cap : FIRST_CAP;
	if (cap >= FRONT_CAP && !S->front && !(S->front = (uint32_t *)malloc(FRONT * sizeof(uint32_t)))) {
		return 0;
	}
	bucket *slots = (bucket *)aligned_alloc(64, cap * sizeof(bucket));
	if (!slots) {
		return 0;
	}
	for (uint64_t i = 0; i < cap; i++) {
		slots[i].m = EMPTY;
	}
	bucket *old = S->slots;
	uint64_t old_cap = S->cap;
	S->slots = slots;
	S->cap = cap;
	S->size = 0;
	for (uint64_t i = 0; i < old_cap; i++) {
		if (old[i].m != EMPTY) {
			bucket *b = find_slot(S, old[i].kp, old[i].m, old[i].e);
			*b = old[i]; /* cap > 2·size: there is always room */
		}
	}
	free(old);
	if (S->front) {
		memset(S->front, 0, FRONT * sizeof(uint32_t));
	}
	return 1;
}

/* find_slot for a far total (e = 0) through the front cache */
static inline bucket *find_far(state *S, int64_t kp, int64_t m) {
	if (!S->slots && !grow(S)) {
		return NULL;
	}
	if (!S->front) { /* a small table: no cache in front of it */
		return find_slot(S, kp, m, 0.0);
	}
	uint32_t *f = &S->front[(((uint64_t)kp << 1) | ((uint64_t)m & 1)) & (FRONT - 1)];
	if (*f) {
		bucket *b = &S->slots[*f - 1];
		if (b->kp == kp && b->m == m && bits_of(b->e) == 0) {
			return b;
		}
	}
	bucket *b = find_slot(S, kp, m, 0.0);
	if (b) {
		*f = (uint32_t)(b - S->slots) + 1;
	}
	return b;
}

static bucket *find_slot(state *S, int64_t kp, int64_t m, double e) {
	if (2 * (S->size + 1) > S->cap && !grow(S)) {
		return NULL;
	}
	uint64_t mask = S->cap - 1;
	uint64_t i = hash_key(kp, m, e) & mask;
	for (;;) { /* the table is at most half full: the probe ends */
		bucket *b = &S->slots[i];
		if (b->m == m && b->kp == kp && bits_of(b->e) == bits_of(e)) {
			return b;
		}
		if (b->m == EMPTY) {
			b->kp = kp;
			b->m = m;
			b->e = e;
			b->n = 0.0;
			b->inv = 0.0;
			b->tot = 0.0;
			b->lo = INFINITY;
			b->hi = -INFINITY;
			S->size++;
			return b;
		}
		i = (i + 1) & mask;
	}
}

/* ---- the cell table: the keys of a total >= 1 without its logarithm ------------------------
 * Cell i holds the totals whose double has exponent 1023 + (i >> b) and top b mantissa bits
 * i mod 2^b (b = cell_bits). At its first use a cell computes, with the SQL's formula at its
 * start lo, the keys k0, m0 there, and the breakpoints around: k becomes k0 + 1 above
 * nk = exp((k0 + 1)·beta - ln(2/theta)) and m becomes m0 + 1 above nm = exp(m0·beta + ltm)
 * (the values where fk, fm cross a whole number), the previous ones pk, pm. A total c of the
 * cell farther than a relative 1e-6 from each of them has k = k0 + (c > nk), m = m0 + (c > nm)
 * exactly (exp and log err by ~1e-16, the cell is narrower than the breakpoints' spacing), and
 * its u, v (add_total) are then farther than 1e-7/beta from a whole number: the fast test holds,
 * so it is not near unless m reaches the caps (tested). Any other total takes the logarithm. */
struct cell {
	int64_t k0, m0;
	double nk, nm;
	double safe_lo;        /* (1 + 1e-6)·max(pk, pm): a total must lie above */
	double nk_lo, nk_hi;   /* the window of nk a total must lie outside */
	double nm_lo, nm_hi;
	int32_t ready;
};

#define CELL_WINDOW 1e-6

static void cell_init(const params *P, uint64_t i, struct cell *T) {
	int nb = P->cell_bits;
	uint64_t bits = (i + ((uint64_t)1023 << nb)) << (52 - nb);
	double lo;
	memcpy(&lo, &bits, sizeof lo);
	double l = log(lo);
	double k0 = ceil((l + P->ln2t) * P->ib) - 1, m0 = ceil((l - P->ltm) * P->ib);
	double pk = exp(k0 * P->beta - P->ln2t), nk = exp((k0 + 1) * P->beta - P->ln2t);
	double pm = exp((m0 - 1) * P->beta + P->ltm), nm = exp(m0 * P->beta + P->ltm);
	T->k0 = (int64_t)k0;
	T->m0 = (int64_t)m0;
	T->nk = nk;
	T->nm = nm;
	T->safe_lo = (pk > pm ? pk : pm) * (1 + CELL_WINDOW);
	T->nk_lo = nk * (1 - CELL_WINDOW);
	T->nk_hi = nk * (1 + CELL_WINDOW);
	T->nm_lo = nm * (1 - CELL_WINDOW);
	T->nm_hi = nm * (1 + CELL_WINDOW);
	T->ready = 1;
}

/* The cell of a finite total c >= 1 (NULL: out of memory); the table and the cell are filled at
 * their first use, out of the per-row path. */
static struct cell *cell_slow(state *S, uint64_t i) {
	if (!S->cells && !(S->cells = (struct cell *)calloc((size_t)1024 << S->P.cell_bits,
	                                                     sizeof(struct cell)))) {
		return NULL;
	}
	cell_init(&S->P, i, &S->cells[i]);
	return &S->cells[i];
}

static inline struct cell *cell_of(state *S, double c) {
	int nb = S->P.cell_bits;
	uint64_t i = (bits_of(c) >> (52 - nb)) - ((uint64_t)1023 << nb);
	if (S->cells && S->cells[i].ready) {
		return &S->cells[i];
	}
	return cell_slow(S, i);
}

/* count(*), sum(1.0 / c), sum(c), min(c), max(c) of a bucket of positive finite totals */
static void add_to(bucket *b, double c) {
	b->lo = c < b->lo ? c : b->lo;
	b->hi = c > b->hi ? c : b->hi;
	b->n += 1.0;
	b->inv += 1.0 / c;
	b->tot += c;
}

/* the same for a total outside the buckets (NaN, ±inf, negative): DuckDB's order for min/max */
static void add_rest(bucket *b, double c) {
	if (b->n == 0.0) {
		b->lo = c;
		b->hi = c;
	} else {
		b->lo = d_lt(c, b->lo) ? c : b->lo;
		b->hi = d_gt(c, b->hi) ? c : b->hi;
	}
	b->n += 1.0;
	b->inv += 1.0 / c;
	b->tot += c;
}

/* ---- the SQL's keys ------------------------------------------------------------------------ */

/* near_key_sql's kg: ceil(ln(greatest((2.0 * c - tol) / one_tol, 1e-300) / th) * ib) - 1 */
static double key_kg(const params *P, double c) {
	double g = d_greatest((2.0 * c - CMP_TOL) / P->one_tol, 1e-300);
	return ceil(log(g / P->theta) * P->ib) - 1;
}

/* near_key_sql's tau(x) = exp(x * b) * th */
static double tau(const params *P, double x) {
	return exp(x * P->beta) * P->theta;
}

/* near_key_sql for a positive finite c with estimates k, m */
static double near_key(const params *P, double c, double k, double m) {
	double kg = key_kg(P, c);
	double B[8];
	B[0] = tau(P, k) / 2.0;
	B[1] = tau(P, k + 1) / 2.0;
	B[2] = (tau(P, k - 1) * P->one_tol + CMP_TOL) / 2.0;
	B[3] = (tau(P, k) * P->one_tol + CMP_TOL) / 2.0;
	B[4] = (tau(P, kg) * P->one_tol + CMP_TOL) / 2.0;
	B[5] = (tau(P, kg + 1) * P->one_tol + CMP_TOL) / 2.0;
	B[6] = exp(P->ltm + P->beta * (m - 1));
	B[7] = exp(P->ltm + P->beta * m);
	int window = 0, cell = 0;
	for (int i = 0; i < 8; i++) {
		window |= fabs(c - B[i]) <= WINDOW * c;
		cell += d_gt(c, B[i]);
	}
	if (window) {
		return c;
	}
	cell += d_gt(c, P->cap_exp) + d_gt(c, P->cap_eps);
	return -1 - (kg * 16 + cell);
}

/* provenance.clamp.clamp_sql's rule: NaN, ±inf outside the bounds become NULL (returns 0) */
static inline int clamp(const params *P, double x, double *w) {
	if (x >= P->lo && x <= P->hi) { /* inside the bounds (NaN fails): the ELSE branch */
		*w = x;
		return 1;
	}
	if (d_gt(x, P->hi)) {
		if (!d_lt(x, INFINITY)) {
			return 0;
		}
		*w = P->hi;
	} else if (d_lt(x, P->lo)) {
		if (!d_gt(x, -INFINITY)) {
			return 0;
		}
		*w = P->lo;
	} else {
		*w = x;
	}
	return 1;
}

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
#include "pdp_buckets.c"
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
#include "pdp_buckets.c"
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
#else /* PDP_LOOP: the per-row code, included twice above */

/* One nonzero total c of part p: its bucket row updated (0: out of memory, -1: an estimate
 * beyond int64, which native_pass_sql's bound on beta rules out). */
static inline int PDP_NAME(add_total)(state *S, int32_t p, double c) {
	const params *P = &S->P;
	bucket *b;
	if (P->cell_bits && c >= 1.0 && c < INFINITY) { /* the cell table, when it decides */
		struct cell *T = cell_of(S, c);
		if (!T) {
			return 0;
		}
		if (c > T->safe_lo && !(c >= T->nk_lo && c <= T->nk_hi) && !(c >= T->nm_lo && c <= T->nm_hi)) {
			int64_t k = T->k0 + (c > T->nk), m = T->m0 + (c > T->nm);
			if ((double)m < P->cap_min) {
				b = find_far(S, (int64_t)((uint64_t)k * 2u + (uint64_t)p), m);
				if (!b) {
					return 0;
				}
				add_to(b, c);
				return 1;
			}
		}
	}
	if (c > 0 && c < INFINITY) { /* bucket_sql's ln guard (NaN fails both) */
		double l = log(c);
		double fk = (l + P->ln2t) * P->ib; /* near_sql's fk, bucket_sql's k before ceil */
		double fm = (l - P->ltm) * P->ib;
		double cfk = PDP_CEIL(fk), cfm = PDP_CEIL(fm);
		double k = cfk - 1, m = cfm;
		/* near_sql's predicate. Fast test first: with u = fk - ceil(fk), v = fm - ceil(fm) in
		 * (-1, 0] (exact differences), a total c >= 1 whose u, v lie farther than
		 * fast = 1e-7/beta from both ends has dk, dm in [1e-7, beta - 1e-7] up to a relative
		 * 2^-52, so every term of the predicate is false (dk*c >= 1e-7*c > coef*(c + 0.5),
		 * dk < beta - 1e-9, 1e-9 < dm < beta - 1e-9, c >= 1e-8) but the caps, tested too.
		 * Any other total evaluates the predicate itself, term by term. */
		double u = fk - cfk, v = fm - cfm;
		int near;
		if (c >= 1.0 && u < -P->fast && u > P->fast - 1.0 && v < -P->fast && v > P->fast - 1.0) {
			near = !(cfm < P->cap_min) &&
			       ((fabs(cfm - P->caps[1]) <= 1.0) | (fabs(cfm - P->caps[4]) <= 1.0));
		} else {
			double dk = P->beta * (fk - cfk + 1), dm = P->beta * (fm - cfm + 1);
			near = (dk * c <= P->coef * (c + 0.5)) | (dk > P->beta - 1e-9) | (dm < 1e-9) |
			       (dm > P->beta - 1e-9) | (c < 1e-8);
			for (int i = 0; i < 6; i++) {
				near |= cfm == P->caps[i];
			}
		}
		if (!(fabs(k) < 0x1p62 && fabs(m) < 0x1p62)) {
			return -1; /* beta below ~1e-15: not an int64 key (the caller takes the SQL pass) */
		}
		int64_t kp = (int64_t)((uint64_t)(int64_t)k * 2u + (uint64_t)p);
		b = near ? find_slot(S, kp, (int64_t)m, near_key(P, c, k, m)) : find_far(S, kp, (int64_t)m);
		if (!b) {
			return 0;
		}
		add_to(b, c);
		return 1;
	}
	/* ln NULL: k, m NULL; near_sql is NULL except its term c < 1e-8 (negative totals), and
	 * near_key_sql then has every bound NULL: no window, cell = the caps below c */
	double e = 0.0;
	if (d_lt(c, 1e-8)) {
		int cell = d_gt(c, P->cap_exp) + d_gt(c, P->cap_eps);
		e = -1 - (key_kg(P, c) * 16 + cell);
	}
	b = find_slot(S, p, NULLKEY, e);
	if (!b) {
		return 0;
	}
	add_rest(b, c);
	return 1;
}

static void PDP_NAME(update)(duckdb_function_info info, duckdb_data_chunk input, duckdb_aggregate_state *states) {
	idx_t n = duckdb_data_chunk_get_size(input);
	idx_t ncols = duckdb_data_chunk_get_column_count(input);
	if (n == 0) {
		return;
	}
	double spec[8];
	params P;
	if (!read_spec(duckdb_data_chunk_get_vector(input, ncols - 1), 0, spec)) {
		duckdb_aggregate_function_set_error(info, "pdp_buckets: the spec must be a 64-byte BLOB");
		return;
	}
	params_from(&P, spec);
	if (ncols == 3 && P.mode != 2) {
		duckdb_aggregate_function_set_error(info, "pdp_buckets: two totals need spec mode 2");
		return;
	}
	int nparts = ncols == 3 ? 2 : 1;
	const double *col[2];
	uint64_t *valid[2];
	for (int j = 0; j < nparts; j++) {
		duckdb_vector v = duckdb_data_chunk_get_vector(input, j);
		col[j] = (const double *)duckdb_vector_get_data(v);
		valid[j] = duckdb_vector_get_validity(v);
	}
	for (idx_t i = 0; i < n; i++) {
		state *S = (state *)states[i];
		if (!S->P.set) {
			S->P = P;
		}
		for (int j = 0; j < nparts; j++) {
			if (!is_valid(valid[j], i)) {
				continue; /* NULL: the SQL's w <> 0 / c <> 0 drops it */
			}
			double x = col[j][i], w;
			int32_t p = j;
			if (P.mode == 2) {
				w = x;
			} else if (!clamp(&P, x, &w)) {
				continue;
			}
			if (!(w != 0)) { /* w <> 0 (NaN <> 0 holds in DuckDB as in C; -0 = 0) */
				continue;
			}
			if (P.mode == 1) { /* (w < 0)::INTEGER, abs(w) */
				p = w < 0;
				w = fabs(w);
			}
			int ok = PDP_NAME(add_total)(S, p, w);
			if (ok != 1) {
				duckdb_aggregate_function_set_error(info, ok == 0 ? "pdp_buckets: out of memory"
				                                                  : "pdp_buckets: beta too small");
				return;
			}
		}
	}
}

#endif /* PDP_LOOP */
