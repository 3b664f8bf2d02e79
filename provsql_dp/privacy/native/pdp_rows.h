/* pdp_rows.h (part of pdp_buckets.c): the per-row code, which pdp_buckets.c includes once per
 * variant (PDP_NAME, PDP_CEIL: see there). */

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

/* One value x of column j (not NULL) of a state whose P is set: the clamp, w <> 0, the sign
 * (the direct path) and add_total's codes; 1 for a value the SQL drops. */
static inline int PDP_NAME(one_value)(state *S, double x, int32_t j) {
	const params *P = &S->P;
	double w;
	int32_t p = j;
	if (P->mode == 2) {
		w = x;
	} else if (!clamp(P, x, &w)) {
		return 1;
	}
	if (!(w != 0)) { /* w <> 0 (NaN <> 0 holds in DuckDB as in C; -0 = 0) */
		return 1;
	}
	if (P->mode == 1) { /* (w < 0)::INTEGER, abs(w) */
		p = w < 0;
		w = fabs(w);
	}
	return PDP_NAME(add_total)(S, p, w);
}

/* The direct path's block code (pdp_fine.h): the rows x[0, n) of one state S (P set, fine_bits
 * > 0; valid: DuckDB's validity mask or NULL) by blocks of FINE_BLOCK. First, without a branch
 * (4 rows at a time in the AVX2 variant, 8 in the AVX-512 one: PDP_VEC), each row's entry in the
 * flat table — its fine cell, or the last entry (SLOW_CELL) for a row the cells do not key:
 * NULL, outside the bounds (the clamp), |w| < 1 (zero, subnormal), |w| >= 2^FINE_BINADES (inf,
 * NaN), or negative in mode 0 — and 1/|w|, and the largest keyed |w| of each part (a vector
 * max and min of the keyed w: S->xhi); then each row whose cell has
 * an accumulator is added to it (its page built at its binade's first row), every other row
 * takes the per-row code, one_value. Returns add_total's codes. */
#define FINE_BLOCK 256
_Static_assert(FINE_COPIES == 1 || FINE_COPIES == 2 || FINE_COPIES == 4, "FINE_COPIES: 1, 2 or 4");
/* row r of the block into copy j of its accumulators (count, sum(c), sum(1/c) in one 4-lane
 * add), or onto the list for after the block */
#undef PDP_ADD
#undef PDP_INV
#if PDP_VEC == 2
/* the AVX-512 variant: the row's (1, c, 1/c, 0) one zero-masked permute of its pair (c, 1/c)
 * from the first stage and a blend, added by one 4-lane add and stored whole (a masked add into
 * the accumulator, which GCC makes a masked store, forwards to the next load of the same
 * accumulator late: 10^7 sorted salaries 2.22 against 1.54 ns a row) */
#define PDP_INV(r) ci[2 * (r) + 1]
#define PDP_ADD(r, j)                                                                                    \
	do {                                                                                             \
		uint32_t e_ = flat[key[r]];                                                              \
		if (e_ - 1 >= SLOW_CELL - 1) { /* 0 (a page to build) or SLOW_CELL */                    \
			later[nl++] = (uint16_t)(r);                                                     \
		} else {                                                                                 \
			double *A_ = &acc[(e_ - 1) * FINE_COPIES + (j)].n;                               \
			__m128d w_ = _mm_loadu_pd(ci + 2 * (r)); /* (c, 1/c) */                          \
			__m256d v_ = _mm256_maskz_permutexvar_pd(0x6, pick_, _mm256_castpd128_pd256(w_)); \
			_mm256_store_pd(A_, _mm256_add_pd(_mm256_load_pd(A_), _mm256_mask_blend_pd(0x1, v_, one_))); \
		}                                                                                        \
	} while (0)
#else
#define PDP_INV(r) inv[r]
#define PDP_ADD(r, j)                                                                                    \
	do {                                                                                             \
		uint32_t e_ = flat[key[r]];                                                              \
		if (e_ - 1 >= SLOW_CELL - 1) { /* 0 (a page to build) or SLOW_CELL */                    \
			later[nl++] = (uint16_t)(r);                                                     \
		} else {                                                                                 \
			struct facc *A_ = &acc[(e_ - 1) * FINE_COPIES + (j)];                            \
			v4d t_, add_ = {1.0, fabs(xb[r]), PDP_INV(r), 0.0}; /* n, tot, inv (pad + 0) */     \
			memcpy(&t_, &A_->n, sizeof t_);                                                  \
			t_ += add_;                                                                      \
			memcpy(&A_->n, &t_, sizeof t_);                                                  \
		}                                                                                        \
	} while (0)
#endif
static int PDP_NAME(fast_rows)(state *S, const double *x, const uint64_t *valid, idx_t n) {
	const params *P = &S->P;
	const int nb = P->fine_bits;
	const uint64_t cmask = ((uint64_t)1 << nb) - 1, last = fine_size(P) - 1;
	const double lo = P->lo, hi = P->hi, top = 0x1p64;
	const double floor = P->mode == 1 ? -INFINITY : 1.0; /* mode 0: no split, w >= 1 */
	uint32_t key[FINE_BLOCK];
	/* the largest keyed |w| of parts 0 and 1 in this call: from the scalar rows' max and min of
	 * the keyed w (sh: part 0's when > 0; sl: minus part 1's when < 0), the NULL-aware ones
	 * (vh: with a validity mask, recomputed from the keys), the vector rows' below */
	double sh = -INFINITY, sl = INFINITY, vh[2] = {-INFINITY, -INFINITY};
#if PDP_VEC == 2
	double ci[2 * FINE_BLOCK] __attribute__((aligned(64))); /* (c, 1/c) a row */
	const __m256d one_ = _mm256_set1_pd(1.0);
	const __m256i pick_ = _mm256_set_epi64x(0, 1, 0, 0); /* (0, c, 1/c, 0): lane 0 becomes 1 */
	const __m512d lo_ = _mm512_set1_pd(lo), hi_ = _mm512_set1_pd(hi), floor_ = _mm512_set1_pd(floor);
	const __m512d one8_ = _mm512_set1_pd(1.0), top_ = _mm512_set1_pd(top);
	const __m512i abs_ = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFLL);
	const __m512i bias_ = _mm512_set1_epi64(1023), cmask_ = _mm512_set1_epi64((long long)cmask);
	const __m512i last_ = _mm512_set1_epi64((long long)last);
	const __m128i nb_ = _mm_cvtsi32_si128(nb), nbr_ = _mm_cvtsi32_si128(52 - nb);
	__m512d hv_ = _mm512_set1_pd(-INFINITY), lv_ = _mm512_set1_pd(INFINITY);
#else
	double inv[FINE_BLOCK];
#if defined(PDP_VEC)
	/* over the keyed lanes: max v (part 0's max when > 0), min v (minus part 1's max when
	 * < 0) */
	const __m256d pinf_ = _mm256_set1_pd(INFINITY), ninf_ = _mm256_set1_pd(-INFINITY);
	__m256d hv_ = ninf_, lv_ = pinf_;
#endif
#endif
	if (!S->flat) {
		if (!(S->flat = (uint16_t *)calloc(last + 1, sizeof(uint16_t)))) {
			return 0;
		}
		S->flat[last] = SLOW_CELL;
		S->xhi[0] = S->xhi[1] = -INFINITY;
	}
	for (idx_t base = 0; base < n; base += FINE_BLOCK) {
		idx_t m = n - base < FINE_BLOCK ? n - base : FINE_BLOCK;
		const double *xb = x + base;
		idx_t i = 0;
#if PDP_VEC == 2
		for (; i + 8 <= m; i += 8) { /* 8 rows: as the 4-lane loop below in masks, (c, 1/c) interleaved */
			__m512d v = _mm512_loadu_pd(xb + i);
			__m512i vb = _mm512_castpd_si512(v), a = _mm512_and_si512(vb, abs_);
			__m512d c = _mm512_castsi512_pd(a);
			__mmask8 ok = _mm512_cmp_pd_mask(v, lo_, _CMP_GE_OQ);
			ok = _mm512_mask_cmp_pd_mask(ok, v, hi_, _CMP_LE_OQ);
			ok = _mm512_mask_cmp_pd_mask(ok, v, floor_, _CMP_GE_OQ);
			ok = _mm512_mask_cmp_pd_mask(ok, c, one8_, _CMP_GE_OQ);
			ok = _mm512_mask_cmp_pd_mask(ok, c, top_, _CMP_LT_OQ);
			__m512i k = _mm512_add_epi64(_mm512_slli_epi64(_mm512_srli_epi64(vb, 63), 6),
			                             _mm512_sub_epi64(_mm512_srli_epi64(a, 52), bias_));
			k = _mm512_or_si512(_mm512_sll_epi64(k, nb_), _mm512_and_si512(_mm512_srl_epi64(a, nbr_), cmask_));
			k = _mm512_mask_blend_epi64(ok, last_, k);
			_mm256_storeu_si256((__m256i *)(key + i), _mm512_cvtepi64_epi32(k));
			__m512d r = _mm512_div_pd(one8_, c);
			_mm512_store_pd(ci + 2 * i, _mm512_permutex2var_pd(c, _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), r));
			_mm512_store_pd(ci + 2 * i + 8, _mm512_permutex2var_pd(c, _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4), r));
			hv_ = _mm512_mask_max_pd(hv_, ok, hv_, v); /* over the keyed lanes */
			lv_ = _mm512_mask_min_pd(lv_, ok, lv_, v);
		}
#elif defined(PDP_VEC)
		for (; i + 4 <= m; i += 4) {
			v4d v;
			memcpy(&v, xb + i, sizeof v);
			v4u a = (v4u)v & 0x7FFFFFFFFFFFFFFFULL;
			v4d c = (v4d)a;
			v4i ok = (v >= lo) & (v <= hi) & (v >= floor) & (c >= 1.0) & (c < top);
			v4u k = ((((v4u)v >> 63) * FINE_BINADES + ((a >> 52) - 1023)) << nb) | ((a >> (52 - nb)) & cmask);
			k = (k & (v4u)ok) | (~(v4u)ok & last);
			v4w kw = __builtin_convertvector(k, v4w);
			memcpy(key + i, &kw, sizeof kw);
			v4d r = 1.0 / c;
			memcpy(inv + i, &r, sizeof r);
			/* blendv takes a lane's sign bit: ok's */
			hv_ = _mm256_max_pd(hv_, _mm256_blendv_pd(ninf_, (__m256d)v, (__m256d)ok));
			lv_ = _mm256_min_pd(lv_, _mm256_blendv_pd(pinf_, (__m256d)v, (__m256d)ok));
		}
#endif
		for (; i < m; i++) {
			double v = xb[i], c = fabs(v);
			uint64_t a = bits_of(c);
			int ok = (v >= lo) & (v <= hi) & (v >= floor) & (c >= 1.0) & (c < top);
			uint64_t k = (((bits_of(v) >> 63) * FINE_BINADES + ((a >> 52) - 1023)) << nb) | ((a >> (52 - nb)) & cmask);
			key[i] = (uint32_t)(ok ? k : last);
#if PDP_VEC == 2
			ci[2 * i] = c;
#endif
			PDP_INV(i) = 1.0 / c;
			double oh = ok ? v : -INFINITY, ol = ok ? v : INFINITY; /* the keyed w */
			sh = oh > sh ? oh : sh;
			sl = ol < sl ? ol : sl;
		}
		if (valid) { /* NULL rows unkeyed; the extremes from the keyed rows left */
			for (i = 0; i < m; i++) {
				if (!row_valid(valid, base + i)) {
					key[i] = (uint32_t)last;
				} else if (key[i] != last) {
					double c = fabs(xb[i]);
					int p = xb[i] < 0;
					vh[p] = c > vh[p] ? c : vh[p];
				}
			}
		}
		/* the rows the fine cells key, in a loop without a call; the others (a page not built
		 * yet, SLOW_CELL) after it */
		const uint16_t *flat = S->flat;
		struct facc *acc = S->acc;
		uint16_t later[FINE_BLOCK];
		int nl = 0;
		for (i = 0; i + FINE_COPIES <= m; i += FINE_COPIES) { /* copy j from its own instructions */
			PDP_ADD(i, 0);
#if FINE_COPIES > 1
			PDP_ADD(i + 1, 1);
#endif
#if FINE_COPIES > 2
			PDP_ADD(i + 2, 2);
			PDP_ADD(i + 3, 3);
#endif
		}
		for (; i < m; i++) {
			PDP_ADD(i, 0);
		}
		for (int l = 0; l < nl; l++) {
			i = later[l];
			uint32_t e = S->flat[key[i]];
			if (e == 0) { /* the binade's first row: its page, then the row again */
				if (!fine_page(S, key[i] >> nb)) {
					return 0;
				}
				e = S->flat[key[i]];
			}
			if (e != SLOW_CELL) {
				struct facc *A = &S->acc[(e - 1) * FINE_COPIES];
				A->n += 1.0;
				A->tot += fabs(xb[i]);
				A->inv += PDP_INV(i);
				continue;
			}
			if (valid && !row_valid(valid, base + i)) {
				continue; /* NULL: the SQL's w <> 0 drops it */
			}
			int ok = PDP_NAME(one_value)(S, xb[i], 0);
			if (ok != 1) {
				return ok;
			}
		}
	}
	/* the vector lanes' into sh, sl; then each part's largest */
#if PDP_VEC == 2
	sh = fmax(sh, _mm512_reduce_max_pd(hv_)); /* never NaN: the keyed lanes' w or +-inf */
	sl = fmin(sl, _mm512_reduce_min_pd(lv_));
#elif defined(PDP_VEC)
	double hv[4], lv[4];
	_mm256_storeu_pd(hv, hv_);
	_mm256_storeu_pd(lv, lv_);
	for (int j = 0; j < 4; j++) {
		sh = hv[j] > sh ? hv[j] : sh;
		sl = lv[j] < sl ? lv[j] : sl;
	}
#endif
	double xh[2] = {sh > 0 ? sh : -INFINITY, sl < 0 ? -sl : -INFINITY};
	if (valid) {
		memcpy(xh, vh, sizeof xh);
	}
	for (int p = 0; p < 2; p++) {
		S->xhi[p] = xh[p] > S->xhi[p] ? xh[p] : S->xhi[p];
	}
	return 1;
}

/* same_state (pdp_buckets.c), 8 pointers an instruction in the AVX-512 variant */
static int PDP_NAME(same_state)(duckdb_aggregate_state *states, idx_t n) {
#if PDP_VEC == 2
	_Static_assert(sizeof(duckdb_aggregate_state) == 8, "64-bit state pointers");
	const __m512i s0 = _mm512_set1_epi64((long long)(uintptr_t)states[0]);
	__m512i d0 = _mm512_setzero_si512(), d1 = d0;
	idx_t i = 0;
	for (; i + 16 <= n; i += 16) {
		d0 = _mm512_or_si512(d0, _mm512_xor_si512(_mm512_loadu_si512(states + i), s0));
		d1 = _mm512_or_si512(d1, _mm512_xor_si512(_mm512_loadu_si512(states + i + 8), s0));
	}
	int same = _mm512_test_epi64_mask(_mm512_or_si512(d0, d1), _mm512_or_si512(d0, d1)) == 0;
	for (; i < n; i++) {
		same &= states[i] == states[0];
	}
	return same;
#else
	return same_state(states, n);
#endif
}

static void PDP_NAME(update)(duckdb_function_info info, duckdb_data_chunk input, duckdb_aggregate_state *states) {
	idx_t n = duckdb_data_chunk_get_size(input);
	if (n == 0) {
		return;
	}
	const double *col[2];
	uint64_t *valid[2];
	params P;
	int nparts = read_input(info, input, states, &P, col, valid);
	if (!nparts) {
		return;
	}
	int ok = 1;
	state *S0 = (state *)states[0];
	/* the block path for a state past its first FINE_MIN_ROWS rows (its table: up to 2 MB of
	 * address space; a state per group of a grouped call never gets one for fewer rows) */
	if (P.mode != 2 && P.fine_bits && PDP_NAME(same_state)(states, n) && (S0->flat || (S0->seen += n) > FINE_MIN_ROWS)) {
		if (!S0->P.set) {
			S0->P = P;
		}
		ok = PDP_NAME(fast_rows)(S0, col[0], valid[0], n);
	} else {
		for (idx_t i = 0; i < n && ok == 1; i++) {
			state *S = (state *)states[i];
			if (!S->P.set) {
				S->P = P;
			}
			for (int j = 0; j < nparts && ok == 1; j++) {
				if (is_valid(valid[j], i)) { /* NULL: the SQL's w <> 0 / c <> 0 drops it */
					ok = PDP_NAME(one_value)(S, col[j][i], j);
				}
			}
		}
	}
	if (ok != 1) {
		duckdb_aggregate_function_set_error(info, ok == 0 ? "pdp_buckets: out of memory" : "pdp_buckets: beta too small");
	}
}
