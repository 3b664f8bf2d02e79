/* pdp_params.h (part of pdp_buckets.c, which includes it): the release's parameters, the SQL's
 * constants and keys (near_key_sql), DuckDB's order on doubles and the clamp's rule. */
/* the public constants of the SQL (provsql_dp.mechanisms.recursive._framework._CMP_TOL,
 * release._MAX_EXPONENT, buckets._WINDOW) */
#define CMP_TOL 1e-9
#define MAX_EXPONENT 700.0
#define WINDOW 0x1p-46
#define ROW_DOUBLES 9
#define FINE_MAX_BITS 13

/* a row of DuckDB's validity mask (64 rows a word, bit set: valid), inline */
static inline int row_valid(const uint64_t *mask, uint64_t row) {
	return (int)(mask[row >> 6] >> (row & 63) & 1);
}

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
	int fine_bits;         /* the fine cells' mantissa bits (0: no block path; pdp_fine.h) */
	int nparts;            /* the totals a row (the struct's fields: 1 or 2) */
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
	/* the fine cells (direct path only): at least 64 a spacing of the breakpoints, 4 times that
	 * when it fits 2^FINE_MAX_BITS a binade; none below beta ~ 0.0078 */
	P->fine_bits = 0;
	if (P->mode != 2) {
		for (int nb = 1; nb <= FINE_MAX_BITS && !P->fine_bits; nb++) {
			P->fine_bits = ldexp(1.0, -nb) <= expm1(P->beta) / 64 ? (nb + 2 < FINE_MAX_BITS ? nb + 2 : FINE_MAX_BITS) : 0;
		}
	}
	P->cap_min = P->caps[0];
	for (int i = 1; i < 6; i++) {
		P->cap_min = P->caps[i] < P->cap_min ? P->caps[i] : P->cap_min;
	}
	P->set = 1;
}

static uint64_t bits_of(double x) {
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
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
