/* pdp_fine.h (part of pdp_buckets.c, which includes it): the fine cells of the direct path's
 * block code (pdp_rows.h, fast_rows).
 *
 * A fine cell holds the totals whose double has exponent 1023 + b (1 <= c < 2^FINE_BINADES) and
 * top fine_bits mantissa bits i: 2^fine_bits cells a binade, at least 64 to a spacing e^beta - 1
 * of the breakpoints of k and of m (params_from). One flat table of entries (uint16) indexed by
 * (p·FINE_BINADES + b) << fine_bits | i (calloc'd: the pages of the binades no total reaches
 * stay untouched), 0 until the binade's page is built at its first total; then each cell's
 * entry is either the accumulator of its far bucket (p, k0, m0, e = 0) — when the cell
 * lies wholly above (1 + 1e-6)·max(pk, pm) and below (1 - 1e-6)·min(nk, nm) for cell_at's
 * breakpoints, so that every total in it has k = k0, m = m0 and is not near (the per-row cell
 * table's argument, pdp_table.h, for a whole cell at once) and m0 is below the caps — or
 * SLOW_CELL: a breakpoint at or near the cell, the caps, or no accumulator left; its totals take
 * the per-row code. A page costs a comparison a cell and cell_at (one log, four exp) only where
 * the key changes. A bucket has FINE_COPIES accumulators, row i of a block adding to copy
 * i mod FINE_COPIES from its own instructions (pdp_rows.h): consecutive totals of one bucket
 * (sorted or clustered input) then make no chain of dependent memory updates, which the CPU
 * serialises (10^7 sorted salaries: 3.4 -> 1.8 ns a row; random ones 2.6 -> 2.5; with 32-byte
 * accumulators, 1, 2, 4 copies: random 2.69, 2.70, 2.50, sorted 4.16, 2.47, 1.60 ns; 8: 2.75,
 * 1.71). The accumulators (count, sum(c), sum(1/c)) are added into the hash table's buckets
 * before a combine and the finalize (fine_fold), so the keys, counts and sums are the per-row
 * code's, the sums up to the order of addition.
 *
 * No min or max a row (10^7 random salaries, AVX-512 variant, medians at load ~12: 3.18 ->
 * 2.48 ns a row, sorted 1.81 -> 1.51; benchmarks/engine_speed_measured.md): an accumulator reports as its bucket's (lo, hi) the range [rlo, rhi] of the fine
 * cells mapped to it (their first and last doubles, recorded when a page is built), rhi lowered
 * to xhi, the largest total of its part that the block code keyed (the first stage's masked
 * vector max and min of the keyed w: exact, in every variant the same; the exact minimum too
 * cost up to ~0.5 ns a row in the scalar variants and is not needed). Why Python reads the same
 * from it as from the exact extremes (buckets.delta_buckets, clamped_buckets, Buckets.check;
 * the near and NULL-key buckets keep their exact extremes):
 *  - it bounds them: every total of the accumulator lies in one of its cells and is a keyed
 *    total of its part, so lo <= its min, its max <= hi;
 *  - it lies strictly inside the bucket's boundaries: every cell mapped to (k, m) lies in
 *    ((1 + 1e-6)·max(pk, pm), (1 - 1e-6)·min(nk, nm)), where pk = W_k and nk = W_{k+1}
 *    (theta·e^{k·beta}/2) and pm, nm the lattice points of m - 1 and m (theta·e^{mu + beta·m}),
 *    computed with exp and log to a relative ~1e-13 at most (|arguments| <= ~750), as numpy's
 *    W_j = exp(j·beta)·theta/2 and release_delta_hat's exp((ln theta + mu) + beta·j) are: far
 *    less than the 1e-6 margin. It lies above the greedy twin gb_k = W_k·(1 + 1e-9) + 0.5e-9
 *    too: for W_k >= 0.99 the margin 1e-6·W_k exceeds 1e-9·W_k + 0.5e-9, below it gb_k < 1 <= lo
 *    (cells start at 1). So no threshold W_j, gb_j and no lattice point lies in [lo, hi], nor a
 *    cap of delta-hat (m0 is below the caps' indices): for every delta-hat and every j the
 *    accumulator's range and its totals fall on the same side, and delta_buckets' "clean" and
 *    clamped_buckets' "below"/"above" — conjunctions over a bucket's (and a merged key's) lo and
 *    hi, each monotone in them — are what the exact extremes give (the per-row code's totals
 *    of the same bucket keep theirs);
 *  - each part's largest total T is exact: if it was keyed here, its accumulator's rhi >= T and
 *    its state's xhi = T, so that hi is T, and every hi is at most T: max(hi) is the largest
 *    total (search_range(2·max c), Buckets.check).
 * Which cells a state mapped (its pages) depends on the rows DuckDB gave its thread: so do a far
 * bucket's reported lo and hi, never what they classify as, nor the release. */
#define FINE_BINADES 64   /* totals 1 <= c < 2^FINE_BINADES (the others take the per-row code) */
#define SLOW_CELL 0xFFFFu /* the per-row code keys the totals of this cell */
#define MAX_ACC 65534u    /* accumulators a state (a cell's entry is its index + 1) */
#define FINE_MIN_ROWS 16384 /* the rows a state takes by the per-row code first (pdp_rows.h) */
#ifndef FINE_COPIES
#define FINE_COPIES 4 /* accumulators a bucket: row i of a block adds to copy i mod 4 */
#endif

/* 4 lanes of GCC's vector extensions (the AVX2 variant's first stage, pdp_rows.h) */
typedef double v4d __attribute__((vector_size(32)));
typedef uint64_t v4u __attribute__((vector_size(32)));
typedef int64_t v4i __attribute__((vector_size(32)));
typedef uint32_t v4w __attribute__((vector_size(16)));
/* 8 lanes (the AVX-512 variant's) */
typedef double v8d __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));
typedef uint32_t v8w __attribute__((vector_size(32)));

/* half a cache line: count, sum(c), sum(1/c) and a pad, one 4-lane add a total (pdp_rows.h) */
struct __attribute__((aligned(32))) facc {
	double n, tot, inv, pad;
};
_Static_assert(sizeof(struct facc) == 32, "struct facc: 32 bytes, two a cache line");

/* an accumulator's bucket (kp = 2·k + p, m; e = 0) and the range [rlo, rhi] of the fine cells
 * mapped to it (fine_page: the first and the last double of each), read at a fold only */
struct fkey {
	int64_t kp, m;
	double rlo, rhi;
};

static double from_bits(uint64_t u) {
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* the accumulators of the far bucket (kp, m): their index + 1 (copy j of accumulator a is
 * acc[a·FINE_COPIES + j], its key keys[a]); SLOW_CELL when MAX_ACC are in use; 0: out of memory */
static uint32_t acc_of(state *S, int64_t kp, int64_t m) {
	if (2 * ((uint64_t)S->acc_n + 1) > S->amap_cap) { /* the map at most half full */
		uint32_t cap = S->amap_cap ? 2 * S->amap_cap : 64;
		uint32_t *map = (uint32_t *)calloc(cap, sizeof(uint32_t));
		if (!map) {
			return 0;
		}
		for (uint32_t a = 0; a < S->acc_n; a++) {
			uint64_t i = hash_key(S->keys[a].kp, S->keys[a].m, 0.0) & (cap - 1);
			while (map[i]) {
				i = (i + 1) & (cap - 1);
			}
			map[i] = a + 1;
		}
		free(S->amap);
		S->amap = map;
		S->amap_cap = cap;
	}
	uint64_t mask = S->amap_cap - 1, i = hash_key(kp, m, 0.0) & mask;
	for (; S->amap[i]; i = (i + 1) & mask) {
		const struct fkey *K = &S->keys[S->amap[i] - 1];
		if (K->kp == kp && K->m == m) {
			return S->amap[i];
		}
	}
	if (S->acc_n >= MAX_ACC) {
		return SLOW_CELL;
	}
	if (S->acc_n == S->acc_cap) {
		uint32_t cap = S->acc_cap ? 2 * S->acc_cap : 64;
		struct facc *acc = (struct facc *)aligned_alloc(64, (size_t)cap * FINE_COPIES * sizeof(struct facc));
		struct fkey *keys = (struct fkey *)malloc((size_t)cap * sizeof(struct fkey));
		if (!acc || !keys) {
			free(acc);
			free(keys);
			return 0;
		}
		if (S->acc_n) {
			memcpy(acc, S->acc, (size_t)S->acc_n * FINE_COPIES * sizeof(struct facc));
			memcpy(keys, S->keys, (size_t)S->acc_n * sizeof(struct fkey));
		}
		free(S->acc);
		free(S->keys);
		S->acc = acc;
		S->keys = keys;
		S->acc_cap = cap;
	}
	memset(&S->acc[S->acc_n * FINE_COPIES], 0, FINE_COPIES * sizeof(struct facc));
	S->keys[S->acc_n] = (struct fkey){kp, m, INFINITY, -INFINITY};
	S->amap[i] = ++S->acc_n;
	return S->acc_n;
}

/* the flat table's size in entries, its last (one past the cells) SLOW_CELL: where the block
 * code sends every row the fine cells do not key */
static size_t fine_size(const params *P) {
	return ((size_t)2 * FINE_BINADES << P->fine_bits) + 1;
}

/* the page of pb = p·FINE_BINADES + b built into the flat table (0: out of memory); each
 * accumulator's range [rlo, rhi] widened to the cells mapped to it */
static int fine_page(state *S, uint32_t pb) {
	const params *P = &S->P;
	int nb = P->fine_bits;
	uint16_t *E = S->flat + ((size_t)pb << nb);
	uint64_t p = pb / FINE_BINADES, step = (uint64_t)1 << (52 - nb);
	uint64_t bits = (uint64_t)(1023 + pb % FINE_BINADES) << 52;
	struct cell T;
	int have = 0;
	int64_t lkp = 0, lm = 0;
	uint32_t lid = 0;
	for (uint64_t i = 0; i < ((uint64_t)1 << nb); i++, bits += step) {
		double a = from_bits(bits), end = from_bits(bits + step); /* the cell [a, end) */
		int pure = have && a > T.safe_lo && end < T.nk_lo && end < T.nm_lo;
		if (!pure) { /* the keys where this cell starts */
			cell_at(P, a, &T);
			have = 1;
			pure = a > T.safe_lo && end < T.nk_lo && end < T.nm_lo;
		}
		uint32_t id = SLOW_CELL;
		if (pure && (double)T.m0 < P->cap_min && fabs((double)T.k0) < 0x1p61) {
			int64_t kp = (int64_t)((uint64_t)T.k0 * 2u + p);
			if (!lid || kp != lkp || T.m0 != lm) {
				if (!(lid = acc_of(S, kp, T.m0))) {
					return 0;
				}
				lkp = kp;
				lm = T.m0;
			}
			id = lid;
			if (id != SLOW_CELL) { /* the cell's first and last double */
				struct fkey *K = &S->keys[id - 1];
				double last = from_bits(bits + step - 1);
				K->rlo = a < K->rlo ? a : K->rlo;
				K->rhi = last > K->rhi ? last : K->rhi;
			}
		}
		E[i] = (uint16_t)id;
	}
	return 1;
}

/* the accumulators added into their buckets, then emptied (0: out of memory). A far bucket's
 * min and max from an accumulator: its cells' range [rlo, rhi], rhi lowered to the largest
 * total xhi of its part that the block code keyed (see above: they bound its totals and
 * classify as their exact extremes do; the part's largest total is exact) */
static int fine_fold(state *S) {
	for (uint32_t a = 0; a < S->acc_n * FINE_COPIES; a++) {
		struct facc *A = &S->acc[a];
		if (A->n == 0.0) {
			continue;
		}
		const struct fkey *K = &S->keys[a / FINE_COPIES];
		int p = (int)(K->kp & 1);
		bucket *b = find_far(S, K->kp, K->m);
		if (!b) {
			return 0;
		}
		/* totals >= 1 only (no NaN): a new bucket's lo = +inf, hi = -inf give way */
		double lo = K->rlo, hi = K->rhi < S->xhi[p] ? K->rhi : S->xhi[p];
		b->lo = lo < b->lo ? lo : b->lo;
		b->hi = hi > b->hi ? hi : b->hi;
		b->n += A->n;
		b->inv += A->inv;
		b->tot += A->tot;
		A->n = A->tot = A->inv = 0.0;
	}
	return 1;
}

static void fine_free(state *S) {
	free(S->flat);
	free(S->acc);
	free(S->keys);
	free(S->amap);
	S->flat = NULL;
	S->acc = NULL;
	S->keys = NULL;
	S->amap = NULL;
	S->acc_n = S->acc_cap = S->amap_cap = 0;
}
