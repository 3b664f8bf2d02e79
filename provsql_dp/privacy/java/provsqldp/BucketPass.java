package provsqldp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SQLExecution;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.Option;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.expressions.Aggregator;
import org.apache.spark.sql.functions;

/**
 * The unbounded SUM's bucket pass (provsql_dp.privacy.engine_buckets) as one Spark aggregate over
 * the weights {@code w} of a table protected row by row: the same rows {@code (p, k, m, e, n, inv,
 * tot, lo, hi)} that the SQL pass ({@code bucket_sql}, {@code near_sql}, {@code near_key_sql} of
 * provsql_dp.mechanisms.recursive.buckets) groups, computed operation for operation as Spark SQL
 * computes them ({@code ln} is fdlibm's, {@link FdLog}, bit for bit {@code StrictMath.log}; {@code
 * exp} is {@code StrictMath.exp}, as Spark's), in a small open-addressing table per partition:
 * one pass, no allocation per row, and only the bucket rows reach the driver.
 *
 * <p>Per weight {@code w} (NULL, 0 and -0 add nothing, as {@code WHERE w <> 0}): part {@code p =
 * (w < 0)} and total {@code c = |w|} for a signed SUM, else {@code p = 0, c = w}. A total that is
 * not positive and finite (negative, NaN, ±inf) goes to the part's "rest" (count, min, max in
 * Spark's order, NaN above every number): the SQL pass's rows with a NULL {@code k}.
 *
 * <p>The specification is a comma-separated list of doubles written by Python's {@code repr}
 * (parsed back exactly): signed, mode, p, a, b, e, then the constants (see the fields). Mode 0
 * returns the bucket rows; modes 1-3 the totals of one bucket (the safety net's exact read):
 * {@code k = a AND e = 0}, {@code m = a AND e = 0}, {@code k = a AND m = b AND e = e}.
 */
public final class BucketPass extends Aggregator<Double, Object, byte[]> {
    private static final long serialVersionUID = 1L;
    /** doubles per bucket row: p, k, m, e, n, inv, tot, lo, hi, rest (1: NULL k, m) */
    public static final int WIDTH = 10;
    /** log2 of the memo's size (16,384 totals: 320 KB per partition, in the L2 cache) */
    static final int MEMO_BITS = 14;

    private final boolean signed;
    private final int mode;
    private final double fp, fa, fb, fe;
    private final double lnTwoOverTheta; // math.log(2 / θ)
    private final double invBeta; // 1 / β
    private final double lnThetaMu; // math.log(θ) + μ (the lattice's origin)
    private final double beta;
    private final double coef; // 2 (1 + 1e-6) tol
    private final double tol, oneTol, theta, capExp, capEps, window;
    private final double betaLess; // β - 1e-9, as Spark folds the literal
    private final double[] caps; // the lattice indices of Δ̂'s caps (ceil(fm) IN (...))

    public BucketPass(String spec) {
        String[] s = spec.split(",");
        double[] v = new double[s.length];
        for (int i = 0; i < s.length; i++) {
            v[i] = Double.parseDouble(s[i].trim());
        }
        signed = v[0] != 0;
        mode = (int) v[1];
        fp = v[2];
        fa = v[3];
        fb = v[4];
        fe = v[5];
        lnTwoOverTheta = v[6];
        invBeta = v[7];
        lnThetaMu = v[8];
        beta = v[9];
        coef = v[10];
        tol = v[11];
        oneTol = v[12];
        theta = v[13];
        capExp = v[14];
        capEps = v[15];
        window = v[16];
        caps = Arrays.copyOfRange(v, 17, v.length);
        betaLess = beta - 1e-9;
    }

    @Override
    public Object zero() {
        return new BucketBuf();
    }

    @Override
    public Object reduce(Object buffer, Double weight) {
        if (weight != null) {
            weigh((BucketBuf) buffer, weight);
        }
        return buffer;
    }

    /** One non-NULL weight. */
    void weigh(BucketBuf b, double w) {
        if (w != 0) { // WHERE w <> 0 (NaN passes, as in Spark SQL)
            if (signed) {
                add(b, w < 0 ? 1.0 : 0.0, Math.abs(w));
            } else {
                add(b, 0.0, w);
            }
        }
    }

    private void add(BucketBuf b, double p, double c) {
        if (!(c > 0 && c < Double.POSITIVE_INFINITY)) { // ln's guard: a NULL k (the rest)
            if (mode == 0) {
                int i = (int) p;
                b.restN[i] += 1;
                b.restLo[i] = sparkMin(b.restLo[i], c, b.restN[i] == 1);
                b.restHi[i] = sparkMax(b.restHi[i], c, b.restN[i] == 1);
            }
            return;
        }
        if (mode == 0) { // a total seen before has its slot remembered (exact: same bits)
            long key = Double.doubleToRawLongBits(c) ^ (p != 0 ? Long.MIN_VALUE : 0L);
            int h = (int) ((key * 0x9E3779B97F4A7C15L) >>> (64 - MEMO_BITS));
            if (b.memoKey == null) {
                b.clearMemo();
            }
            if (b.memoKey[h] == key) {
                b.memoCount[h] += 1;
                return;
            }
            b.fold(h);
            int i = place(b, p, c); // (a table that grows folds and clears the memo first)
            b.memoKey[h] = key;
            b.memoSlot[h] = i;
            b.memoCount[h] = 1;
            return;
        }
        double[] key = b.keys;
        keys(c, key);
        double k = key[0];
        double cm = key[1];
        double e = key[2];
        if (p == fp && ((mode == 1 && k == fa && e == 0) || (mode == 2 && cm == fa && e == 0)
                || (mode == 3 && k == fa && cm == fb && e == fe))) {
            b.collect(c);
        }
    }

    /** The slot of a positive finite total. */
    private int place(BucketBuf b, double p, double c) {
        double[] key = b.keys;
        keys(c, key);
        return b.slot(p, key[0], key[1], key[2]);
    }

    /** The keys (k, m, e) of a positive finite total into {@code out}, as the SQL pass's. */
    private void keys(double c, double[] out) {
        double l = FdLog.log(c);
        double fk = (l + lnTwoOverTheta) * invBeta;
        double fm = (l - lnThetaMu) * invBeta;
        double ck = Math.ceil(fk);
        double cm = Math.ceil(fm);
        double k = ck - 1;
        double dk = beta * (fk - ck + 1);
        double dm = beta * (fm - cm + 1);
        double e = 0.0;
        if (dk * c <= coef * (c + 0.5) || dk > betaLess || dm < 1e-9 || dm > betaLess
                || c < 1e-8 || isCap(cm)) {
            e = nearKey(c, k, cm);
        }
        out[0] = k;
        out[1] = cm;
        out[2] = e;
    }

    private boolean isCap(double cm) {
        for (double x : caps) {
            if (cm == x) {
                return true;
            }
        }
        return false;
    }

    private double tau(double x) { // numpy's τ_j = exp(j·β)·θ, as near_key_sql writes it
        return StrictMath.exp(x * beta) * theta;
    }

    /** near_key_sql: c itself within the window of a boundary, else its cell's negative code. */
    private double nearKey(double c, double k, double m) {
        double kg = Math.ceil(FdLog.log(Math.max((2.0 * c - tol) / oneTol, 1e-300) / theta)
                * invBeta) - 1;
        double[] bounds = {
            tau(k) / 2.0, tau(k + 1) / 2.0,
            (tau(k - 1) * oneTol + tol) / 2.0, (tau(k) * oneTol + tol) / 2.0,
            (tau(kg) * oneTol + tol) / 2.0, (tau(kg + 1) * oneTol + tol) / 2.0,
            StrictMath.exp(lnThetaMu + beta * (m - 1)), StrictMath.exp(lnThetaMu + beta * m),
        };
        long cell = (c > capExp ? 1 : 0) + (c > capEps ? 1 : 0);
        boolean near = false;
        for (double x : bounds) {
            cell += c > x ? 1 : 0;
            near |= Math.abs(c - x) <= window * c;
        }
        if (near) {
            return c;
        }
        return (double) (-1L - ((long) kg * 16L + cell));
    }

    /** min in Spark's order of doubles (NaN above every number); {@code first}: a is unset */
    private static double sparkMin(double a, double c, boolean first) {
        if (first || Double.isNaN(a)) {
            return c;
        }
        return !Double.isNaN(c) && c < a ? c : a;
    }

    /** max in Spark's order of doubles (NaN above every number); {@code first}: a is unset */
    private static double sparkMax(double a, double c, boolean first) {
        if (first || Double.isNaN(c)) {
            return c;
        }
        return !Double.isNaN(a) && c > a ? c : a;
    }

    @Override
    public Object merge(Object left, Object right) {
        BucketBuf a = (BucketBuf) left;
        BucketBuf b = (BucketBuf) right;
        a.flush();
        b.flush();
        for (int j = 0; j < b.used.length; j++) {
            if (b.used[j] != 0) {
                int i = a.slot(b.p[j], b.k[j], b.m[j], b.e[j]);
                a.n[i] += b.n[j];
                a.inv[i] += b.inv[j];
                a.tot[i] += b.tot[j];
                a.lo[i] = Math.min(a.lo[i], b.lo[j]);
                a.hi[i] = Math.max(a.hi[i], b.hi[j]);
            }
        }
        for (int p = 0; p < 2; p++) {
            if (b.restN[p] > 0) {
                boolean first = a.restN[p] == 0;
                a.restLo[p] = sparkMin(a.restLo[p], b.restLo[p], first);
                a.restHi[p] = sparkMax(a.restHi[p], b.restHi[p], first);
                a.restN[p] += b.restN[p];
            }
        }
        for (int j = 0; j < b.count; j++) {
            a.collect(b.values[j]);
        }
        return a;
    }

    @Override
    public byte[] finish(Object reduction) {
        BucketBuf b = (BucketBuf) reduction;
        b.flush();
        if (mode != 0) {
            ByteBuffer out = ByteBuffer.allocate(8 * b.count).order(ByteOrder.LITTLE_ENDIAN);
            for (int j = 0; j < b.count; j++) {
                out.putDouble(b.values[j]);
            }
            return out.array();
        }
        int rows = b.size + (b.restN[0] > 0 ? 1 : 0) + (b.restN[1] > 0 ? 1 : 0);
        ByteBuffer out = ByteBuffer.allocate(8 * WIDTH * rows).order(ByteOrder.LITTLE_ENDIAN);
        for (int j = 0; j < b.used.length; j++) {
            if (b.used[j] != 0) {
                double[] row = {b.p[j], b.k[j], b.m[j], b.e[j], b.n[j], b.inv[j], b.tot[j],
                    b.lo[j], b.hi[j], 0.0};
                for (double x : row) {
                    out.putDouble(x);
                }
            }
        }
        for (int p = 0; p < 2; p++) {
            if (b.restN[p] > 0) {
                double[] row = {p, 0, 0, 0, b.restN[p], 0, 0, b.restLo[p], b.restHi[p], 1.0};
                for (double x : row) {
                    out.putDouble(x);
                }
            }
        }
        return out.array();
    }

    @Override
    public Encoder<Object> bufferEncoder() {
        // Object, not Buf: the encoder's generated code names only JDK classes, so it compiles
        // whichever class loader holds this jar (the buffer itself is Java-serialized)
        return Encoders.javaSerialization(Object.class);
    }

    @Override
    public Encoder<byte[]> outputEncoder() {
        return Encoders.BINARY();
    }

    /**
     * The pass over the first column (DOUBLE) of a query's rows, read as Spark's internal rows
     * (no conversion per row): one table per partition, its rows (bytes) merged on the driver.
     */
    public static byte[] runRows(QueryExecution qe, String spec) {
        BucketPass agg = new BucketPass(spec);
        JavaRDD<InternalRow> rows = qe.toRdd().toJavaRDD();
        List<byte[]> parts = SQLExecution.withNewExecutionId(qe, Option.empty(),
                () -> rows.mapPartitions(new BucketReads.Partition(agg)).collect());
        BucketBuf all = new BucketBuf();
        for (byte[] part : parts) {
            agg.absorb(all, part);
        }
        return agg.finish(all);
    }

    /**
     * The pass over a bare numeric column of a Parquet scan, read from its columnar batches
     * (no row per value), each value clamped to {@code [lo, hi]} as {@code clamp_sql} does
     * (NaN, ±inf: NULL); {@code column} is that column's query ({@code SELECT col FROM t}).
     * Where Spark does not read it as columnar batches of a primitive type, the pass runs over
     * {@code weights}' rows ({@link #runRows}): the same rows either way.
     */
    public static byte[] runColumn(QueryExecution column, QueryExecution weights, String spec,
                                   double lo, double hi) {
        SparkPlan root = column.executedPlan();
        SparkPlan scan = root instanceof WholeStageCodegenExec
                ? ((WholeStageCodegenExec) root).child() : root;
        if (scan instanceof ProjectExec && BucketReads.renames((ProjectExec) scan)) {
            scan = ((ProjectExec) scan).child();
        }
        scan = scan instanceof ColumnarToRowExec ? ((ColumnarToRowExec) scan).child() : null;
        int type = scan == null || !scan.supportsColumnar() || scan.output().size() != 1 ? -1
                : BucketReads.Batches.typeOf(scan.output().head().dataType());
        if (type < 0) {
            return runRows(weights, spec);
        }
        BucketPass agg = new BucketPass(spec);
        JavaRDD<ColumnarBatch> batches = scan.executeColumnar().toJavaRDD();
        BucketReads.Batches read = new BucketReads.Batches(agg, type, lo, hi);
        List<byte[]> parts = SQLExecution.withNewExecutionId(column, Option.empty(),
                () -> batches.mapPartitions(read).collect());
        BucketBuf all = new BucketBuf();
        for (byte[] part : parts) {
            agg.absorb(all, part);
        }
        return agg.finish(all);
    }

    /** Merge the rows {@link #finish} wrote (of another partition) into {@code a}. */
    void absorb(BucketBuf a, byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        if (mode != 0) {
            while (in.remaining() > 0) {
                a.collect(in.getDouble());
            }
            return;
        }
        BucketBuf b = new BucketBuf();
        while (in.remaining() > 0) {
            double[] r = new double[WIDTH];
            for (int j = 0; j < WIDTH; j++) {
                r[j] = in.getDouble();
            }
            int p = (int) r[0];
            if (r[9] != 0) {
                b.restN[p] = r[4];
                b.restLo[p] = r[7];
                b.restHi[p] = r[8];
                continue;
            }
            int i = b.slot(r[0], r[1], r[2], r[3]);
            b.n[i] = r[4];
            b.inv[i] = r[5];
            b.tot[i] = r[6];
            b.lo[i] = r[7];
            b.hi[i] = r[8];
        }
        merge(a, b);
    }

    /** The pass over column {@code column} (DOUBLE) of {@code df}: its one result, as bytes. */
    public static byte[] run(Dataset<Row> df, String column, String spec) {
        Column agg = functions.udaf(new BucketPass(spec), Encoders.DOUBLE())
                .apply(functions.col(column));
        Row row = df.agg(agg).first();
        return row.isNullAt(0) ? new byte[0] : (byte[]) row.get(0);
    }
}
