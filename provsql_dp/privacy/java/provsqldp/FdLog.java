package provsqldp;

/**
 * fdlibm's {@code __ieee754_log} (e_log.c) in Java: the natural logarithm that
 * {@code java.lang.StrictMath.log} — Spark SQL's {@code ln} — is specified to return, bit for bit,
 * without StrictMath's native call per value (JDK 17; a port like this one became StrictMath's
 * own in JDK 21). The bucket pass computes its keys with it so that they equal Spark SQL's
 * exactly; {@link #main} checks it against StrictMath on random doubles.
 *
 * <p>Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved. Developed at SunSoft, a Sun
 * Microsystems, Inc. business. Permission to use, copy, modify, and distribute this software is
 * freely granted, provided that this notice is preserved.
 */
public final class FdLog {
    private FdLog() {}

    private static final double LN2_HI = 6.93147180369123816490e-01; // 3fe62e42 fee00000
    private static final double LN2_LO = 1.90821492927058770002e-10; // 3dea39ef 35793c76
    private static final double TWO54 = 1.80143985094819840000e+16; // 43500000 00000000
    private static final double LG1 = 6.666666666666735130e-01;
    private static final double LG2 = 3.999999999940941908e-01;
    private static final double LG3 = 2.857142874366239149e-01;
    private static final double LG4 = 2.222219843214978396e-01;
    private static final double LG5 = 1.818357216161805012e-01;
    private static final double LG6 = 1.531383769920937332e-01;
    private static final double LG7 = 1.479819860511658591e-01;

    static double log(double x) {
        long bits = Double.doubleToRawLongBits(x);
        int hx = (int) (bits >> 32);
        int lx = (int) bits;
        int k = 0;
        if (hx < 0x00100000) { // x < 2^-1022
            if (((hx & 0x7fffffff) | lx) == 0) {
                return Double.NEGATIVE_INFINITY; // log(±0) = -inf
            }
            if (hx < 0) {
                return (x - x) / 0.0; // log(negative) = NaN
            }
            k -= 54;
            x *= TWO54; // subnormal: scale up
            hx = (int) (Double.doubleToRawLongBits(x) >> 32);
        }
        if (hx >= 0x7ff00000) {
            return x + x;
        }
        k += (hx >> 20) - 1023;
        hx &= 0x000fffff;
        int i = (hx + 0x95f64) & 0x100000;
        // normalise x or x/2: set the high word
        x = Double.longBitsToDouble(((long) (hx | (i ^ 0x3ff00000)) << 32)
                | (Double.doubleToRawLongBits(x) & 0xffffffffL));
        k += (i >> 20);
        double f = x - 1.0;
        double dk;
        double r;
        if ((0x000fffff & (2 + hx)) < 3) { // |f| < 2^-20
            if (f == 0.0) {
                if (k == 0) {
                    return 0.0;
                }
                dk = k;
                return dk * LN2_HI + dk * LN2_LO;
            }
            r = f * f * (0.5 - 0.33333333333333333 * f);
            if (k == 0) {
                return f - r;
            }
            dk = k;
            return dk * LN2_HI - ((r - dk * LN2_LO) - f);
        }
        double s = f / (2.0 + f);
        dk = k;
        double z = s * s;
        i = hx - 0x6147a;
        double w = z * z;
        int j = 0x6b851 - hx;
        double t1 = w * (LG2 + w * (LG4 + w * LG6));
        double t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
        i |= j;
        r = t2 + t1;
        if (i > 0) {
            double hfsq = 0.5 * f * f;
            if (k == 0) {
                return f - (hfsq - s * (hfsq + r));
            }
            return dk * LN2_HI - ((hfsq - (s * (hfsq + r) + dk * LN2_LO)) - f);
        }
        if (k == 0) {
            return f - s * (f - r);
        }
        return dk * LN2_HI - ((s * (f - r) - dk * LN2_LO) - f);
    }

    /** Check {@link #log} against StrictMath.log (the build runs it once). */
    public static void main(String[] args) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(20261129L);
        double[] special = {Double.MIN_VALUE, 1e-310, 1e-300, 0.5, 1.0, 2.0, Math.E, 1e300,
            Double.MAX_VALUE, Math.nextUp(1.0), Math.nextDown(1.0)};
        for (double x : special) {
            check(x);
        }
        for (int i = 0; i < 2_000_000; i++) {
            double x = Double.longBitsToDouble(r.nextLong() & 0x7fefffffffffffffL);
            check(x);
            check(1.0 + (r.nextDouble() - 0.5) * 1e-4);
            check(r.nextDouble() * 1e6);
        }
        System.out.println("ok");
    }

    private static void check(double x) {
        if (Double.doubleToRawLongBits(log(x))
                != Double.doubleToRawLongBits(StrictMath.log(x))) {
            throw new AssertionError("FdLog.log(" + x + ") differs from StrictMath.log");
        }
    }
}
