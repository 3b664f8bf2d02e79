package provsqldp;

import java.io.Serializable;
import java.util.Arrays;

/**
 * BucketPass's aggregation buffer: bucket rows keyed by (p, k, m, e) in an open-addressing table,
 * or (modes 1-3) the totals collected.
 */
final class BucketBuf implements Serializable {
    private static final long serialVersionUID = 1L;
    int size;
    int[] used = new int[64]; // 0 free, 1 taken
    double[] p = new double[64], k = new double[64], m = new double[64], e = new double[64];
    double[] n = new double[64], inv = new double[64], tot = new double[64];
    double[] lo = new double[64], hi = new double[64];
    double[] restN = new double[2], restLo = {Double.NaN, Double.NaN};
    double[] restHi = {Double.NaN, Double.NaN};
    double[] values; // mode > 0: the totals collected
    int count;
    // a direct-mapped memo: a total's bits (the part in the sign bit) → its slot, cleared
    // when the table grows; not serialized (rebuilt by the partition that reads on)
    double[] keys = new double[3]; // scratch: one total's (k, m, e)
    // and how many times it came since it was last folded into its bucket (fold)
    transient long[] memoKey;
    transient int[] memoSlot;
    transient double[] memoCount;

    void clearMemo() {
        if (memoKey == null) {
            memoKey = new long[1 << BucketPass.MEMO_BITS];
            memoSlot = new int[1 << BucketPass.MEMO_BITS];
            memoCount = new double[1 << BucketPass.MEMO_BITS];
        }
        Arrays.fill(memoKey, -1L); // a NaN's bits: never a positive total's
    }

    /** Add the memo's entry h (count × its total) to its bucket, and forget it. */
    void fold(int h) {
        long key = memoKey[h];
        if (key == -1L) {
            return;
        }
        double c = Double.longBitsToDouble(key & Long.MAX_VALUE);
        double times = memoCount[h];
        int i = memoSlot[h];
        n[i] += times;
        inv[i] += times * (1.0 / c);
        tot[i] += times * c;
        if (c < lo[i]) {
            lo[i] = c;
        }
        if (c > hi[i]) {
            hi[i] = c;
        }
        memoKey[h] = -1L;
    }

    /** Fold every entry of the memo (before the table grows, merges or is written). */
    void flush() {
        if (memoKey != null) {
            for (int h = 0; h < memoKey.length; h++) {
                fold(h);
            }
        }
    }

    private void writeObject(java.io.ObjectOutputStream out) throws java.io.IOException {
        flush();
        out.defaultWriteObject();
    }

    int slot(double pp, double kk, double mm, double ee) {
        int mask = used.length - 1;
        // k, m are whole numbers (their doubles' low bits are zeros: hash the integers)
        long h = (long) kk * 0x9E3779B97F4A7C15L + (long) mm * 0xC2B2AE3D27D4EB4FL
                + (long) pp + Double.doubleToRawLongBits(ee);
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        int i = (int) h & mask;
        while (true) {
            if (used[i] == 0) {
                if (2 * (size + 1) > used.length) {
                    grow();
                    return slot(pp, kk, mm, ee);
                }
                used[i] = 1;
                size++;
                p[i] = pp;
                k[i] = kk;
                m[i] = mm;
                e[i] = ee;
                lo[i] = Double.POSITIVE_INFINITY;
                hi[i] = Double.NEGATIVE_INFINITY;
                return i;
            }
            if (k[i] == kk && m[i] == mm && e[i] == ee && p[i] == pp) {
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    private void grow() {
        flush(); // the memo's slots are this table's
        BucketBuf old = copyArrays();
        int cap = used.length * 2;
        used = new int[cap];
        p = new double[cap];
        k = new double[cap];
        m = new double[cap];
        e = new double[cap];
        n = new double[cap];
        inv = new double[cap];
        tot = new double[cap];
        lo = new double[cap];
        hi = new double[cap];
        size = 0;
        for (int j = 0; j < old.used.length; j++) {
            if (old.used[j] != 0) {
                int s = slot(old.p[j], old.k[j], old.m[j], old.e[j]);
                n[s] = old.n[j];
                inv[s] = old.inv[j];
                tot[s] = old.tot[j];
                lo[s] = old.lo[j];
                hi[s] = old.hi[j];
            }
        }
    }

    private BucketBuf copyArrays() {
        BucketBuf b = new BucketBuf();
        b.used = used;
        b.p = p;
        b.k = k;
        b.m = m;
        b.e = e;
        b.n = n;
        b.inv = inv;
        b.tot = tot;
        b.lo = lo;
        b.hi = hi;
        return b;
    }

    void collect(double c) {
        if (values == null) {
            values = new double[16];
        } else if (count == values.length) {
            values = Arrays.copyOf(values, 2 * count);
        }
        values[count++] = c;
    }
}
