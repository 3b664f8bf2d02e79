package provsqldp;

import java.util.Collections;
import java.util.Iterator;

import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * How {@link BucketPass} reads one partition on the executors: Spark's internal rows
 * ({@link Partition}) or a Parquet scan's columnar batches ({@link Batches}).
 */
final class BucketReads {
    private BucketReads() {
    }

    /**
     * A projection of one column, renamed or cast to DOUBLE (as Java converts it: the batches
     * are read with the scan's own type), nothing else computed.
     */
    static boolean renames(ProjectExec p) {
        if (p.projectList().size() != 1) {
            return false;
        }
        NamedExpression e = p.projectList().head();
        if (e instanceof AttributeReference) {
            return true;
        }
        if (!(e instanceof Alias)) {
            return false;
        }
        org.apache.spark.sql.catalyst.expressions.Expression x = ((Alias) e).child();
        if (x instanceof Cast && ((Cast) x).dataType() instanceof DoubleType) {
            x = ((Cast) x).child();
        }
        return x instanceof AttributeReference;
    }

    /** One partition's pass over columnar batches (runs on the executors). */
    static final class Batches implements FlatMapFunction<Iterator<ColumnarBatch>, byte[]> {
        private static final long serialVersionUID = 1L;
        private final BucketPass agg;
        private final int type;
        private final double lo, hi;

        Batches(BucketPass agg, int type, double lo, double hi) {
            this.agg = agg;
            this.type = type;
            this.lo = lo;
            this.hi = hi;
        }

        /** 0 int, 1 long, 2 double, 3 float, 4 short, 5 byte; -1: not read here */
        static int typeOf(DataType t) {
            return t instanceof IntegerType ? 0 : t instanceof LongType ? 1
                    : t instanceof DoubleType ? 2 : t instanceof FloatType ? 3
                    : t instanceof ShortType ? 4 : t instanceof ByteType ? 5 : -1;
        }

        @Override
        public Iterator<byte[]> call(Iterator<ColumnarBatch> it) {
            BucketBuf b = new BucketBuf();
            while (it.hasNext()) {
                ColumnarBatch batch = it.next();
                ColumnVector v = batch.column(0);
                int n = batch.numRows();
                boolean nulls = v.hasNull();
                for (int i = 0; i < n; i++) {
                    if (nulls && v.isNullAt(i)) {
                        continue;
                    }
                    double x;
                    switch (type) {
                        case 0: x = v.getInt(i); break;
                        case 1: x = (double) v.getLong(i); break;
                        case 2: x = v.getDouble(i); break;
                        case 3: x = v.getFloat(i); break;
                        case 4: x = v.getShort(i); break;
                        default: x = v.getByte(i); break;
                    }
                    // clamp_sql: NaN (above every number in Spark), ±inf → NULL
                    if (x > hi || Double.isNaN(x)) {
                        if (x < Double.POSITIVE_INFINITY) {
                            agg.weigh(b, hi);
                        }
                    } else if (x < lo) {
                        if (x > Double.NEGATIVE_INFINITY) {
                            agg.weigh(b, lo);
                        }
                    } else {
                        agg.weigh(b, x);
                    }
                }
            }
            return Collections.singletonList(agg.finish(b)).iterator();
        }
    }

    /** One partition's pass (serializable: it runs on the executors). */
    static final class Partition implements FlatMapFunction<Iterator<InternalRow>, byte[]> {
        private static final long serialVersionUID = 1L;
        private final BucketPass agg;

        Partition(BucketPass agg) {
            this.agg = agg;
        }

        @Override
        public Iterator<byte[]> call(Iterator<InternalRow> it) {
            BucketBuf b = new BucketBuf();
            while (it.hasNext()) {
                InternalRow row = it.next();
                if (!row.isNullAt(0)) {
                    agg.weigh(b, row.getDouble(0));
                }
            }
            return Collections.singletonList(agg.finish(b)).iterator();
        }
    }
}
