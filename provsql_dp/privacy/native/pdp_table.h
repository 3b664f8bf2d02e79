/* pdp_table.h (part of pdp_buckets.c, which includes it): the state, its hash table of buckets
 * (with a direct-mapped cache in front of it) and the coarse cell table of the per-row path. */
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
	/* the block path's fine cells and accumulators (pdp_fine.h), NULL until its first block */
	uint16_t *flat;     /* the fine cells' entries (fine_size), NULL until the first block */
	struct facc *acc;   /* acc_n accumulators of far buckets (e = 0), acc_cap allocated */
	struct fkey *keys;  /* their buckets and the ranges of their cells */
	double xhi[2];      /* the largest total of each part the block code keyed */
	uint32_t acc_n, acc_cap;
	uint32_t *amap;     /* (kp, m) -> accumulator + 1, open addressing, amap_cap slots */
	uint32_t amap_cap;
	uint64_t seen;      /* rows of chunks that could take the block path, until it does */
} state;


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

/* the keys k0, m0 of the total lo and the breakpoints around it (lo >= 1 finite) */
static void cell_at(const params *P, double lo, struct cell *T) {
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

static void cell_init(const params *P, uint64_t i, struct cell *T) {
	int nb = P->cell_bits;
	uint64_t bits = (i + ((uint64_t)1023 << nb)) << (52 - nb);
	double lo;
	memcpy(&lo, &bits, sizeof lo);
	cell_at(P, lo, T);
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

