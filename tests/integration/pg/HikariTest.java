// HikariCP (Debian's libhikaricp-java) over pgjdbc against leasegate's
// PostgreSQL port, or any server given by PGHOST, PGPORT, PGUSER,
// PGPASSWORD, PGDATABASE. A single-file program:
//   java -cp postgresql.jar:HikariCP.jar:slf4j-api.jar:slf4j-nop.jar HikariTest.java
// A pool of 10 validated by isValid (JDBC4), another by a
// connectionTestQuery; advisory locks from 10 threads at once; pgjdbc's
// prepareThreshold switching a statement to a server-side one. Prints one
// `ok`/`not ok` line per check.
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.*;
import java.util.*;
import java.util.concurrent.*;
import org.postgresql.PGStatement;

public class HikariTest {
    static final String D = "hikari";
    static final long K = 7200; // this program's keys: 7200..7229

    static void check(String what, Object got, Object want) {
        if (Objects.equals(got, want)) System.out.println("ok " + D + ": " + what);
        else System.out.println("not ok " + D + ": " + what + ": got " + got + ", want " + want);
    }

    static String env(String k, String d) {
        String v = System.getenv(k);
        return v == null || v.isEmpty() ? d : v;
    }

    static HikariDataSource pool(String testQuery, int threshold) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl("jdbc:postgresql://" + env("PGHOST", "127.0.0.1") + ":" + env("PGPORT", "5432")
                + "/" + env("PGDATABASE", "locks"));
        c.setUsername(env("PGUSER", "leasegate"));
        c.setPassword(env("PGPASSWORD", ""));
        c.setMaximumPoolSize(10);
        c.setMinimumIdle(10);
        c.setConnectionTimeout(10000);
        if (testQuery != null) c.setConnectionTestQuery(testQuery);
        c.addDataSourceProperty("prepareThreshold", Integer.toString(threshold));
        return new HikariDataSource(c);
    }

    static Object one(Connection c, String sql, Object... args) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getObject(1);
            }
        }
    }

    public static void main(String[] argv) throws Exception {
        try (HikariDataSource ds = pool(null, 5)) {
            // 10 threads, one pooled connection each: one of them wins the
            // shared key; each takes and releases a key of its own
            ExecutorService ex = Executors.newFixedThreadPool(10);
            CyclicBarrier start = new CyclicBarrier(10);
            List<Future<Boolean>> won = new ArrayList<>();
            for (int t = 0; t < 10; t++) {
                final long own = K + 10 + t;
                won.add(ex.submit(() -> {
                    try (Connection c = ds.getConnection()) {
                        start.await();
                        boolean w = (Boolean) one(c, "SELECT pg_try_advisory_lock(?)", K);
                        one(c, "SELECT pg_advisory_lock(?)", own);
                        start.await(); // every thread holds its own lock and tried K
                        if (!(Boolean) one(c, "SELECT pg_advisory_unlock(?)", own))
                            throw new IllegalStateException("own lock not held");
                        if (w) one(c, "SELECT pg_advisory_unlock(?)", K);
                        return w;
                    }
                }));
            }
            int winners = 0;
            for (Future<Boolean> f : won) winners += f.get(30, TimeUnit.SECONDS) ? 1 : 0;
            ex.shutdown();
            check("10 threads on a pool of 10: exactly one wins pg_try_advisory_lock, each "
                    + "its own pg_advisory_lock", winners, 1);
            check("the pool holds 10 connections", ds.getHikariPoolMXBean().getTotalConnections(),
                    10);
            try (Connection c = ds.getConnection()) {
                check("isValid (JDBC4 validation, Hikari's default)", c.isValid(2), true);
                try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
                    boolean all = true;
                    for (int i = 0; i < 7; i++) {
                        ps.setLong(1, K + 1);
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            all &= rs.getBoolean(1);
                        }
                    }
                    check("a PreparedStatement run 7 times (reentrant: all true)", all, true);
                    check("... past prepareThreshold 5: server-side prepared",
                            ps.unwrap(PGStatement.class).isUseServerPrepare(), true);
                }
                for (int i = 0; i < 7; i++) one(c, "SELECT pg_advisory_unlock(?)", K + 1);
                check("released 7 times: free", one(c, "SELECT pg_try_advisory_lock(?)", K + 2),
                        true);
                one(c, "SELECT pg_advisory_unlock(?)", K + 2);
            }
        }
        try (HikariDataSource ds = pool("SELECT 1", 1)) {
            try (Connection c = ds.getConnection()) {
                check("connectionTestQuery SELECT 1, prepareThreshold 1: a lock",
                        one(c, "SELECT pg_try_advisory_lock(?)", K + 3), true);
                c.setAutoCommit(false);
                check("pg_try_advisory_xact_lock with autocommit off",
                        one(c, "SELECT pg_try_advisory_xact_lock(?)", K + 4), true);
                c.commit();
                check("getTransactionIsolation (SHOW TRANSACTION ISOLATION LEVEL)",
                        c.getTransactionIsolation(), Connection.TRANSACTION_READ_COMMITTED);
                c.setAutoCommit(true);
                check("the xact lock went at COMMIT",
                        one(c, "SELECT pg_advisory_unlock(?)", K + 3), true);
            }
        }
    }
}
