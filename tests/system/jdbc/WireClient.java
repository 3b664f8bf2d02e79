// A JDBC client of the provsql_dp wire server (tests/system/test_pgwire_jdbc.py): each argument
// after the URL, user and password is one SQL statement, run as a PreparedStatement (JDBC's
// extended query protocol) — "?" parameters are bound from "||"-separated values after the SQL.
// Prints the columns, each row, and for a failure "ERROR <SQLSTATE> <message>"; then the tables
// DatabaseMetaData lists, and the columns of the table named by -Dcolumns=NAME. -Drepeat=N runs each
// statement N times and prints the last run (past 5 runs JDBC prepares it on the server and asks
// for binary results).
import java.sql.*;

public class WireClient {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            int repeat = Integer.getInteger("repeat", 1);
            int fetch = Integer.getInteger("fetch", 0);  // > 0: rows in batches (Execute with max_rows)
            if (fetch > 0) c.setAutoCommit(false);
            for (int i = 3; i < args.length; i++) {
                String[] parts = args[i].split("\\|\\|");
                try (PreparedStatement ps = c.prepareStatement(parts[0])) {
                    if (fetch > 0) ps.setFetchSize(fetch);
                    if (Boolean.getBoolean("count")) {
                        ResultSet rs = ps.executeQuery();
                        long n = 0, last = -1;
                        while (rs.next()) { n++; last = rs.getLong(1); }
                        System.out.println("COUNTED " + n + " LAST " + last);
                        continue;
                    }
                    for (int p = 1; p < parts.length; p++) ps.setObject(p, parse(parts[p]));
                    for (int r = 1; r < repeat; r++) ps.executeQuery().close();
                    if (ps.execute()) {
                        ResultSet rs = ps.getResultSet();
                        ResultSetMetaData md = rs.getMetaData();
                        StringBuilder head = new StringBuilder("COLUMNS");
                        for (int k = 1; k <= md.getColumnCount(); k++)
                            head.append(' ').append(md.getColumnLabel(k)).append(':').append(md.getColumnTypeName(k));
                        System.out.println(head);
                        while (rs.next()) {
                            StringBuilder row = new StringBuilder("ROW");
                            for (int k = 1; k <= md.getColumnCount(); k++) row.append(' ').append(rs.getObject(k));
                            System.out.println(row);
                        }
                    } else {
                        System.out.println("OK " + ps.getUpdateCount());
                    }
                } catch (SQLException e) {
                    System.out.println("ERROR " + e.getSQLState() + " " + e.getMessage().split("\n")[0]);
                }
            }
            DatabaseMetaData meta = c.getMetaData();
            try (ResultSet rs = meta.getTables(null, null, "%", new String[] {"TABLE"})) {
                while (rs.next()) System.out.println("TABLE " + rs.getString("TABLE_SCHEM") + "." + rs.getString("TABLE_NAME"));
            } catch (SQLException e) {
                System.out.println("ERROR " + e.getSQLState() + " getTables: " + e.getMessage().split("\n")[0]);
            }
            String table = System.getProperty("columns");
            if (table != null) {
                try (ResultSet rs = meta.getColumns(null, null, table, "%")) {
                    while (rs.next()) System.out.println("COLUMN " + rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME"));
                } catch (SQLException e) {
                    System.out.println("ERROR " + e.getSQLState() + " getColumns: " + e.getMessage().split("\n")[0]);
                }
            }
        }
    }

    static Object parse(String v) {
        try { return Integer.valueOf(v); } catch (NumberFormatException e) { return v; }
    }
}
